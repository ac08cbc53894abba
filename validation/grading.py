"""Grade before/after runs into test transitions (F→P, P→P, F→F, P→F) per test id."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from builder.records import RunResult, TestStatus


@dataclasses.dataclass(frozen=True)
class Grade:
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    fail_to_fail: tuple[str, ...]
    pass_to_fail: tuple[str, ...]
    skipped: tuple[str, ...]


def _side_status(runs: Sequence[RunResult], test: str) -> TestStatus:
    """The status of ``test`` on one side: absent from a run counts as missing."""
    statuses = {run.tests.get(test, TestStatus.MISSING) for run in runs}
    if len(statuses) == 1:
        return statuses.pop()
    # differing statuses across repetitions: the worst one stands (flakiness is graded later)
    if any(status.is_fail for status in statuses):
        return TestStatus.FAILED
    return TestStatus.SKIPPED if TestStatus.SKIPPED in statuses else TestStatus.PASSED


def grade(before: Sequence[RunResult], after: Sequence[RunResult]) -> Grade:
    """Transitions of every test seen on either side; skipped tests join no transition."""
    tests = sorted({test for run in (*before, *after) for test in run.tests})
    buckets: dict[str, list[str]] = {key: [] for key in ("fp", "pp", "ff", "pf", "skip")}
    for test in tests:
        old, new = _side_status(before, test), _side_status(after, test)
        if TestStatus.SKIPPED in (old, new):
            buckets["skip"].append(test)
        elif old.is_fail and new.is_pass:
            buckets["fp"].append(test)
        elif old.is_pass and new.is_pass:
            buckets["pp"].append(test)
        elif old.is_pass:
            buckets["pf"].append(test)
        else:
            buckets["ff"].append(test)
    return Grade(*(tuple(buckets[key]) for key in ("fp", "pp", "ff", "pf", "skip")))
