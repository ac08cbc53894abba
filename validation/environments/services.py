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

Tests may instead take httpbin from pytest-httpbin's fixtures (``httpbin``, ``httpbin_secure``,
…: requests' conftest.py wraps ``httpbin``), which the plugin serves on the loopback itself (no
shim): when the touched test files or the conftest.py files above them use one
(:func:`fixture_plugins`), the resolution adds the plugin as an optional package
(``EnvironmentSpec.optional_packages``) unless the environment names it already.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from validation.environments.runtime import RuntimeFiles

VERSION = 2
"""Part of every result key: bump when what a run's services are or do changes.
2: pytest-httpbin, optional, for tests that use its fixtures."""

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
        texts.append(_show(mirror, commit, name))
    text = "\n".join(texts)
    return tuple(service for service, uses in sorted(_USES.items()) if uses.search(text))


FIXTURE_PLUGINS = {
    "pytest-httpbin": ("httpbin", "httpbin_secure", "httpbin_both", "httpbin_ca_bundle"),
}
"""pytest plugin → the fixtures it provides that serve a service on the loopback."""

_DEF = re.compile(r"\bdef\s+(\w+)\s*\(([^)]*)\)")
_USEFIXTURES = re.compile(r"\busefixtures\s*\(([^)]*)\)")
_QUOTED = re.compile(r"""['"](\w+)['"]""")


def fixture_plugins(
    mirror: Path, commit: str, test_patch: str, files: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """The plugins of :data:`FIXTURE_PLUGINS` whose fixtures the test files ``files`` or the
    conftest.py files above them use (at ``commit`` or in what ``test_patch`` adds), each with
    the files that use them. A fixture is used as a parameter of a function (a test, another
    fixture: ``def httpbin(httpbin)`` wraps the plugin's) or in ``usefixtures(…)``; one the
    project defines itself (``def httpbin():``, not wrapping) is its own, no plugin's. Read as
    text, not parsed: a file may be Python 2, the patch's lines fragments."""
    added = _added_by_file(test_patch)
    texts = {}
    for name in _with_conftests(files):
        text = _show(mirror, commit, name) + "\n" + added.get(name, "")
        if text.strip():
            texts[name] = text
    own = set().union(*(_defined(text) for text in texts.values()))
    found = {}
    for plugin, fixtures in sorted(FIXTURE_PLUGINS.items()):
        wanted = set(fixtures) - own
        where = tuple(name for name, text in sorted(texts.items()) if _used(text) & wanted)
        if where:
            found[plugin] = where
    return found


def _with_conftests(files: Iterable[str]) -> list[str]:
    """``files`` and the conftest.py of every folder above each, up to the repository's root."""
    names = set(files)
    for name in list(names):
        parent = Path(name).parent
        while True:
            names.add((parent / "conftest.py").as_posix())
            if parent == parent.parent:
                break
            parent = parent.parent
    return sorted(names)


def _used(text: str) -> set[str]:
    used = {_parameter(p) for _, parameters in _DEF.findall(text) for p in parameters.split(",")}
    for arguments in _USEFIXTURES.findall(text):
        used |= set(_QUOTED.findall(arguments))
    return used


def _defined(text: str) -> set[str]:
    """Functions the text defines that do not take a parameter of their own name."""
    return {
        name
        for name, parameters in _DEF.findall(text)
        if name not in {_parameter(p) for p in parameters.split(",")}
    }


def _parameter(text: str) -> str:
    return text.split(":")[0].split("=")[0].strip().lstrip("*")


def _show(mirror: Path, commit: str, name: str) -> str:
    shown = subprocess.run(
        ["git", "show", f"{commit}:{name}"], cwd=mirror, capture_output=True, check=False
    )
    return shown.stdout.decode("utf-8", "replace") if shown.returncode == 0 else ""


def _added_by_file(patch: str) -> dict[str, str]:
    """The lines ``patch`` adds, by the path they are added to."""
    added: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in patch.splitlines():
        header = re.match(r"^diff --git a/\S+ b/(\S+)$", line)
        if header:
            lines = added.setdefault(header.group(1), [])
        elif line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return {name: "\n".join(text) for name, text in added.items()}


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


__all__ = [
    "FIXTURE_PLUGINS", "KNOWN", "PACKAGES", "SHIM", "VERSION", "fixture_plugins", "inferred",
    "packages", "patched_files", "shim",
]  # fmt: skip
