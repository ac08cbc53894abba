"""Test ids that look like data of the machine that ran them, flagged before a release."""

from __future__ import annotations

import re
from collections.abc import Iterable

from builder.core.records import Instance

HOST_ROOTS = frozenset(
    ["home", "root", "Users", "work", "workspace", "builds", "opt", "srv", "var", "mnt", "media",
     "private", "Volumes", "run", "snap", "nix", "data", "scratch", "github"]
)  # fmt: skip
"""First folders of absolute paths where a machine keeps its own data (homes, work and build
dirs, mounts, caches): a path under one is likely the machine's. Any other first folder is not
flagged: URL paths in parametrize ids (``/foo/bar`` of a routing test) and the folders every
machine has alike (``/usr/lib``, ``/tmp``) say nothing of the machine."""

_PATH = re.compile(r"(?:^|[^\w.<>/])/([\w.-]+)/[\w.-]")
"""An absolute path of two parts or more, not inside a longer word, a path or a placeholder."""
_HEX_TOKEN = re.compile(r"(?:^|[^0-9A-Fa-f])([0-9a-f]{32})(?:$|[^0-9A-Fa-f])")
"""32 hexadecimal digits alone: what ``/etc/machine-id`` and ``boot_id`` (without dashes) hold."""
SHOWN = 20
"""Flagged ids named in the warning; the rest are counted."""


def looks_like_host_data(test_id: str) -> str | None:
    """Why ``test_id`` looks like data of the machine, or None. A test id is written by the
    test process: a channel from the code under test into every split. Validation puts
    placeholders for the run's own places (``validation/runs/test_ids``); this looks at what
    is left for what only a machine would know: an absolute path under a folder where machines
    keep their own data (:data:`HOST_ROOTS`), a 32-hex token shaped like ``/etc/machine-id`` or
    a boot id."""
    for found in _PATH.finditer(test_id):
        if found.group(1) in HOST_ROOTS:
            return f"an absolute path under /{found.group(1)}"
    if _HEX_TOKEN.search(test_id):
        return "a 32-hex token, shaped like a machine id"
    return None


def flagged_ids(instances: Iterable[Instance]) -> list[tuple[str, str, str]]:
    """``(instance_id, test_id, why)`` for each label that looks like data of the machine,
    in instance and id order."""
    found = []
    for instance in sorted(instances, key=lambda i: i.instance_id):
        for test_id in sorted({*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS}):
            why = looks_like_host_data(test_id)
            if why is not None:
                found.append((instance.instance_id, test_id, why))
    return found


def warning(flagged: list[tuple[str, str, str]]) -> str:
    """The lines the build prints for ``flagged`` ids (empty: none)."""
    if not flagged:
        return ""
    lines = [
        f"warning: {len(flagged)} test id(s) look like data of the machine that ran them; "
        "check them before publishing (stats.json: flagged_test_ids):"
    ]
    lines += [f"  {instance}: {test_id!r} ({why})" for instance, test_id, why in flagged[:SHOWN]]
    if len(flagged) > SHOWN:
        lines.append(f"  … and {len(flagged) - SHOWN} more")
    return "\n".join(lines)
