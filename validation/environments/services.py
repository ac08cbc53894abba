"""Local stand-ins for the network services a project's tests talk to, on the run's loopback.

Runs have no network. Some test suites talk to a service by a URL the environment gives them:
requests' tests read ``HTTPBIN_URL`` (default ``http://httpbin.org/``), and without the network
every such test fails on both sides (SWE-bench's runs had the network: its lists have them
passing). A spec names the services its runs get (``services = ["httpbin"]``); unset, they are
inferred from the test files the test patch touches (:func:`inferred`). Each run then starts
behind a shim (:data:`SHIM`, ``services_shim.py``) that serves each of them on the loopback of
the run's own network namespace (the sandbox's, the container's), exports its variable, runs the
tests and stops the service: the network stays off, and nothing outlives the run.

A service's code comes from a package installed with the environment (:data:`PACKAGES`:
httpbin's own app from the ``httpbin`` distribution), resolved with everything else — a bare
name, so beside pinned packages an optional addition (``environment.optional_additions``),
left out and named when it cannot be installed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from validation.environments.runtime import RuntimeFiles

VERSION = 1
"""Part of every result key: bump when what a run's services are or do changes."""

SHIM = RuntimeFiles("validation.environments", (("_swt_services.py", "services_shim.py"),))

PACKAGES = {"httpbin": ("httpbin",)}
"""Service → the distributions that serve it (installed with the environment)."""
KNOWN = tuple(sorted(PACKAGES))

_USES = {"httpbin": re.compile(r"\bHTTPBIN_URL\b")}
"""Service → what in a test file shows that its tests reach the service by its variable."""


def shim(folder: str, services: Iterable[str], command: list[str]) -> list[str]:
    """``command`` behind the services shim, which the run has in ``folder``
    (``Session.provide``); ``python`` is the environment's, first on PATH."""
    return ["python", f"{folder}/{SHIM.script}", ",".join(services), *command]


def inferred(mirror: Path, commit: str, test_patch: str, files: Iterable[str]) -> tuple[str, ...]:
    """The services the test files ``files`` use, at ``commit`` or in what ``test_patch``
    adds to them."""
    texts = [_added_lines(test_patch)]
    for name in sorted(set(files)):
        shown = subprocess.run(
            ["git", "show", f"{commit}:{name}"], cwd=mirror, capture_output=True, check=False
        )
        if shown.returncode == 0:
            texts.append(shown.stdout.decode("utf-8", "replace"))
    text = "\n".join(texts)
    return tuple(service for service, uses in sorted(_USES.items()) if uses.search(text))


def packages(services: Iterable[str]) -> tuple[str, ...]:
    """The distributions the services need installed."""
    return tuple(package for service in services for package in PACKAGES[service])


def patched_files(patch: str) -> list[str]:
    """The paths a patch changes (its ``diff --git`` headers' new side)."""
    return sorted(set(re.findall(r"^diff --git a/\S+ b/(\S+)$", patch, flags=re.MULTILINE)))


def _added_lines(patch: str) -> str:
    return "\n".join(
        line[1:]
        for line in patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )


__all__ = ["KNOWN", "PACKAGES", "SHIM", "VERSION", "inferred", "packages", "patched_files", "shim"]
