"""Parse Django's test runner (``tests/runtests.py --verbosity 2``) output.

Its per-test lines are unittest's verbose ones; labels are module paths relative to ``tests/``
(``app.tests`` for ``tests/app/tests.py``), mapped back to repository files here.
"""

from __future__ import annotations

from validation.parsers import ParsedLog, dotted, file_for_module
from validation.parsers.unittest import _import_error_files, parse_unittest_style

TESTS_ROOT = "tests/"


def label(path: str) -> str:
    """The runner's label of a test file: ``tests/app/tests.py`` → ``app.tests``."""
    return dotted(path[len(TESTS_ROOT) :] if path.startswith(TESTS_ROOT) else path)


def parse(log: str, files: list[str]) -> ParsedLog:
    tests, failed, completed = parse_unittest_style(
        log, lambda module: file_for_module(module, files)
    )
    return ParsedLog(tests, _import_error_files(failed, files), completed)


def swe_bench_id(test_id: str) -> str:
    """The id SWE-bench records for a Django test: ``name (label.Class)``, label as run."""
    path, cls, name = test_id.split("::")
    return f"{name} ({label(path)}.{cls})"
