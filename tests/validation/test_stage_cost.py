"""What validation runs: repetitions of the whole golden files, none after a first pair that
already decides the drop, and both sides at the same time."""

import json
from pathlib import Path

import pytest

from builder.core.records import DropReason
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS, runs_of

UNDECIDING = """

def test_broken():
    assert False


def test_skipped():
    import pytest

    pytest.skip("never here")
"""


@pytest.mark.slow
def test_repetitions_run_the_whole_files_as_the_first_pair(make_case):
    """F→F and skipped tests of the first pair run again in every repetition: what a test
    sees may hang on the tests before it (test_flaky.py), so a repetition is the first pair's
    run again, and the labels are graded from whole runs."""
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST + UNDECIDING}, {"pkg/__init__.py": FIXED}, repetitions=3
    )
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert instance.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    assert instance.stats.golden_tests.fail_to_fail == 1
    assert instance.run_metadata["runs_per_side"] == "3"
    runs = runs_of(outcome)
    assert [(r.suite, r.side, r.repetition) for r in runs] == [
        ("golden", "before", 0),
        ("golden", "after", 0),
        ("golden", "before", 1),
        ("golden", "before", 2),
        ("golden", "after", 1),
        ("golden", "after", 2),
    ]  # fmt: skip (the test patch only adds to the file: its existing tests were run, above)
    for run in runs:
        assert run.deselected == () and "--deselect" not in run.command
        assert {"tests/test_pkg.py::test_broken", "tests/test_pkg.py::test_skipped"} <= set(
            run.tests
        )


@pytest.mark.slow
def test_a_first_pair_without_fail_to_pass_is_not_repeated(make_case):
    """No test fails before and passes after: repetitions could only add flakiness to a drop."""
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": FIXED.replace("a + b", "a * b")},
        repetitions=3,
    )  # fmt: skip
    assert outcome.verdict.reason is DropReason.NO_FAIL_TO_PASS
    runs = runs_of(outcome)
    assert [(r.side, r.repetition) for r in runs] == [("before", 0), ("after", 0)]


SIDE_TIMES = """

def test_record_when_this_side_ran():
    import os
    import time
    from pathlib import Path

    started = time.time()
    time.sleep(2)
    (Path({folder!r}) / str(os.getpid())).write_text(json.dumps([started, time.time()]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # the runs write to a folder of this machine:
def test_both_sides_run_at_the_same_time(make_case, backend, tmp_path):  # so, unsandboxed
    folder = tmp_path / "sides"
    folder.mkdir()
    timed = SIDE_TIMES.format(folder=str(folder))
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": "import json\n" + TESTS + timed}
    changed = timed.replace("time.sleep(2)", "time.sleep(2.0)")  # the existing pass runs it
    outcome = make_case(
        {"tests/test_pkg.py": "import json\n" + ADD_TEST + changed},
        {"pkg/__init__.py": FIXED},
        base_files=base,
        sandbox="none",
    )
    assert outcome.verdict.kept, outcome.verdict
    spans = sorted(json.loads(path.read_text()) for path in folder.iterdir())
    assert len(spans) == 4  # the golden pair, then the existing-test pair: two at a time
    for first, second in (spans[:2], spans[2:]):
        assert second[0] < first[1], spans  # the second started before the first ended


@pytest.mark.slow
def test_the_existing_tests_of_a_file_the_test_patch_only_adds_to_are_not_run_again(make_case):
    """Their verdicts and coverage come from the golden runs' first pair: the same code ran."""
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + "\n\nclass TestOld:\n"
            "    def test_old(self):\n        assert add(0, 0) == 0\n"}  # fmt: skip
    added = base["tests/test_pkg.py"] + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    outcome = make_case(
        {"tests/test_pkg.py": added}, {"pkg/__init__.py": FIXED}, base_files=base, coverage=True
    )
    assert outcome.verdict.kept, outcome.verdict
    stats = outcome.output.stats
    assert stats.existing_tests.pass_to_pass == 2  # test_double, TestOld::test_old
    assert (stats.golden_tests_added, stats.golden_tests_removed) == (1, 0)
    assert {run.suite for run in runs_of(outcome)} == {"golden"}
    # the patch line `a + b` is run by test_add alone; add(0, 0) by test_old too
    assert outcome.output.golden_coverage == 1.0
    assert float(outcome.output.run_metadata["existing_coverage"]) == 1.0


