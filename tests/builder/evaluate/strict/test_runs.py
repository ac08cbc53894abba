"""The strict runs' scoring helpers, on real records and patches built here."""

from builder.core.records import RunResult, TestStatus
from builder.evaluate.strict.runs import _transitions, mutation_lines
from tests.support.git import GitRepo


def run(side, tests=None, errors=()):
    return RunResult(
        side=side,
        suite="golden",
        repetition=0,
        command=("pytest",),
        exit_code=2 if errors else 0,
        timed_out=False,
        duration_s=0.1,
        report_found=True,
        tests=tests or {},
        collection_errors=tuple(errors),
        log_path="x.log",
    )


def kinds(transitions):
    return [(t.test, t.kind) for t in transitions]


def test_a_file_that_imports_on_neither_side_is_one_failing_test_on_both():
    runs = (run("before", errors=["tests/test_new.py"]), run("after", errors=["tests/test_new.py"]))
    assert kinds(_transitions(runs, {"tests/test_new.py": None})) == [("tests/test_new.py", "F→F")]


def test_a_file_that_imports_only_after_the_fix_has_its_tests_failing_before():
    passed = {"tests/test_new.py::test_a": TestStatus.PASSED}
    runs = (run("before", errors=["tests/test_new.py"]), run("after", passed))
    assert kinds(_transitions(runs, {"tests/test_new.py": None})) == [
        ("tests/test_new.py::test_a", "F→P")
    ]


def test_a_collection_error_fails_the_files_tests_even_when_reported():
    tests = {"tests/test_x.py::test_a": TestStatus.PASSED}
    runs = (run("before", tests), run("after", tests, errors=["tests/test_x.py"]))
    assert kinds(_transitions(runs, {"tests/test_x.py": None})) == [
        ("tests/test_x.py::test_a", "P→F")
    ]


def test_a_file_that_fails_to_import_before_and_runs_nothing_after_fails_before():
    runs = (run("before", errors=["tests/test_new.py"]), run("after"))
    (only,) = _transitions(runs, {"tests/test_new.py": None})
    assert (only.test, only.before, only.after) == ("tests/test_new.py", "fail", "other")


def test_files_of_other_predictions_and_clean_files_add_nothing():
    runs = (run("before", errors=["tests/test_other.py"]), run("after"))
    assert _transitions(runs, {"tests/test_new.py": None}) == []


OLD = "def add(a, b):\n    return a - b\n"
NEW = (
    'def add(a, b):\n    """Sum."""\n    # the fix\n    return a + b\n\n\n'
    "def unused():\n    return 1\n"
)


def test_mutants_are_made_on_the_executable_lines_of_the_golden_patch(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.commit({"pkg.py": OLD})
    patch = repo.diff({"pkg.py": NEW})
    fixed = {"pkg.py": NEW}
    measured = [("before", "pkg.py", 2), ("after", "pkg.py", 4), ("after", "pkg.py", 1)]
    assert mutation_lines(patch, fixed, measured) == {"pkg.py": {4}}  # what the tests ran
    assert mutation_lines(patch, fixed, None) == {"pkg.py": {4, 7, 8}}  # statements per ast
    assert mutation_lines(patch, fixed, []) == {}
