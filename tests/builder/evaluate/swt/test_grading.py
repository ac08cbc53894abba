"""SWT-Bench's grading rules, each pinned on a small case worked out by hand from its code
(``src/grading.py``, ``figures/util.py``)."""

from builder.core.records import RunResult, TestStatus
from builder.evaluate.swt import grading as g
from builder.evaluate.swt import metrics as m

P, F, S, E = g.PASSED, g.FAILED, g.SKIPPED, g.ERROR

GOLDEN = (
    "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n"
    "@@ -1,3 +1,4 @@\n def add(a, b):\n-    return a - b\n+    total = a + b\n+    return total\n"
    " \n"
)
"""Removes line 2 (of R) and adds lines 2 and 3 (of R∘X)."""


def _run(tests=None, errors=(), timed_out=False):
    return RunResult(
        side="before", repetition=0, command=("python",), exit_code=0, timed_out=timed_out,
        duration_s=0.1, report_found=True, tests=tests or {}, collection_errors=errors,
        log_path="x.log",
    )  # fmt: skip


def test_only_passed_and_failed_are_states_the_rest_is_x():
    """get_eval_report: x→P is F→P, x→F is F→F, P→x is P→F, F→x and x→x are UNMATCHED."""
    pre = {"xp": S, "xf": E, "px": P, "fx": F, "xx": S, "pp": P, "ff": F}
    post = {"xp": P, "xf": F, "px": E, "fx": S, "xx": E, "pp": P, "ff": F}
    report = g.eval_report(pre, post)
    assert report == {
        g.FAIL_TO_PASS: ["xp"],
        g.PASS_TO_PASS: ["pp"],
        g.FAIL_TO_FAIL: ["ff", "xf"],
        g.PASS_TO_FAIL: ["px"],
        g.UNMATCHED: ["fx", "xx"],
    }


def test_a_test_missing_after_that_passed_before_is_p_to_f():
    """P→missing is P→F (absent from the post run's map)."""
    assert g.eval_report({"t": P}, {})[g.PASS_TO_FAIL] == ["t"]


def test_status_map_of_the_toolkits_own_runner():
    """(A unittest repository SWT-Bench does not know.) Collection errors are an ERROR under
    the file's path; xfail/xpass/missing are absent; a timed-out run gives nothing."""
    run = _run(
        {"a::t1": TestStatus.PASSED, "a::t2": TestStatus.XFAIL, "a::t3": TestStatus.SKIPPED},
        errors=("b.py",),
    )
    assert g.status_map(run) == {"a::t1": P, "a::t3": S, "b.py": E}
    assert g.status_map(_run({"a::t": TestStatus.PASSED}, timed_out=True)) == {}


def _report(pred, base):
    return {"tests_pred": pred, "tests_base": base}


def _cats(f2p=(), p2p=(), f2f=(), p2f=(), unmatched=()):
    return {
        g.FAIL_TO_PASS: list(f2p), g.PASS_TO_PASS: list(p2p), g.FAIL_TO_FAIL: list(f2f),
        g.PASS_TO_FAIL: list(p2f), g.UNMATCHED: list(unmatched),
    }  # fmt: skip


def test_success_needs_an_added_f2p_the_base_f2p_kept_and_nothing_broken():
    """get_resolution_success: pred F→P ⊇ base F→P with one more, no added P→F, no added F→F."""
    base = _cats(f2p=["old"], p2p=["keep"])
    assert g.resolution(_cats(f2p=["old", "new"], p2p=["keep"]), base) == (True, 1)
    assert g.resolution(_cats(f2p=["new"], p2p=["keep"]), base) == (False, 1)  # base F→P lost
    assert g.resolution(_cats(f2p=["old"]), base) == (False, 0)  # nothing added
    # an existing test the prediction breaks on both sides: added F→F blocks success
    assert g.resolution(_cats(f2p=["old", "new"], f2f=["keep"]), base) == (False, 1)
    assert g.resolution(_cats(f2p=["old", "new"], p2f=["keep"]), base) == (False, 1)
    # F→F and P→F that the base has too are not added
    both = _cats(f2p=["old"], f2f=["bad"])
    assert g.resolution(_cats(f2p=["old", "new"], f2f=["bad"]), both) == (True, 1)


