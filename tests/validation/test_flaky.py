"""A truly flaky golden test is dropped as FLAKY with the verdicts of every repeat as evidence.

The flaky test keeps a counter in $HOME: where the backend keeps HOME for the whole session
(local: the run dir's of a session per side, sandboxed or not) it fails on every other run of a
side, deterministically; in a container (Docker: a new one per run, nothing kept) it flips a
coin: 6 repetitions make a miss negligible once the first pair has not failed it on both
sides (then it is F→F, whose later verdicts decide nothing: the case is tried again).
"""

import json

import pytest

from builder.core.records import DropReason, RunResult, TestStatus
from tests.support.stage_fixtures import ADD_TEST, FIXED, runs_of
from validation.golden_runs import grade_drop, leavable
from validation.grading import grade, unlisted_tests
from validation.job import Runs

FLAKY = """

def test_flaky():
    import os
    from pathlib import Path

    if os.path.exists("/.dockerenv"):  # the Docker backend: a new container per run
        import random

        assert random.SystemRandom().random() < 0.5
    else:
        counter = Path(os.environ["HOME"]) / "flaky-counter"
        count = int(counter.read_text()) + 1 if counter.exists() else 0
        counter.write_text(str(count))
        assert count % 2 == 0
"""
REPETITIONS = {"local": 3, "docker": 6}
FLAKY_ID = "tests/test_pkg.py::test_flaky"


def _failed_on_both_sides_first(outcome) -> bool:
    """Whether the flaky test failed in both runs of the first pair (before, after)."""
    first = runs_of(outcome)[:2]
    return [run.tests[FLAKY_ID].value for run in first] == ["failed", "failed"]


@pytest.mark.slow
def test_a_truly_flaky_golden_test_drops_the_instance(make_case, backend):
    repetitions = REPETITIONS[backend]
    for _ in range(4):
        outcome = make_case(
            {"tests/test_pkg.py": ADD_TEST + FLAKY},
            {"pkg/__init__.py": FIXED},
            repetitions=repetitions,
        )
        if not _failed_on_both_sides_first(outcome):
            break
        # a coin that fell 'fail' on both sides of the first pair makes the test F→F, which
        # decides nothing: repeated, its verdicts drop nothing and it joins no list (a chance
        # of 1 in 4 per try)
        assert outcome.verdict.kept, outcome.verdict
        assert FLAKY_ID not in (*outcome.output.FAIL_TO_PASS, *outcome.output.PASS_TO_PASS)
    assert outcome.verdict.reason is DropReason.FLAKY
    evidence = outcome.verdict.evidence
    assert evidence["tests"] == "tests/test_pkg.py::test_flaky"
    assert evidence["runs_per_side"] == str(repetitions)
    verdicts = json.loads(evidence["verdicts"])["tests/test_pkg.py::test_flaky"]
    assert any(side == ["fail", "pass"] for side in verdicts.values())
    statuses = [run.tests["tests/test_pkg.py::test_flaky"].value for run in runs_of(outcome)]
    if backend == "local":  # HOME lives through a side's session: every other run fails
        # the first pair (before, after: a checkout each), then each side's repetitions
        assert statuses == ["passed", "passed", "failed", "passed", "failed", "passed"]
        assert verdicts == {"before": ["fail", "pass"], "after": ["fail", "pass"]}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # deterministic there; a coin flip in Docker
def test_one_run_per_side_cannot_see_flakiness(make_case, backend):
    """The same fixture with repetitions=1: it passes in the first run of each side's
    checkout, and is taken for a stable pass."""
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST + FLAKY}, {"pkg/__init__.py": FIXED}, repetitions=1
    )
    assert outcome.verdict.kept, outcome.verdict
    assert "tests/test_pkg.py::test_flaky" in outcome.output.PASS_TO_PASS


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # deterministic there; a coin flip in Docker
def test_a_flaky_fail_to_pass_candidate_is_repeated_and_caught(make_case, backend):
    """Failing before (the bug), passing in the first run after the fix, then not: the first
    pair makes it an F→P candidate, and the repetitions of the candidates catch it."""
    flaky_fix = FLAKY.replace("def test_flaky():", "def test_flaky():\n    from pkg import add\n")
    flaky_fix = flaky_fix.replace(
        "assert count % 2 == 0", "assert add(1, 2) == 3 and count % 2 == 0"
    )
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST + flaky_fix}, {"pkg/__init__.py": FIXED}, repetitions=3
    )
    assert outcome.verdict.reason is DropReason.FLAKY
    verdicts = json.loads(outcome.verdict.evidence["verdicts"])["tests/test_pkg.py::test_flaky"]
    assert verdicts == {"before": ["fail"], "after": ["fail", "pass"]}


