"""What a rebuild needs to give a release's bytes again: toolkit, writers, platform, envs."""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from builder.core import __version__
from builder.core.records import Instance

WRITERS = ("datasets", "pyarrow", "matplotlib")
"""The libraries whose versions shape the files' bytes: the parquet files (datasets, pyarrow)
and the figures (matplotlib)."""


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def rebuild_facts(instances: Sequence[Instance]) -> dict[str, Any]:
    """The toolkit's version, the builder's Python (``X.Y``) and platform (OS and machine: the
    tests ran there, and an instance's lists can depend on the processor), the writers'
    versions, and each environment the instances were validated in
    (backend, environment key, Python, spec): the same records, configuration and store inputs
    give the same bytes where these are the same. No host name, path or date."""
    environments = sorted(
        {
            (
                meta.get("backend", ""),
                meta.get("environment", ""),
                meta.get("python", ""),
                meta.get("environment_spec", ""),
            )
            for meta in (instance.run_metadata for instance in instances)
        }
    )
    return {
        "toolkit_version": __version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "platform": f"{sys.platform}-{platform.machine() or 'unknown'}",
        "writers": {name: _version(name) for name in WRITERS},
        "environments": [
            {"backend": backend, "key": key, "python": python, "spec": spec}
            for backend, key, python, spec in environments
        ],
    }


def facts_markdown(facts: dict[str, Any]) -> str:
    """The facts as the card's "Reproduce" section lists them."""
    writers = ", ".join(f"{name} {version}" for name, version in sorted(facts["writers"].items()))
    lines = [
        f"Built by swt-builder {facts['toolkit_version']} on Python {facts['python']}, "
        f"{facts['platform']} (files written with {writers}). A build of the same records "
        "with the same configuration and these versions gives the same bytes, in any work dir "
        "(a test id names no path of the machine that ran it: the checkout, environment, "
        "interpreter, home, temp and work dirs are placeholders such as `<testbed>` and "
        "`<env>`). `manifest.json` holds these facts under `reproduce`.",
        "",
        "| backend | environment key | Python | spec |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {env['backend']} | `{env['key']}` | {env['python']} | {env['spec'] or 'inferred'} |"
        for env in facts["environments"]
    ]
    return "\n".join(lines) + "\n"