def test_pass_to_pass_counts_only_added_tests():
    """get_ptp: a rewritten existing test that passes on both sides is P→P in the base run too,
    so the instance has no *added* P→P (the issue's function-level rewrite row: P→P 0)."""
    base = _cats(p2p=["t_existing"])
    assert not m.pass_to_pass(_report(_cats(p2p=["t_existing"]), base))
    assert m.pass_to_pass(_report(_cats(p2p=["t_existing", "t_new"]), base))


def test_f_to_x_counts_added_f2p_or_f2f():
    """get_ftx: an added F→P or F→F test."""
    base = _cats(f2f=["t"])
    assert not m.fail_to_any(_report(_cats(f2f=["t"]), base))
    assert m.fail_to_any(_report(_cats(f2f=["t", "u"]), base))
    assert m.fail_to_any(_report(_cats(f2p=["v"]), base))


def test_applicability_needs_ten_percent_of_the_base_tests():
    """no_error_filter: the prediction's run reports ≥ 10 % of the base run's test count,
    every category counted (UNMATCHED included); a report without tests is not applicable."""
    base = _cats(p2p=[f"t{i}" for i in range(20)])
    assert m.applicable(_report(_cats(unmatched=["x", "y"]), base))  # 2 ≥ 2
    assert not m.applicable(_report(_cats(unmatched=["x"]), base))  # 1 < 2
    assert not m.applicable({"patch_successfully_applied": False})


def test_coverage_counts_lines_run_more_often_than_in_the_base_run():
    """get_pred_report's ΔC on GOLDEN: removed line 2 executable when gold/base pre traced it;
    added lines 2, 3 when gold/base post did. A line counts when the prediction's count exceeds
    the base count, and every base count is read from base_post — for the removed line too, at
    its number in the fixed file (their quirk): base_post runs line 2 of R∘X 4 times, so the
    prediction's 3 runs of removed line 2 on R do not count."""
    counts = {
        "pred_pre": {"pkg/calc.py": {1: 1, 2: 3}},
        "pred_post": {"pkg/calc.py": {1: 1, 2: 5, 3: 5}},
        "gold_pre": {"pkg/calc.py": {1: 1, 2: 1}},
        "gold_post": {"pkg/calc.py": {1: 1, 2: 1, 3: 1}},
        "base_pre": {},
        "base_post": {"pkg/calc.py": {1: 1, 2: 4, 3: 0}},
    }
    statuses = {name: {} for name in g.RUNS}
    statuses["pred_pre"] = {"t": F}
    statuses["pred_post"] = {"t": P}
    report = g.prediction_report(True, GOLDEN, statuses, counts)
    # executable: removed (calc, 2) via gold_pre; added 2 and 3 via gold_post → 3 lines
    assert report["coverage_pred"] == 1.0  # all three run at least once
    # delta vs base_post: removed 2: 3 - 4 < 0; added 2: 5 - 4 > 0; added 3: 5 - 0 > 0
    assert report["coverage_delta_pred"] == 2 / 3
    # gold: removed 2: 1 - 4; added 2: 1 - 4; added 3: 1 - 0 → one line
    assert report["coverage_delta_gold"] == 1 / 3
    assert report["coverage_base"] == 2 / 3  # base_post at 2 (removed), 2 and 3 (added): 4, 4, 0
    assert report["resolved"] and report["added_f2p"] == 1