@pytest.mark.slow
def test_the_existing_pass_runs_only_the_tests_the_test_patch_changes_or_removes(make_case):
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + "\n\nclass TestOld:\n"
            "    def test_old(self):\n        assert add(0, 0) == 0\n\n"
            "    def test_gone(self):\n        assert add(1, 1) == 0\n"}  # fmt: skip
    patched = (
        base["tests/test_pkg.py"]
        .replace("add(0, 0) == 0", "add(0, 0) == 0  # unchanged in meaning, changed in text")
        .replace("\n\n    def test_gone(self):\n        assert add(1, 1) == 0\n", "\n")
    ) + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    outcome = make_case({"tests/test_pkg.py": patched}, {"pkg/__init__.py": FIXED}, base_files=base)
    assert outcome.verdict.kept, outcome.verdict
    existing = [run for run in runs_of(outcome) if run.suite == "existing"]
    assert [run.side for run in existing] == ["before", "after"]
    for run in existing:  # test_double is reused from the golden runs
        assert run.deselected == ("tests/test_pkg.py::test_double",)
        assert set(run.tests) == {
            "tests/test_pkg.py::TestOld::test_old", "tests/test_pkg.py::TestOld::test_gone",
        }  # fmt: skip
    stats = outcome.output.stats
    # test_double P→P (reused), test_old P→P and test_gone P→F (run at the base commit)
    assert (stats.existing_tests.pass_to_pass, stats.existing_tests.pass_to_fail) == (2, 1)
    assert (stats.golden_tests_added, stats.golden_tests_removed) == (1, 1)


@pytest.mark.slow
def test_the_existing_pass_runs_in_the_golden_checkouts_with_the_test_patch_undone(make_case):
    """No new checkout for it (what the golden runs compiled stays compiled): the changed test
    runs as the base commit has it, though its patched text has the same size."""
    old = "\n\ndef test_old():\n    assert add(0, 0) == 0\n"
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + old}
    patched = (
        TESTS + old.replace("== 0", "== 9") + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    outcome = make_case({"tests/test_pkg.py": patched}, {"pkg/__init__.py": FIXED}, base_files=base)
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.stats.golden_tests.fail_to_fail == 1  # test_old as patched
    existing = outcome.output.stats.existing_tests
    assert (existing.pass_to_pass, existing.fail_to_fail) == (2, 0)  # test_double, test_old
    assert [run.suite for run in runs_of(outcome)] == ["golden"] * 2 + ["existing"] * 2
    logs = sorted(p.name for p in Path(outcome.verdict.evidence["logs"]).glob("*generated.log"))
    assert logs == ["golden-after-generated.log", "golden-before-generated.log"]


VANDAL = """

def test_vandal():
    import os
    import shutil

    if os.path.isdir("tests/data"):
        shutil.rmtree("tests/data")
        open("tests/data", "w").close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # a container's writes never reach the checkout
def test_the_existing_pass_gets_new_checkouts_where_the_test_patch_cannot_be_undone(
    make_case, backend
):
    """A golden run made a file of the folder holding a file the test patch changes: that file
    cannot be written back, so the existing tests run in new checkouts, as before."""
    old = "\n\ndef test_old():\n    assert add(0, 0) == 0\n"
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + old, "tests/data/x.txt": "1\n"}
    patched = (
        TESTS + old.replace("== 0", "== 9") + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    outcome = make_case(
        {"tests/test_pkg.py": patched + VANDAL, "tests/data/x.txt": "2\n"},
        {"pkg/__init__.py": FIXED},
        base_files=base,
    )
    assert outcome.verdict.kept, outcome.verdict
    existing = outcome.output.stats.existing_tests
    assert (existing.pass_to_pass, existing.fail_to_fail) == (2, 0)
    logs = Path(outcome.verdict.evidence["logs"])
    for side in ("before", "after"):
        assert (logs / f"existing-{side}-generated.log").is_file()
        note = (logs / f"existing-{side}.log").read_text()
        assert "a new checkout for the existing tests" in note
        assert "tests/data/x.txt" in note


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_a_side_runs_its_existing_tests_without_waiting_for_the_other_sides_repetitions(
    make_case, backend
):
    """The after side's runs are slow (its test sleeps once fixed): the before side has
    repeated and run its existing tests before the after side's repetition ends."""
    old = "\n\ndef test_old():\n    assert add(0, 0) == 0\n"
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + old}
    slow = "\n\ndef test_add():\n    import time\n\n    assert add(1, 2) == 3\n    time.sleep(4)\n"
    patched = TESTS + old.replace("== 0", "== 9") + slow
    outcome = make_case(
        {"tests/test_pkg.py": patched}, {"pkg/__init__.py": FIXED}, base_files=base, repetitions=2
    )
    assert outcome.verdict.kept, outcome.verdict
    logs = Path(outcome.verdict.evidence["logs"])
    names = ("existing-before-0", "golden-after-1", "existing-after-0")
    ended = {name: (logs / f"{name}.log").stat().st_mtime for name in names}
    assert ended["existing-before-0"] < ended["golden-after-1"] < ended["existing-after-0"]
