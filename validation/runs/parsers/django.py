"""Parse Django's test runner (``tests/runtests.py --verbosity 2``) output.

Its per-test lines are unittest's verbose ones; labels are module paths relative to ``tests/``
(``app.tests`` for ``tests/app/tests.py``), mapped back to repository files here.
"""

from __future__ import annotations

from validation.runs.parsers import dotted
from validation.runs.parsers.unittest import parse

__all__ = ["TESTS_ROOT", "label", "parse", "swe_bench_id"]

TESTS_ROOT = "tests/"


def label(path: str) -> str:
    """The runner's label of a test file: ``tests/app/tests.py`` → ``app.tests``."""
    return dotted(path[len(TESTS_ROOT) :] if path.startswith(TESTS_ROOT) else path)


# ``parse`` is unittest's: Django prints unittest's verbose lines, and labels relative to tests/
# map back to files by the same module-suffix match.


def swe_bench_id(test_id: str) -> str:
    """The id SWE-bench records for a Django test: ``name (label.Class)``, label as run."""
    path, cls, name = test_id.split("::")
    return f"{name} ({label(path)}.{cls})"
