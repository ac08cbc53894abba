"""Which Pythons have the standard-library modules a golden test patch starts to import.

A golden test that imports ``tomllib`` (3.11+) fails on any older Python whatever the fix: a
Python chosen among the project's (the median of its CI's) must have it. Read from the lines the
test patch adds at module level (``import x``, ``from x import y``), for the modules of
``stdlib_versions.toml`` only; a module the test file imported before is the project's own
business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import tomllib
from packaging.version import Version

_DATA = tomllib.loads(Path(__file__).with_name("stdlib_versions.toml").read_text("utf-8"))
ADDED: dict[str, str] = _DATA["added"]
"""Module → the first minor version that has it."""
REMOVED: dict[str, str] = _DATA["removed"]
"""Module → the last minor version that has it."""

_IMPORT = re.compile(r"^\+(?:import|from)\s+([A-Za-z_]\w*)")


def needed_modules(test_patch: str) -> list[str]:
    """The modules of the data that lines the patch adds at module level import, sorted."""
    found = {
        match.group(1)
        for line in test_patch.splitlines()
        if (match := _IMPORT.match(line)) and match.group(1) in ADDED.keys() | REMOVED.keys()
    }
    return sorted(found)


def has_modules(python: str, modules: Iterable[str]) -> bool:
    """Whether Python ``python`` (``X.Y``) has every one of ``modules``."""
    version = Version(python)
    return all(
        (module not in ADDED or version >= Version(ADDED[module]))
        and (module not in REMOVED or version <= Version(REMOVED[module]))
        for module in modules
    )


def able(pythons: Iterable[str], modules: Iterable[str]) -> list[str]:
    """The ``pythons`` that have ``modules``; all of them when none does (the runs then show
    what is missing)."""
    pythons, modules = list(pythons), list(modules)
    kept = [python for python in pythons if has_modules(python, modules)]
    return kept or pythons
