"""Grading over repeated runs: every transition, flaky, missing and skipped handled explicitly."""

import pytest

from builder.core.records import RunResult, TestStatus
from validation.grading import (
    Verdict,
    grade,
    needs_network,
    network_fail_to_pass,
    unlisted_tests,
    verdict_of,
)

S = TestStatus


def _run(side, tests, repetition=0, deselected=(), network_errors=None, **texts):
    return RunResult(
        side=side, repetition=repetition, command=("pytest",), exit_code=0, timed_out=False,
        duration_s=0.1, report_found=True, tests=tests, log_path="log", deselected=deselected,
        network_errors=network_errors or {}, **texts,
    )  # fmt: skip


def _side(side, *repeats):
    return [_run(side, tests, index) for index, tests in enumerate(repeats)]


@pytest.mark.parametrize(
    "status, verdict",
    [
        (S.PASSED, Verdict.PASS),
        (S.XFAIL, Verdict.EXPECTED),
        (S.FAILED, Verdict.FAIL),
        (S.ERROR, Verdict.FAIL),
        (S.XPASS, Verdict.EXPECTED),
        (S.MISSING, Verdict.FAIL),
        (S.SKIPPED, Verdict.SKIP),
    ],
)
def test_every_status_maps_to_one_verdict(status, verdict):
    assert verdict_of(status) is verdict


def test_every_status_is_mapped():
    assert {verdict_of(status) for status in S} == set(Verdict)


def test_transitions():
    before = _run("before", {
        "fp_fail": S.FAILED, "fp_error": S.ERROR, "pp": S.PASSED, "pf": S.PASSED,
        "ff": S.FAILED, "skip": S.SKIPPED, "xfail_p": S.XFAIL, "pf_missing": S.PASSED,
    })  # fmt: skip
    after = _run("after", {
        "fp_fail": S.PASSED, "fp_error": S.PASSED, "fp_missing": S.PASSED, "pp": S.PASSED,
        "pf": S.FAILED, "ff": S.ERROR, "skip": S.PASSED, "xfail_p": S.PASSED,
    })  # fmt: skip
    graded = grade([before], [after])
    assert graded.fail_to_pass == ("fp_error", "fp_fail", "fp_missing")
    assert graded.pass_to_pass == ("pp",)
    assert graded.expected == ("xfail_p",)
    assert graded.pass_to_fail == ("pf", "pf_missing")
    assert graded.fail_to_fail == ("ff",)
    assert graded.skipped == ("skip",)
    assert graded.flaky == ()
    assert graded.transitions().fail_to_pass == 3


def test_fail_to_pass_needs_every_repeat_of_both_sides():
    before = _side("before", {"t": S.FAILED}, {"t": S.ERROR}, {})  # failing or missing each time
    after = _side("after", {"t": S.PASSED}, {"t": S.PASSED}, {"t": S.PASSED})
    graded = grade(before, after)
    assert graded.fail_to_pass == ("t",) and graded.flaky == ()


@pytest.mark.parametrize(
    "before, after",
    [
        ([{"t": S.FAILED}, {"t": S.PASSED}, {"t": S.FAILED}], [{"t": S.PASSED}] * 3),
        ([{"t": S.FAILED}] * 3, [{"t": S.PASSED}, {"t": S.FAILED}, {"t": S.PASSED}]),
        ([{"t": S.PASSED}] * 3, [{"t": S.PASSED}, {}, {"t": S.PASSED}]),  # missing once
        ([{"t": S.PASSED}] * 3, [{"t": S.PASSED}, {"t": S.SKIPPED}, {"t": S.PASSED}]),
        ([{"t": S.FAILED}] * 3, [{"t": S.PASSED}, {"t": S.XFAIL}, {"t": S.PASSED}]),
    ],
)
def test_a_verdict_differing_across_repeats_is_flaky(before, after):
    graded = grade(_side("before", *before), _side("after", *after))
    assert graded.flaky == ("t",)
    assert not (graded.fail_to_pass or graded.pass_to_pass or graded.pass_to_fail)
    assert graded.tests == {"t"}


def test_failed_and_error_across_repeats_are_the_same_verdict():
    before = _side("before", {"t": S.FAILED}, {"t": S.ERROR})
    after = _side("after", {"t": S.PASSED}, {"t": S.PASSED})
    assert grade(before, after).fail_to_pass == ("t",)


def test_grading_needs_runs_on_both_sides():
    with pytest.raises(ValueError):
        grade([], [_run("after", {"t": S.PASSED})])


def test_an_expected_failure_that_starts_passing_is_no_pass_to_fail():
    """sympy-18199's test_solve_modular_fail: ``f`` before the fix, ``X`` after."""
    graded = grade([_run("before", {"t": S.XFAIL})], [_run("after", {"t": S.XPASS})])
    assert graded.expected == ("t",)
    assert graded.pass_to_fail == graded.fail_to_pass == graded.pass_to_pass == ()
    assert graded.tests == frozenset({"t"})