FIRST_CHECK = """

_CHECKED = []


def _check():
    # like astropy's leap-second check: the first caller in a process gets its warning
    if not _CHECKED:
        _CHECKED.append(True)
        raise RuntimeError("the first check in this process")


def test_broken():
    _check()
    assert False


def test_later():
    _check()
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_a_test_whose_verdict_hangs_on_one_before_it_is_not_flaky(make_case, backend):
    """``test_broken`` fails on both sides (F→F) and is the first to reach ``_check``;
    ``test_later`` passes because it is not. Repetitions that left the F→F test out made
    ``test_later`` the first and failing, so it was flaky and the record dropped (astropy-13033
    under the recipe's five runs: ``test_fold`` and the leap-second check). Repetitions run the
    whole files, as the first pair and the reference's harness do."""
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST + FIRST_CHECK}, {"pkg/__init__.py": FIXED}, repetitions=3
    )
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.PASS_TO_PASS == (
        "tests/test_pkg.py::test_double",
        "tests/test_pkg.py::test_later",
    )
    repeated = [run for run in runs_of(outcome) if run.suite == "golden" and run.repetition > 0]
    assert len(repeated) == 4
    for run in repeated:
        assert run.deselected == ()
        assert run.tests["tests/test_pkg.py::test_broken"].value == "failed"
        assert run.tests["tests/test_pkg.py::test_later"].value == "passed"


def _repeated(side: str, *statuses: dict[str, TestStatus]) -> list[RunResult]:
    return [
        RunResult(
            side=side,
            repetition=index,
            command=("pytest",),
            exit_code=1,
            timed_out=False,
            duration_s=0.1,
            report_found=True,
            tests=tests,
            log_path=f"{side}-{index}.log",
        )  # fmt: skip
        for index, tests in enumerate(statuses)
    ]


def test_only_a_test_that_decided_in_the_first_pair_drops_the_record_as_flaky() -> None:
    """``t::ff`` fails on both sides of the first pair (F→F: no label) and passes in a later
    run of the after side; ``t::fp`` is F→P throughout. The record is kept, and the F→F test's
    changed verdict is listed; flakiness of a test of the first pair's labels drops it."""
    fail, ok = TestStatus.FAILED, TestStatus.PASSED
    before = _repeated("before", {"t::fp": fail, "t::ff": fail}, {"t::fp": fail, "t::ff": fail})
    after = _repeated("after", {"t::fp": ok, "t::ff": fail}, {"t::fp": ok, "t::ff": ok})
    golden = Runs(before, after, {"before": [None, None], "after": [None, None]})
    graded = grade(before, after)
    assert graded.flaky == ("t::ff",) and graded.fail_to_pass == ("t::fp",)
    assert grade_drop(graded, golden, decisive={"t::fp"}) is None
    assert unlisted_tests(graded, before, after) == {"t::ff": "flaky"}
    dropped = grade_drop(graded, golden, decisive={"t::fp", "t::ff"})
    assert dropped is not None and dropped.verdict.reason is DropReason.FLAKY
    assert dropped.verdict.evidence["tests"] == "t::ff"


def test_an_id_that_starts_another_that_runs_is_not_named_to_pytest():
    running = {"t.py::test_ab", "t.py::C::test_x[1]"}
    left_out = {"t.py::test_a", "t.py::test_b", "t.py::C::test_x", "t.py::C::test_x[10]"}
    assert leavable(left_out, running) == ("t.py::C::test_x[10]", "t.py::test_b")
