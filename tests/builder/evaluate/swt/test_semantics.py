"""`evaluate --semantics swt-bench` on a fixture dataset, through the real local backend: one
prediction per rule where SWT-Bench's harness and our strict semantics part ways. Each case's
docstring works out by hand what SWT-Bench's code gives (``src/run_evaluation.py`` for the
runs, ``src/grading.py`` for the categories, ``figures/util.py`` for the metrics).

The fixture: ``pkg/__init__.py`` has ``add`` returning ``a - b`` (the bug) and ``double``;
``tests/test_pkg.py`` holds ``test_double``; the golden patch fixes ``add`` (line 2) and the
golden test patch adds ``test_add``."""

import json

import pytest

from builder.cli import main
from builder.core.errors import SwtError
from builder.evaluate.run import EvaluationError, Request, evaluate
from builder.evaluate.swt.report import LOG_DIR, RESULTS_DIR, read_reports
from tests.support.stage_fixtures import CODE, FIXED, TESTS
from tests.support.validated import validated_release

REPO = "fixture/calc"
ADD = "\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def _append(text: str, path: str = "tests/test_pkg.py") -> str:
    """A unified diff appending ``text`` to the fixture's test file (5 lines)."""
    lines = text.strip("\n").splitlines()
    added = "".join(f"+{line}\n" for line in ["", "", *lines])
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -5,1 +5,{len(lines) + 3} @@\n     assert double(2) == 4\n{added}"
    )


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


CODE_FIX = (
    "diff --git a/pkg/__init__.py b/pkg/__init__.py\n--- a/pkg/__init__.py\n+++ b/pkg/__init__.py\n"
    "@@ -1,4 +1,4 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n"
)

CASES = {
    "gold-like": _append(ADD),
    "breaks-existing": _append("double = lambda x: 0" + ADD),
    "skip-then-pass": _append(
        "import pytest\n\n\n@pytest.mark.skipif(add(1, 2) != 3, reason='not fixed')\n"
        "def test_add_later():\n    assert add(1, 2) == 3"
    ),
    "edits-code": _append(ADD) + CODE_FIX,
    "outside-test-paths": _new_file("check_calc.py", "from pkg import add\n" + ADD),
    "does-not-apply": _append(ADD).replace("double(2) == 4", "triple(2) == 4"),
    "one-file-uncollectable": _append(ADD)
    + _new_file(
        "tests/test_new.py",
        "from pkg import triple\n\n\ndef test_triple():\n    assert triple(1) == 3\n",
    ),  # fmt: skip
    "empty": "",
}
FUNCTION_CASES = {
    "rewrite-existing": "diff\ntests/test_pkg.py\nrewrite\n4\n"
    "def test_double():\n    assert double(3) == 6\nend diff\n",
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("swt")
    files = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS}
    ids = [f"fixture__calc-{name}" for name in [*CASES, *FUNCTION_CASES, "no-prediction"]]
    dataset_dir, config, _ = validated_release(root, REPO, files, FIXED, TESTS + ADD, ids)
    return dataset_dir, config, root


def _predictions(root, cases, name, extra=()):
    path = root / f"{name}.jsonl"
    rows = [
        {"instance_id": f"fixture__calc-{case}", "model_name_or_path": "org/m", "model_patch": text}
        for case, text in cases.items()
    ]
    rows += [{"instance_id": i, "model_name_or_path": "org/m", "model_patch": "x"} for i in extra]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def unified_run(dataset):
    """The unified-diff cases, scored once (vanilla: as ``git apply`` takes them)."""
    directory, config, root = dataset
    echoed = []
    predictions = _predictions(root, CASES, "unified", extra=["fixture__calc-unknown"])
    request = Request(dataset=str(directory), predictions=str(predictions), run_id="swt")
    summary = evaluate(request, config, echo=echoed.append)
    out = config.output_dir / "evaluations" / "swt"
    reports = read_reports(out / LOG_DIR / "swt" / "org__m")
    return summary, reports, echoed, out


def _added(report, category):
    return set(report["tests_pred"][category]) - set(report["tests_base"][category])


