"""Log parsers for runners without a structured report: Django's runner, sympy's bin/test, unittest.

Each parser turns a run's verbose log into statuses keyed by ``file::[Class::]test`` (the file
keeps same-named tests in different files apart) and the files whose import failed.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath

from builder.core.records import TestStatus


@dataclasses.dataclass(frozen=True)
class ParsedLog:
    """Statuses per test id, files that failed to import, and whether the run's summary printed."""

    tests: dict[str, TestStatus]
    collection_errors: tuple[str, ...]
    completed: bool


def dotted(path: str) -> str:
    """``a/b/test_c.py`` → ``a.b.test_c``."""
    return ".".join(PurePosixPath(path).with_suffix("").parts)


def file_for_module(module: str, files: list[str]) -> str | None:
    """The one file in ``files`` whose dotted path ends with ``module`` (None if not exactly one).

    Runners print module names relative to their own root (Django's labels drop ``tests/``),
    so a suffix match on whole dotted components maps them back to repository paths.
    """
    matches = [
        path for path in files if dotted(path) == module or dotted(path).endswith("." + module)
    ]
    return matches[0] if len(matches) == 1 else None


__all__ = ["ParsedLog", "dotted", "file_for_module"]
