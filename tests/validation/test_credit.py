"""Which executed lines count for a patch's tests in ΔC (validation's golden coverage and the
evaluation's ΔC alike)."""

from validation import coverage
from validation.coverage.credit import Credit, credit_for, delta_coverage
from validation.runs.runners import make_runner


def measured(contexts):
    """A run's measurement: per line of pkg.py, the tests that executed it."""
    return coverage.Measured(
        {"pkg.py": frozenset(contexts)},
        {"pkg.py": {line: tuple(tests) for line, tests in contexts.items()}},
    )


def test_lines_run_outside_the_predictions_tests_are_not_credited():
    run = measured(
        {
            1: [""],  # run while collecting (an import): it runs with or without the tests
            2: ["t.py::test_old"],
            3: ["t.py::TestNew::test_x[1]", "t.py::test_old"],
            4: ["other.py::test_new"],  # a file the prediction did not touch
        }
    )
    executable = [("after", "pkg.py", n) for n in (1, 2, 3, 4)]
    per_test = Credit({"t.py": {"TestNew"}, "other_new.py": None})
    assert delta_coverage(executable, {"before": run, "after": run}, per_test) == 0.25
    assert delta_coverage(executable, {"before": run, "after": run}, Credit(None)) == 1.0
    assert delta_coverage(executable, {"before": None, "after": run}, per_test) is None
    assert delta_coverage([], {"before": run, "after": run}, per_test) is None


def test_runners_without_per_test_contexts_credit_whole_files_as_an_upper_bound():
    changes = {"tests/test_a.py": {"test_x"}, "tests/test_new.py": None}
    assert credit_for(make_runner("pytest"), changes, sorted(changes)) == Credit(changes)
    for kind in ("unittest", "django", "sympy"):
        whole = credit_for(make_runner(kind), changes, sorted(changes))
        assert whole == Credit(None, upper_bound=True), kind
        assert credit_for(make_runner(kind), changes, ["tests/test_new.py"]) == Credit(None)