def test_gold_like_tests_resolve_with_no_added_pass_to_pass(unified_run):
    """pred: test_add F→P, test_double P→P; base (test_pkg.py on R and R∘X): test_double P→P.
    Added F→P {test_add}, added P→P none: resolved, P→P not counted (ours: P→P 100)."""
    _, reports, _, _ = unified_run
    report = reports["fixture__calc-gold-like"]
    assert report["resolved"] and report["added_f2p"] == 1
    assert _added(report, "PASS_TO_PASS") == set()
    assert report["tests_base"]["PASS_TO_PASS"] == ["tests/test_pkg.py::test_double"]


def test_breaking_an_existing_test_blocks_success(unified_run):
    """The module-level ``double = lambda x: 0`` breaks test_double, a test the prediction did
    not write: F→F on both sides, P→P in the base run, so an added F→F — not resolved (strict,
    scoring only test_add, would call it a success)."""
    _, reports, _, _ = unified_run
    report = reports["fixture__calc-breaks-existing"]
    assert _added(report, "FAIL_TO_FAIL") == {"tests/test_pkg.py::test_double"}
    assert _added(report, "FAIL_TO_PASS") == {"tests/test_pkg.py::test_add"}
    assert not report["resolved"]


def test_skipped_before_and_passing_after_is_fail_to_pass(unified_run):
    """x→P counts as F→P: skipped on R (add is wrong), passing on R∘X — resolved (strict: a
    skip is neither pass nor fail, so no F→P)."""
    _, reports, _, _ = unified_run
    report = reports["fixture__calc-skip-then-pass"]
    assert _added(report, "FAIL_TO_PASS") == {"tests/test_pkg.py::test_add_later"}
    assert report["resolved"]


def test_code_edits_are_applied_and_conflict_after_the_golden_patch(unified_run):
    """The prediction fixes add itself: pred_pre (R + prediction) passes test_add; after the
    golden patch the prediction's code hunk no longer applies, so ``git apply`` drops the whole
    prediction and pred_post runs without test_add: P→missing = P→F, added. Applied (𝒲: 2 tests
    against the base run's 1), not resolved. Its runs also name pkg/__init__.py."""
    _, reports, _, _ = unified_run
    report = reports["fixture__calc-edits-code"]
    assert report["patch_successfully_applied"]
    assert _added(report, "PASS_TO_FAIL") == {"tests/test_pkg.py::test_add"}
    assert not report["resolved"]


def test_a_file_outside_the_test_paths_runs(unified_run):
    """check_calc.py is no test file by name, yet every path the patch names runs: test_add
    F→P. The base run names a file R lacks: pytest stops, and their parser reads one ERROR
    test called "file" — so nothing is in the base categories and the F→P is added."""
    _, reports, _, _ = unified_run
    report = reports["fixture__calc-outside-test-paths"]
    assert report["tests_pred"]["FAIL_TO_PASS"] == ["check_calc.py::test_add"]
    assert report["tests_base"]["UNMATCHED"] == ["file"]
    assert report["resolved"]


def test_a_file_that_cannot_be_collected_stops_pytest_and_nothing_is_scored(unified_run):
    """SWT-Bench's command has no ``--continue-on-collection-errors``: test_new.py cannot be
    imported, pytest stops before any test, and their parser reads only ``ERROR
    tests/test_new.py`` from the summary — so test_add, F→P in the other file, is not seen:
    applied (1 test against the base run's 1: its ``file`` error), not resolved."""
    _, reports, _, out = unified_run
    report = reports["fixture__calc-one-file-uncollectable"]
    assert report["patch_successfully_applied"] and not report["resolved"]
    assert report["tests_pred"]["UNMATCHED"] == ["tests/test_new.py"]
    assert not any(report["tests_pred"][c] for c in ("FAIL_TO_PASS", "PASS_TO_PASS"))
    logs = out / "instances"
    assert logs.is_dir()


def test_a_patch_git_apply_rejects_has_no_tests(unified_run):
    """A hunk that does not match, and an empty prediction (vanilla alone runs it anyway: the
    text with binary diffs removed is a newline, which git apply refuses): a report, not
    applied, no tests."""
    _, reports, _, out = unified_run
    for case in ("does-not-apply", "empty"):
        report = reports[f"fixture__calc-{case}"]
        assert not report["patch_successfully_applied"] and "tests_pred" not in report
    # why, in the instance's report: git's own message, not a vague "does not apply"
    result = json.loads((out / "instances" / "fixture__calc-does-not-apply.json").read_text())
    reason = result["score"]["not_applicable"]
    assert reason.startswith("the prediction does not apply to the base commit: prediction")
    assert "patch failed: tests/test_pkg.py" in reason