def test_a_def_line_run_at_import_counts():
    """A line run only while the module imports counts as any other: its count in the
    prediction's run exceeds the base run's when the base run never imported the module
    (the demo's gold case: ΔC 90 % there, where per-test contexts gave 83.75 %)."""
    counts = {name: {} for name in g.RUNS}
    counts["gold_post"] = {"pkg/calc.py": {2: 0, 3: 0}}
    counts["pred_post"] = {"pkg/calc.py": {2: 1, 3: 0}}  # 2 ran at import, 3 never
    counts["gold_pre"] = {"pkg/calc.py": {2: 0}}
    report = g.prediction_report(True, GOLDEN, {n: {} for n in g.RUNS}, counts)
    assert report["coverage_delta_pred"] == 1 / 3


def test_no_executable_line_leaves_coverage_none_and_not_applied_has_no_tests():
    report = g.prediction_report(True, GOLDEN, {n: {} for n in g.RUNS}, {n: {} for n in g.RUNS})
    assert report["coverage_pred"] is None and "tests_pred" in report
    report = g.prediction_report(False, GOLDEN, {}, {})
    assert not report["patch_successfully_applied"] and "tests_pred" not in report


def test_summary_divides_by_the_fixed_total_and_gold_executable_instances():
    """report.py: rates over the total; ΔCᵃˡˡ = Σ delta / instances whose gold has executable
    lines; Δᔆ over resolved reports with a gold delta, Δ¬ᔆ over the rest of that count."""
    full = _cats(f2p=["n"])
    reports = {
        "a": {"resolved": True, "coverage_delta_pred": 0.5, "coverage_delta_gold": 1.0,
              "tests_pred": full, "tests_base": _cats()},
        "b": {"resolved": False, "coverage_delta_pred": 0.25, "coverage_delta_gold": 0.5,
              "tests_pred": _cats(p2p=["q"]), "tests_base": _cats()},
        "c": {"resolved": False, "coverage_delta_pred": None, "coverage_delta_gold": None,
              "patch_successfully_applied": False},
    }  # fmt: skip
    gold = {"a": True, "b": True, "c": True, "d": False}
    summary = m.summarize(reports, 4, gold)
    assert summary.applicability == 50.0 and summary.success == 25.0
    assert summary.fail_to_pass == 25.0 and summary.pass_to_pass == 25.0
    assert summary.coverage == 100 * 0.75 / 3
    assert summary.coverage_resolved == 50.0
    assert summary.coverage_unresolved == 100 * 0.25 / 2
    assert m.summarize(reports, 4, None).coverage is None


def test_no_gold_executable_line_leaves_the_coverage_rows_out_where_report_py_divides_by_0():
    """SWT-Bench's report.py divides by the gold-executable count and stops when it is 0 (no
    gold run ran a test: pytest 3.3.1 rejecting its --no-header); the table goes without ΔC."""
    reports = {"a": {"resolved": False, "coverage_delta_pred": None, "tests_pred": _cats(),
                     "tests_base": _cats()}}  # fmt: skip
    summary = m.summarize(reports, 1, {"a": False})
    assert summary.coverage is None and summary.coverage_instances == 0
    head, _, *rows = m.table("gold", summary).splitlines()
    assert [row.split("|")[1].strip() for row in [head, *rows]] == [
        "Method", "Applicability (W)", "Success Rate (S)", "F->X", "F->P", "P->P",
    ]  # fmt: skip


def test_the_timeout_per_run_is_swt_bench_s_unless_given():
    """1800 s per run under swt-bench (its harness's default), validation's under strict,
    --timeout over both."""
    from builder.core.config import Config
    from builder.evaluate.run import Request, run_settings

    config = Config()
    swt = Request(dataset="d", predictions="p", run_id="r")
    assert run_settings(swt, config).timeout_s == 1800
    strict = Request(dataset="d", predictions="p", run_id="r", semantics="strict")
    assert run_settings(strict, config).timeout_s == config.validation.timeout_s
    given = Request(dataset="d", predictions="p", run_id="r", timeout_s=60)
    assert run_settings(given, config).timeout_s == 60
