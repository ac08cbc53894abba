"""Parse sympy's ``bin/test --verbose`` output into per-test statuses keyed by file::test.

The verbose reporter prints ``path/test_x.py[N]``, then one ``test_name <status>`` line per test;
printed output may push the status onto a later line, and the file's ``[OK]``/``[FAIL]`` column
trails the last status. ``path[?]   Failed to import`` marks a file whose import failed.
"""

from __future__ import annotations

import re

from builder.core.records import TestStatus
from validation.runs.parsers import ParsedLog

_FILE = re.compile(r"^(?P<path>\S+\.py)\[(?P<count>\d+|\?)\]\s*(?P<rest>.*)$")
_TEST = re.compile(r"^(?P<name>test\w*) (?P<rest>.*)$")
_TRAILER = re.compile(r"\s*\[(?:OK|FAIL)\]\s*$")
_SUMMARY = re.compile(r"^[\s=]*tests finished: ", re.MULTILINE)
"""The summary line; one short enough for a line is centred between ``=`` signs."""

_STATUS = {
    "ok": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "T": TestStatus.ERROR,  # killed by sympy's own per-test timeout
    "f": TestStatus.XFAIL,
    "X": TestStatus.XPASS,
    "s": TestStatus.SKIPPED,
    "w": TestStatus.SKIPPED,  # slow, not run
    "K": TestStatus.SKIPPED,  # KeyboardInterrupt skip
}


def _status(rest: str) -> TestStatus | None:
    words = _TRAILER.sub("", rest).split()
    return _STATUS.get(words[-1]) if words else None


def parse(log: str, files: list[str]) -> ParsedLog:
    """Statuses of tests in the files the runner reported (paths relative to the repo root)."""
    tests: dict[str, TestStatus] = {}
    errors: list[str] = []
    current_file: str | None = None
    pending: str | None = None
    for line in log.splitlines():
        header = _FILE.match(line)
        if header:
            current_file, pending = header["path"], None
            if header["count"] == "?":
                errors.append(header["path"])
                current_file = None
            continue
        if current_file is None:
            continue
        test = _TEST.match(line)
        if test:
            pending = f"{current_file}::{test['name']}"
            status = _status(test["rest"])
        elif pending is not None:
            status = _status(line)
        else:
            continue
        if status is not None and pending is not None:
            tests[pending] = status
            pending = None
    return ParsedLog(tests, tuple(sorted(set(errors))), bool(_SUMMARY.search(log)))


def swe_bench_id(test_id: str) -> str:
    """The id SWE-bench records for a sympy test: the bare function name (it drops the file,
    so compare per file where names repeat)."""
    return test_id.rsplit("::", 1)[-1]