def test_the_summary_is_swt_bench_s_over_every_instance(unified_run):
    """Over the 10 instances (the function-level case and one without a prediction have no
    report here): 𝒲 = 6/10 (all but does-not-apply, empty and the two unscored), 𝒮 = 3/10
    (gold-like, skip-then-pass, outside-test-paths), F→P = 4/10 (those and breaks-existing),
    F→X = 4/10, P→P = 0. ΔCᵃˡˡ: every instance's gold has executable lines (10); gold-like runs
    add(1, 2) once on each side where the base run of test_pkg.py never calls it: both lines
    count (removed line 2 on R, added line 2 on R∘X), ΔC 1."""
    summary, reports, echoed, _ = unified_run
    assert summary.semantics == "swt-bench"
    assert summary.instances == 10 and summary.reports == 8  # 6 applied, 2 not
    assert summary.applicability == 100 * 6 / 10
    assert summary.success == 100 * 3 / 10
    assert summary.fail_to_pass == 100 * 4 / 10
    assert summary.fail_to_any == 100 * 4 / 10
    assert summary.pass_to_pass == 0.0
    assert summary.coverage_instances == 10
    deltas = {i: r["coverage_delta_pred"] for i, r in reports.items()}
    assert deltas["fixture__calc-gold-like"] == 1.0
    assert summary.coverage == pytest.approx(100 * sum(d or 0 for d in deltas.values()) / 10)
    assert any("fixture__calc-unknown" in line and "skipped" in line for line in echoed)


def test_swt_bench_files_are_written(unified_run):
    _, _, _, out = unified_run
    run_level = json.loads((out / RESULTS_DIR / "org__m.swt.json").read_text())
    assert run_level["total_instances"] == 10
    assert "fixture__calc-gold-like" in run_level["resolved_ids"]
    assert "Applicability (W)" in (out / "report.md").read_text()


def test_a_rewritten_existing_test_adds_no_pass_to_pass(dataset):
    """custom (function-level) rewrite of test_double, passing on both sides: P→P in the
    prediction's run and in the base run, so no *added* P→P (strict counts it)."""
    directory, config, root = dataset
    predictions = _predictions(root, FUNCTION_CASES, "function")
    request = Request(
        dataset=str(directory), predictions=str(predictions), run_id="fn",
        patch_types=("custom",), instances=("fixture__calc-rewrite-existing",),
    )  # fmt: skip
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "fn"
    report = read_reports(out / LOG_DIR / "fn" / "org__m")["fixture__calc-rewrite-existing"]
    assert report["tests_pred"]["PASS_TO_PASS"] == ["tests/test_pkg.py::test_double"]
    assert summary.pass_to_pass == 0.0 and summary.applicability == 100.0


def test_a_second_method_costs_only_its_own_two_runs(dataset, tmp_path):
    """The base and gold runs of an instance are stored once: another method whose
    prediction names the same files runs only pred_pre and pred_post."""
    directory, config, root = dataset
    one = {"gold-like": _append("def test_add_again():\n    assert add(2, 2) == 4")}
    predictions = _predictions(root, one, "second")
    request = Request(
        dataset=str(directory), predictions=str(predictions), run_id="second",
        instances=("fixture__calc-gold-like",),
    )  # fmt: skip
    evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "second" / "instances"
    result = json.loads((out / "fixture__calc-gold-like.json").read_text())
    assert result["runs_made"] == ["pred_pre", "pred_post"]
    assert result["run_names"] == [
        "pred_pre", "pred_post", "gold_pre", "gold_post", "base_pre", "base_post",
    ]  # fmt: skip


def test_ids_and_denominator(dataset, tmp_path, capsys):
    """Unknown prediction ids: a warning and skipped (with or without --instances), an error
    with --strict-ids; --denominator scores over a fixed list, absent ids counted as misses."""
    directory, config, root = dataset
    predictions = _predictions(root, {}, "unknown", extra=["nope__nope-1"])
    request = Request(
        dataset=str(directory), predictions=str(predictions), run_id="ids", strict_ids=True
    )
    with pytest.raises(EvaluationError, match="nope__nope-1"):
        evaluate(request, config, echo=lambda _: None)
    ids = tmp_path / "ids.txt"
    ids.write_text("fixture__calc-gold-like\nfixture__calc-absent\n")
    good = _predictions(root, {"gold-like": CASES["gold-like"]}, "denominator")
    request = Request(
        dataset=str(directory), predictions=str(good), run_id="den", denominator=str(ids)
    )
    summary = evaluate(request, config, echo=lambda _: None)
    assert summary.instances == 2 and summary.not_in_dataset == 1
    assert summary.success == 50.0


