"""ΔC credits the lines the prediction's own tests execute, not those of the tests beside them
in the files it changed — real runs of a fixture dataset through the local backend."""

import json

import pytest

from builder.core.config import Config, ValidationConfig
from builder.evaluate.run import Request, evaluate
from builder.evaluate.stage import Credit, _credit, delta_coverage
from recipes.swe_bench import to_candidate
from tests.support.git import GitRepo
from tests.support.instances import make_release
from tests.support.records import swe_record
from validation import coverage
from validation.runs.runners import make_runner
from validation.stage import ValidateStage

REPO = "fixture/pair"
CODE = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 3 * x\n"
FIXED = CODE.replace("a - b", "a + b").replace("3 * x", "2 * x")
TESTS = (
    "from pkg import add, double\n\n\n"
    "def test_double_runs():\n    double(2)\n\n\n"  # an existing test: runs the fix of double
    "def test_add_later():\n    pass\n"  # an existing test that runs nothing
)
GOLDEN = (
    TESTS
    + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    + "\n\ndef test_double():\n    assert double(2) == 4\n"
)
ADDS_A_TEST = (
    "--- a/tests/test_pkg.py\n+++ b/tests/test_pkg.py\n@@ -9,1 +9,5 @@\n     pass\n"
    "+\n+\n+def test_add():\n+    assert add(1, 2) == 3\n"
)
CHANGES_A_TEST = (
    "--- a/tests/test_pkg.py\n+++ b/tests/test_pkg.py\n@@ -8,2 +8,2 @@\n"
    " def test_add_later():\n-    pass\n+    assert add(1, 2) == 3\n"
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """One instance whose fix changes two lines, ``add``'s and ``double``'s (executable on both
    sides: four lines), validated with coverage and copied under two ids."""
    root = tmp_path_factory.mktemp("delta")
    repo = GitRepo(root / "repo")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    test_patch = repo.diff({"tests/test_pkg.py": GOLDEN})
    settings = ValidationConfig(
        backend="local", python="3.11", packages=["pytest"], timeout_s=60, repetitions=1
    )
    candidate = to_candidate(swe_record(REPO, 1, base, patch, test_patch))
    outcome = ValidateStage(settings, root / "validate", {REPO: str(repo.path)}).process(candidate)
    assert outcome.verdict.kept, outcome.verdict
    validated = outcome.output
    assert validated.golden_coverage == 1.0
    instances = [validated.model_copy(update={"instance_id": f"fixture__pair-{n}"}) for n in (1, 2)]
    release, _ = make_release(root / "dist", instances, size=0)
    config = Config(
        work_dir=root / "work",
        output_dir=root / "out",
        repos={REPO: str(repo.path)},
        jobs=2,
        validation=settings,
    )
    return release.dataset_dir, config


def test_only_the_tests_a_prediction_writes_or_changes_are_credited(dataset, tmp_path):
    directory, config = dataset
    rows = {1: ADDS_A_TEST, 2: CHANGES_A_TEST}
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": f"fixture__pair-{n}", "model_patch": text}) + "\n"
            for n, text in rows.items()
        )
    )
    request = Request(dataset=str(directory), predictions=str(predictions), run_id="delta")
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "delta" / "instances"
    for n, test in ((1, "test_add"), (2, "test_add_later")):
        result = json.loads((out / f"fixture__pair-{n}.json").read_text())
        score = result["score"]
        assert [(t["test"], t["before"], t["after"]) for t in score["transitions"]] == [
            (f"tests/test_pkg.py::{test}", "fail", "pass")
        ]
        # test_double_runs ran double's fixed line on both sides, but it is not the
        # prediction's: only add's line counts, on each side — 2 of the 4 executable lines
        assert score["coverage"] == 0.5, n
        assert score["coverage_upper_bound"] is False
    assert summary.coverage == 50.0


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
    assert _credit(make_runner("pytest"), changes, sorted(changes)) == Credit(changes)
    for kind in ("unittest", "django", "sympy"):
        whole = _credit(make_runner(kind), changes, sorted(changes))
        assert whole == Credit(None, upper_bound=True), kind
        assert _credit(make_runner(kind), changes, ["tests/test_new.py"]) == Credit(None)
