"""ΔC credits the lines the prediction's own tests execute, not those of the tests beside them
in the files it changed — real runs of fixture datasets through the local backend — and so
does validation's golden coverage: the golden tests as a prediction score what it recorded."""

import json

import pytest

from builder.evaluate.run import Request, evaluate
from builder.evaluate.strict.runs import _credit
from builder.evaluate.strict.scripts import ScriptRunner
from tests.support.validated import validated_release
from validation.coverage.credit import Credit
from validation.runs.runners import make_runner

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
ADDS_A_TEST_ONLY = "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
CHANGES_A_TEST = (
    "--- a/tests/test_pkg.py\n+++ b/tests/test_pkg.py\n@@ -8,2 +8,2 @@\n"
    " def test_add_later():\n-    pass\n+    assert add(1, 2) == 3\n"
)


def _validated_release(root, code, fixed, tests, golden, copies):
    ids = [f"fixture__pair-{n}" for n in copies]
    files = {"pkg/__init__.py": code, "tests/test_pkg.py": tests}
    return validated_release(root, REPO, files, fixed, golden, ids)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """One instance whose fix changes two lines, ``add``'s and ``double``'s (executable on both
    sides: four lines), validated with coverage and copied under two ids."""
    root = tmp_path_factory.mktemp("delta")
    directory, config, validated = _validated_release(root, CODE, FIXED, TESTS, GOLDEN, (1, 2))
    assert validated.golden_coverage == 1.0  # the golden test_add and test_double run them all
    return directory, config


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
    request = Request(
        semantics="strict", dataset=str(directory), predictions=str(predictions), run_id="delta"
    )
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


LIMITED = "LIMIT = 1\n\n\n" + CODE  # a line run at import: while pytest collects
LIMITED_FIXED = "LIMIT = 2\n\n\n" + FIXED


def test_gold_reproduces_the_golden_coverage_validation_recorded(tmp_path):
    """The golden test patch adds test_add to a file whose test_double_runs already runs
    double's fixed line: validation credits the golden tests with add's line only (not
    double's, nor LIMIT's, run at import), and the golden tests evaluated as a prediction
    score exactly that."""
    directory, config, validated = _validated_release(
        tmp_path, LIMITED, LIMITED_FIXED, TESTS, TESTS + ADDS_A_TEST_ONLY, (1,)
    )
    assert validated.golden_coverage == round(2 / 6, 6)  # add's line of six, on each side
    request = Request(semantics="strict", dataset=str(directory), predictions="gold", run_id="gold")
    evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "gold" / "instances" / "fixture__pair-1.json"
    score = json.loads(out.read_text())["score"]
    assert score["coverage"] == validated.golden_coverage
    assert score["coverage_upper_bound"] is False


def test_repro_scripts_are_credited_whole():
    changes = {"tests/test_a.py": {"test_x"}}
    assert _credit(ScriptRunner(), changes, sorted(changes)) == Credit(None)
    assert _credit(make_runner("pytest"), changes, sorted(changes)) == Credit(changes)
