"""Grading: every transition, missing and skipped handled explicitly."""

from builder.records import RunResult, TestStatus
from validation.grading import grade

S = TestStatus


def _run(side, tests, repetition=0):
    return RunResult(
        side=side, repetition=repetition, command=("pytest",), exit_code=0, timed_out=False,
        duration_s=0.1, report_found=True, tests=tests, log_path="log",
    )  # fmt: skip


def test_transitions():
    before = _run("before", {
        "fp_fail": S.FAILED, "fp_error": S.ERROR, "pp": S.PASSED, "pf": S.PASSED,
        "ff": S.FAILED, "skip": S.SKIPPED, "xfail_pp": S.XFAIL, "pf_missing": S.PASSED,
    })  # fmt: skip
    after = _run("after", {
        "fp_fail": S.PASSED, "fp_error": S.PASSED, "fp_missing": S.PASSED, "pp": S.PASSED,
        "pf": S.FAILED, "ff": S.ERROR, "skip": S.PASSED, "xfail_pp": S.PASSED,
    })  # fmt: skip
    graded = grade([before], [after])
    assert graded.fail_to_pass == ("fp_error", "fp_fail", "fp_missing")
    assert graded.pass_to_pass == ("pp", "xfail_pp")
    assert graded.pass_to_fail == ("pf", "pf_missing")
    assert graded.fail_to_fail == ("ff",)
    assert graded.skipped == ("skip",)


def test_disagreeing_repetitions_take_the_worst_status():
    before = [_run("before", {"t": S.FAILED}), _run("before", {"t": S.FAILED}, 1)]
    after = [_run("after", {"t": S.PASSED}), _run("after", {"t": S.FAILED}, 1)]
    assert grade(before, after).fail_to_fail == ("t",)
    after = [_run("after", {"t": S.PASSED}), _run("after", {"t": S.SKIPPED}, 1)]
    assert grade(before, after).skipped == ("t",)