def test_options_of_the_other_semantics_are_refused(dataset, capsys):
    directory, config, root = dataset
    args = ["evaluate", "--dataset", str(directory), "--predictions", "gold", "--run-id", "x"]
    assert main([*args, "--mutation"]) == 2
    assert "--semantics strict" in capsys.readouterr().err
    assert main([*args, "--semantics", "strict", "--patch-types", "fuzzy"]) == 2
    assert "--patch-types" in capsys.readouterr().err


CLASS_TESTS = (
    "from pkg import add, double\n\n\nclass TestCalc:\n"
    "    def test_double(self):\n        assert double(2) == 4\n"
)


def test_a_method_inserted_into_a_test_class_lands_at_the_module_end(tmp_path):
    """custom insert of ``def test_add(self)`` at a line inside TestCalc: SWT-Bench's applier
    appends every insert to the module's end, so test_add becomes a module-level function
    whose ``self`` is an unknown fixture — ERROR on both sides, x→x, UNMATCHED: not resolved
    (our strict applier puts it into the class: F→P, resolved)."""
    files = {"pkg/__init__.py": CODE, "tests/test_pkg.py": CLASS_TESTS}
    golden = CLASS_TESTS + "\n    def test_add(self):\n        assert add(1, 2) == 3\n"
    ids = ["fixture__calc-insert"]
    directory, config, _ = validated_release(tmp_path, REPO, files, FIXED, golden, ids)
    method = "def test_add(self):\n    assert add(1, 2) == 3\n"
    block = f"diff\ntests/test_pkg.py\ninsert\n6\n{method}end diff\n"
    predictions = _predictions(tmp_path, {"insert": block}, "insert")
    request = Request(
        dataset=str(directory), predictions=str(predictions), run_id="ins", patch_types=("custom",)
    )
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "ins"
    report = read_reports(out / LOG_DIR / "ins" / "org__m")["fixture__calc-insert"]
    assert report["tests_pred"]["UNMATCHED"] == ["tests/test_pkg.py::test_add"]
    assert not report["resolved"] and summary.success == 0.0
    strict = Request(
        dataset=str(directory), predictions=str(predictions), run_id="ins-strict",
        semantics="strict", patch_format="function",
    )  # fmt: skip
    assert evaluate(strict, config, echo=lambda _: None).success == 100.0


def test_report_files_are_read_back_into_the_same_table(unified_run, capsys):
    """--swt-reports scores a folder of report.json files (SWT-Bench's harness writes the same
    layout) with nothing run: the figures the evaluation printed."""
    summary, _, _, out = unified_run
    folder = out / LOG_DIR / "swt" / "org__m"
    assert main(["evaluate", "--swt-reports", str(folder), "--total", "10"]) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if "Success Rate" in line)
    assert row.split("|")[2].strip() == f"{summary.success:.1f}"
    assert "8 reports over 10 instances" in printed
    assert main(["evaluate", "--swt-reports", str(folder)]) == 2
    assert "--total" in capsys.readouterr().err
    assert main(["evaluate", "--predictions", "gold"]) == 2
    assert "--dataset, --run-id" in capsys.readouterr().err


def test_a_fault_of_the_machine_scores_nothing(dataset, tmp_path):
    """A mirror that cannot be had is no miss of the prediction: the evaluation stops with one
    line naming the fault, stores nothing for it, and a run after the fault is fixed scores."""
    directory, config, root = dataset
    gone = {REPO: str(tmp_path / "gone")}  # and a work dir with no mirror of it yet
    broken = config.model_copy(update={"repos": gone, "work_dir": tmp_path / "work"})
    good = _predictions(root, {"gold-like": CASES["gold-like"]}, "fault")
    request = Request(
        dataset=str(directory), predictions=str(good), run_id="fault",
        instances=("fixture__calc-gold-like",),
    )  # fmt: skip
    with pytest.raises(SwtError, match="fault of (the|this) machine"):
        evaluate(request, broken, echo=lambda _: None)
    assert evaluate(request, config, echo=lambda _: None).success == 100.0