def test_xfail_tests_of_a_file_that_failed_to_import_before_are_no_fail_to_pass():
    """astroid-2219: the file could not be imported before (its tests are missing: fail),
    after the fix its xfail tests are xfail."""
    before = _run("before", {"fixed": S.ERROR})
    after = _run("after", {"fixed": S.PASSED, "known_bug": S.XFAIL, "lucky": S.XPASS})
    graded = grade([before], [after])
    assert graded.fail_to_pass == ("fixed",)
    assert graded.expected == ("known_bug", "lucky")
    assert graded.transitions().fail_to_pass == 1


def test_xfail_and_xpass_across_repeats_are_not_flaky_but_xfail_and_fail_are():
    before = _side("before", {"a": S.XFAIL, "b": S.XFAIL}, {"a": S.XPASS, "b": S.FAILED})
    after = _side("after", {"a": S.XFAIL, "b": S.XFAIL}, {"a": S.XFAIL, "b": S.XFAIL})
    graded = grade(before, after)
    assert graded.expected == ("a",)
    assert graded.flaky == ("b",)


def test_a_run_that_left_a_test_out_says_nothing_about_it():
    """Repetitions deselect the tests whose verdict decides nothing: absent there is no fail."""
    before = [
        _run("before", {"a": S.FAILED, "ff": S.FAILED}),
        _run("before", {"a": S.FAILED}, 1, deselected=("ff",)),
    ]
    after = [
        _run("after", {"a": S.PASSED, "ff": S.FAILED}),
        _run("after", {"a": S.PASSED}, 1, deselected=("ff",)),
    ]
    graded = grade(before, after)
    assert (graded.fail_to_pass, graded.fail_to_fail, graded.flaky) == (("a",), ("ff",), ())
    # absent from a run that did not leave it out, a passing test fails there: flaky
    before = [_run("before", {"a": S.FAILED, "p": S.PASSED}), _run("before", {"a": S.FAILED}, 1)]
    after = [_run("after", {"a": S.PASSED, "p": S.PASSED}), _run("after", {"a": S.PASSED}, 1)]
    assert grade(before, after).flaky == ("p",)


def test_network_failures_count_on_both_sides_or_after_the_fix():
    line = "ConnectionRefusedError: [Errno 111] Connection refused"
    before = [
        _run(
            "before", {"n": S.FAILED, "x": S.FAILED, "b": S.FAILED}, 0, (), {"n": line, "b": line}
        ),
        _run(
            "before", {"n": S.FAILED, "x": S.FAILED, "b": S.FAILED}, 1, (), {"n": line, "b": line}
        ),
    ]
    after = [
        _run("after", {"n": S.FAILED, "x": S.FAILED, "b": S.PASSED}, 0, (), {"n": line, "x": line}),
        _run("after", {"n": S.FAILED, "x": S.FAILED, "b": S.PASSED}, 1, ("x",), {"n": line}),
    ]
    # n: a connection error in every run of both sides; x: before it failed otherwise, after
    # with a connection error (its repetition left it out); b: only before, then passing
    assert needs_network(before, after) == {"n": line}
    graded = grade(before, after)
    assert graded.fail_to_pass == ("b",)
    assert network_fail_to_pass(graded, before, after) == {"n": line, "x": line}
    # a connection error in only some of the runs is not a lack of network
    flaky = [after[0], _run("after", {"n": S.FAILED, "x": S.FAILED, "b": S.PASSED}, 1)]
    assert network_fail_to_pass(grade(before, flaky), before, flaky) == {}


def test_tests_in_neither_list_are_named_with_what_the_runs_saw():
    """Skipped (with pytest's reason when it gave one), F→F (with the failure's first line when
    there is one) and flaky tests; F→P, P→P, xfail tests and those explained elsewhere are not."""
    before = [
        _run("before", {
            "fp": S.FAILED, "pp": S.PASSED, "skip": S.SKIPPED, "bare_skip": S.SKIPPED,
            "skip_after": S.PASSED, "ff": S.FAILED, "ff_quiet": S.FAILED, "xfail": S.XFAIL,
            "offline": S.FAILED, "flaky": S.PASSED,
        }, skip_reasons={"skip": "could not import 'cdms2': No module named 'cdms2'"},
        failure_messages={"ff": "ImportError: before"}),
        _run("before", {"flaky": S.FAILED}, 1, deselected=(
            "fp", "pp", "skip", "bare_skip", "skip_after", "ff", "ff_quiet", "xfail", "offline",
        )),
    ]  # fmt: skip
    after = [
        _run("after", {
            "fp": S.PASSED, "pp": S.PASSED, "skip": S.SKIPPED, "bare_skip": S.SKIPPED,
            "skip_after": S.SKIPPED, "ff": S.FAILED, "ff_quiet": S.MISSING, "xfail": S.XFAIL,
            "offline": S.FAILED, "flaky": S.PASSED,
        }, skip_reasons={"skip": "could not import 'cdms2': No module named 'cdms2'",
                         "skip_after": "needs the fix"},
        failure_messages={"ff": "AssertionError: after"}),
    ]  # fmt: skip
    graded = grade(before, after)
    assert unlisted_tests(graded, before, after, explained={"offline"}) == {
        "bare_skip": "skipped",
        "ff": "failed before and after: AssertionError: after",
        "ff_quiet": "failed before and after",
        "flaky": "flaky",
        "skip": "skipped: could not import 'cdms2': No module named 'cdms2'",
        "skip_after": "skipped: needs the fix",
    }
