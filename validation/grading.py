"""Grade repeated before/after runs into transitions (F→P, P→P, F→F, P→F) and flaky tests."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Collection, Sequence

from builder.core.records import RunResult, TestStatus, Transitions


class Verdict(str, enum.Enum):
    """What one status means for grading: every status maps to exactly one of these."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    EXPECTED = "expected"


def verdict_of(status: TestStatus) -> Verdict:
    """passed passes; failed/error/missing fail; skipped is skipped; xfail and xpass are an
    expected outcome, which is neither a pass nor a fail."""
    if status.is_pass:
        return Verdict.PASS
    if status.is_fail:
        return Verdict.FAIL
    if status is TestStatus.SKIPPED:
        return Verdict.SKIP
    if status.is_expected_outcome:
        return Verdict.EXPECTED
    raise ValueError(f"test status {status!r} has no grading verdict")  # a new status: a bug


@dataclasses.dataclass(frozen=True)
class Grade:
    """Test ids by transition; a flaky test (its verdict differs across one side's repeats)
    joins no transition, nor does a test skipped on either side, nor one that is an expected
    failure or an unexpected pass (xfail/xpass) on either side: those are in ``expected``."""

    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    fail_to_fail: tuple[str, ...]
    pass_to_fail: tuple[str, ...]
    skipped: tuple[str, ...]
    flaky: tuple[str, ...] = ()
    expected: tuple[str, ...] = ()

    @property
    def tests(self) -> frozenset[str]:
        """Every test id seen in any run of either side."""
        return frozenset(
            self.fail_to_pass + self.pass_to_pass + self.fail_to_fail + self.pass_to_fail
            + self.skipped + self.flaky + self.expected
        )  # fmt: skip

    def transitions(self) -> Transitions:
        return Transitions(
            fail_to_pass=len(self.fail_to_pass),
            fail_to_fail=len(self.fail_to_fail),
            pass_to_pass=len(self.pass_to_pass),
            pass_to_fail=len(self.pass_to_fail),
        )


def side_verdicts(runs: Sequence[RunResult], test: str) -> set[Verdict]:
    """The verdicts of ``test`` across the repeats of one side; absent from a run = missing,
    unless the run left it out on purpose (``RunResult.deselected``): that run says nothing."""
    return {
        verdict_of(run.tests.get(test, TestStatus.MISSING))
        for run in runs
        if test not in run.deselected
    }


def needs_network(before: Sequence[RunResult], after: Sequence[RunResult]) -> dict[str, str]:
    """Tests failing with a connection error in every run of both sides, with the error line
    of the last: offline they fail whatever the patch, so they say nothing about it."""
    return _network_failures((*before, *after))


def network_fail_to_pass(
    graded: Grade, before: Sequence[RunResult], after: Sequence[RunResult]
) -> dict[str, str]:
    """F→F tests failing after the fix with a connection error in every run: F→P candidates
    for all we can tell offline. The before side does not matter: it may fail for any reason
    (failing is what it should do), while a connection error cannot be fixed by the patch."""
    failures = _network_failures(after)
    return {test: failures[test] for test in graded.fail_to_fail if test in failures}


SKIPPED = "skipped"
FAILED_BEFORE_AND_AFTER = "failed before and after"
FLAKY = "flaky"
"""The outcome texts of :func:`unlisted_tests` (a skipped one and an F→F one may add ``: `` and
the skip reason or failure message)."""


def unlisted_tests(
    graded: Grade,
    before: Sequence[RunResult],
    after: Sequence[RunResult],
    explained: Collection[str] = (),
) -> dict[str, str]:
    """The tests in neither list (skipped, F→F, flaky), other than ``explained`` ones, each with
    what the runs saw: ``skipped: <reason>`` (``skipped`` when pytest gave none), ``failed
    before and after: <first line of the failure message>`` (the message when there is one)
    or ``flaky``; the reason and message are the last run's that has one."""
    runs = (*before, *after)
    found = {test: FLAKY for test in graded.flaky}
    for test in graded.skipped:
        found[test] = _with(SKIPPED, _last(runs, test, "skip_reasons"))
    for test in graded.fail_to_fail:
        found[test] = _with(FAILED_BEFORE_AND_AFTER, _last(runs, test, "failure_messages"))
    return {test: found[test] for test in sorted(found) if test not in explained}


def _last(runs: Sequence[RunResult], test: str, field: str) -> str:
    return next((text for run in reversed(runs) if (text := getattr(run, field).get(test))), "")


def _with(outcome: str, detail: str) -> str:
    return f"{outcome}: {detail}" if detail else outcome


def _network_failures(runs: Sequence[RunResult]) -> dict[str, str]:
    """Tests with a connection error in every run that ran them, and the last run's line."""
    found = {}
    for test in sorted({test for run in runs for test in run.network_errors}):
        ran = [run for run in runs if test not in run.deselected]
        if all(test in run.network_errors for run in ran):
            found[test] = ran[-1].network_errors[test]
    return found


def grade(before: Sequence[RunResult], after: Sequence[RunResult]) -> Grade:
    """F→P: failing in every before run and passing in every after run; P→P, F→F, P→F alike.

    A test whose verdict differs across the repeats of one side is flaky; a test skipped on a
    side (in every repeat) joins no transition; nor does one that is xfail/xpass on a side
    (``expected``): sympy's ``test_solve_modular_fail`` goes from ``f`` to ``X`` when its issue
    is fixed, which is no pass-to-fail, and an xfail test of a file that failed to import before
    is no fail-to-pass.
    """
    if not before or not after:
        raise ValueError("grading needs at least one run on each side")
    tests = sorted({test for run in (*before, *after) for test in run.tests})
    keys = ("fp", "pp", "ff", "pf", "skip", "flaky", "expected")
    buckets: dict[str, list[str]] = {key: [] for key in keys}
    for test in tests:
        old, new = side_verdicts(before, test), side_verdicts(after, test)
        if len(old) > 1 or len(new) > 1:
            buckets["flaky"].append(test)
            continue
        (old_verdict,), (new_verdict,) = old, new
        if Verdict.EXPECTED in (old_verdict, new_verdict):
            key = "expected"
        elif Verdict.SKIP in (old_verdict, new_verdict):
            key = "skip"
        else:
            key = {
                (Verdict.FAIL, Verdict.PASS): "fp",
                (Verdict.PASS, Verdict.PASS): "pp",
                (Verdict.FAIL, Verdict.FAIL): "ff",
                (Verdict.PASS, Verdict.FAIL): "pf",
            }[old_verdict, new_verdict]
        buckets[key].append(test)
    return Grade(*(tuple(buckets[key]) for key in keys))
