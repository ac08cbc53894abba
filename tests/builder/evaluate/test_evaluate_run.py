"""Predictions of known outcome scored on a fixture dataset, through the real local backend."""

import json

import pytest

from builder.cli import main
from builder.evaluate.run import NO_PREDICTION, Request, evaluate
from builder.release.golden_mutation import read_golden_mutation
from builder.release.manifest import hash_files, read_manifest
from tests.support.stage_fixtures import CODE, FIXED, TESTS
from tests.support.validated import validated_release

REPO = "fixture/calc"
ADD = "\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def unified(body: str, path: str = "tests/test_pkg.py", start: int = 5) -> str:
    lines = body.strip("\n").splitlines()
    added = "".join(f"+{line}\n" for line in ["", "", *lines])
    return (
        f"--- a/{path}\n+++ b/{path}\n@@ -{start},1 +{start},{len(lines) + 3} @@\n"
        f"     assert double(2) == 4\n{added}"
    )


PREDICTIONS = {
    1: unified("def test_add():\n    assert add(1, 2) == 3"),  # F→P: success
    2: unified("def test_add_wrong():\n    assert add(1, 2) == 4"),  # F→F
    3: unified("def test_add_old():\n    assert add(1, 2) == -1"),  # P→F
    4: unified("def test_x():\n    pass", start=40).replace("double(2)", "triple(2)"),  # no match
    5: f"diff\ntests/test_pkg.py\ninsert\nEOF\n{ADD.strip()}\nend diff\n",  # function format
    6: unified("def test_add():\n    assert add(1, 2) == 3")
    + "--- a/pkg/__init__.py\n+++ b/pkg/__init__.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
    "-    return a - b\n+    return a + b\n",  # also edits the code: left out, flagged
    8: unified("def test_double_again():\n    assert double(3) == 6"),  # P→P only
}
HANGS = unified("def test_hangs():\n    while add(1, 2) != 3:\n        pass")
"""Loops forever before the fix (1 - 2 is never 3) and passes after it."""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A dataset built as the toolkit builds one: the fixture's candidate validated (coverage
    on), then copied under eight ids."""
    root = tmp_path_factory.mktemp("evaluate")
    files = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS}
    ids = [f"fixture__calc-{n}" for n in range(1, 9)]
    dataset_dir, config, validated = validated_release(root, REPO, files, FIXED, TESTS + ADD, ids)
    assert validated.golden_coverage == 1.0
    predictions = root / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps(
                {
                    "instance_id": f"fixture__calc-{n}",
                    "model_name_or_path": "m",
                    "model_patch": text,
                }  # fmt: skip
            )
            + "\n"
            for n, text in PREDICTIONS.items()
        )
    )
    return dataset_dir, config, predictions


def test_known_outcomes_give_known_metrics(dataset):
    directory, config, predictions = dataset
    request = Request(
        semantics="strict", dataset=str(directory), predictions=str(predictions), run_id="known"
    )
    summary = evaluate(request, config, echo=lambda _: None)
    assert summary.instances == 8
    assert summary.applicability == 75.0  # 4 does not apply, 7 has no prediction
    assert summary.success == 37.5  # 1, 5, 6
    assert summary.fail_to_any == 50.0  # 1, 2, 5, 6
    assert summary.fail_to_pass == 37.5
    assert summary.pass_to_pass == 12.5  # 8
    assert summary.edits_code == 1
    # ΔC: the fix's one line runs under the tests of 1, 2, 3, 5, 6 and not under 8's; 4 (not
    # applicable) and 7 (no prediction) run nothing: 0, over every instance (each has the line)
    assert summary.coverage_instances == 8
    assert summary.coverage == 62.5  # 1, 2, 3, 5, 6 of 8
    assert summary.coverage_fail_to_pass == 100.0  # 1, 5, 6
    assert summary.coverage_rest == 40.0  # 2, 3 of 2, 3, 4, 7, 8
    out = config.output_dir / "evaluations" / "known"
    report = json.loads((out / "summary.json").read_text())
    assert report["not_applicable"]["fixture__calc-7"] == NO_PREDICTION
    assert "hunk 1" in report["not_applicable"]["fixture__calc-4"]
    three = json.loads((out / "instances" / "fixture__calc-3.json").read_text())
    assert [(t["test"], t["before"], t["after"]) for t in three["score"]["transitions"]] == [
        ("tests/test_pkg.py::test_add_old", "pass", "fail")
    ]  # test_double ran too, but the prediction did not write it
    five = json.loads((out / "instances" / "fixture__calc-5.json").read_text())
    assert five["patch_format"] == "function" and five["score"]["applicable"]
    six = json.loads((out / "instances" / "fixture__calc-6.json").read_text())
    assert six["code_files"] == ["pkg/__init__.py"] and six["score"]["edits_code"]
    assert "| m | 75.0 | 37.5 | 50.0 | 37.5 | 12.5 |" in (out / "report.md").read_text()

    again = Request(**{**request.__dict__, "report_only": True})
    assert evaluate(again, config, echo=lambda _: None) == summary


def test_gold_scores_every_instance(dataset):
    directory, config, _ = dataset
    summary = evaluate(
        Request(semantics="strict", dataset=str(directory), predictions="gold", run_id="gold"),
        config,
        echo=lambda _: None,
    )
    assert summary.instances == 8 and summary.success == 100.0
    assert summary.coverage == 100.0  # each instance's ΔC is its recorded golden coverage
    report = json.loads((config.output_dir / "evaluations" / "gold" / "summary.json").read_text())
    assert report["summary"]["coverage_instances"] == 8


def test_mutants_of_the_fix_are_killed_only_by_tests_that_check_it(dataset):
    directory, config, predictions = dataset
    request = Request(
        semantics="strict",
        dataset=str(directory),
        predictions=str(predictions),
        run_id="mutation",
        instances=("fixture__calc-1", "fixture__calc-8"),
        mutants=5,
    )
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "mutation" / "instances"
    checks = json.loads((out / "fixture__calc-1.json").read_text())["mutants"]
    ignores = json.loads((out / "fixture__calc-8.json").read_text())["mutants"]
    described = {m["description"] for m in checks}
    assert "line 2: a + b → a - b" in described  # the fixed line, mutated
    assert all(m["killed_by"] == ["tests/test_pkg.py::test_add"] for m in checks)
    assert len(ignores) == len(checks) and not any(m["killed_by"] for m in ignores)
    assert summary.mutants == 2 * len(checks) and summary.mutation_score == 50.0
    text = (config.output_dir / "evaluations" / "mutation" / "report.md").read_text()
    assert "Mutation score: 50.0 %" in text


def test_the_golden_kill_rate_becomes_a_statistic_of_the_release(dataset):
    directory, config, _ = dataset
    request = Request(
        semantics="strict", dataset=str(directory), predictions="gold", run_id="gold-mut", mutants=2
    )
    summary = evaluate(request, config, echo=lambda _: None)
    statistic = read_golden_mutation(directory)["full/test"]
    assert statistic["instances"] == 8 and statistic["cap"] == 2
    assert statistic["mutants"] == summary.mutants == 16  # two per instance
    assert statistic["killed"] == summary.mutants_killed
    assert statistic["kill_rate"] == summary.mutation_score
    assert sum(op["mutants"] for op in statistic["by_operator"].values()) == 16
    card = (directory / "README.md").read_text()
    assert f"| full | test | 8 | 16 | 0 | {statistic['killed']} |" in card
    assert read_manifest(directory)["files"] == hash_files(directory)


def test_repro_mode_scores_scripts_by_their_exit_status(dataset, tmp_path):
    directory, config, _ = dataset

    def script(path, body):
        lines = body.splitlines()
        added = "".join(f"+{line}\n" for line in lines)
        return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{added}"

    reproduces = script("reproduce.py", "from pkg import add\nassert add(1, 2) == 3")
    rows = {
        1: reproduces,
        2: script("scripts/check.py", "import sys\nsys.exit(0)"),  # passes on both sides
        3: unified("def test_add():\n    assert add(1, 2) == 3"),  # a test, no script
    }
    predictions = tmp_path / "repro.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": f"fixture__calc-{n}", "model_patch": text}) + "\n"
            for n, text in rows.items()
        )
    )
    request = Request(
        semantics="strict",
        dataset=str(directory),
        predictions=str(predictions),
        run_id="repro",
        instances=("fixture__calc-1", "fixture__calc-2", "fixture__calc-3"),
        mode="repro",
    )
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "repro"
    one = json.loads((out / "instances" / "fixture__calc-1.json").read_text())
    assert [(t["test"], t["before"], t["after"]) for t in one["score"]["transitions"]] == [
        ("reproduce.py", "fail", "pass")
    ]
    report = json.loads((out / "summary.json").read_text())
    assert "adds no reproduction script" in report["not_applicable"]["fixture__calc-3"]
    assert summary.success == pytest.approx(100 / 3, abs=0.01)
    assert summary.pass_to_pass == pytest.approx(100 / 3, abs=0.01)
    assert one["score"]["coverage"] == 1.0  # the script runs the fixed line


def test_a_test_that_hangs_fails_on_that_side_and_is_stopped(dataset, tmp_path):
    directory, config, _ = dataset
    predictions = tmp_path / "hangs.jsonl"
    predictions.write_text(json.dumps({"instance_id": "fixture__calc-1", "model_patch": HANGS}))
    short = config.model_copy(
        update={"validation": config.validation.model_copy(update={"timeout_s": 5})}
    )
    request = Request(
        semantics="strict",
        dataset=str(directory),
        predictions=str(predictions),
        run_id="hangs",
        instances=("fixture__calc-1",),
    )
    summary = evaluate(request, short, echo=lambda _: None)
    out = short.output_dir / "evaluations" / "hangs" / "instances" / "fixture__calc-1.json"
    result = json.loads(out.read_text())
    assert [run["timed_out"] for run in result["runs"]] == [True, False]
    assert [(t["before"], t["after"]) for t in result["score"]["transitions"]] == [("fail", "pass")]
    assert summary.applicability == 100.0 and summary.success == 100.0


def test_the_command_line_names_bad_input(dataset, tmp_path, capsys):
    directory, config, predictions = dataset
    base = ["evaluate", "--dataset", str(directory), "--no-progress"]
    assert main([*base, "--predictions", str(predictions), "--run-id", "../x"]) == 2
    assert "--run-id" in capsys.readouterr().err
    assert main([*base, "--predictions", str(predictions), "--run-id", "r", "--mutants", "3"]) == 2
    assert "--mutants 3 needs --mutation" in capsys.readouterr().err
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"instance_id": "other__repo-1", "model_patch": ""}\n')
    strict = ["--semantics", "strict", "--strict-ids"]
    assert main([*base, "--predictions", str(stray), "--run-id", "r", *strict]) == 2
    assert "other__repo-1" in capsys.readouterr().err
    fresh = ["--work-dir", str(tmp_path / "w"), "--output-dir", str(tmp_path / "o")]
    assert main([*base, "--predictions", "gold", "--run-id", "r", "--report-only", *fresh]) == 2
    assert "no stored result" in capsys.readouterr().err


def test_a_test_file_that_never_imports_fails_on_both_sides(dataset, tmp_path):
    directory, config, _ = dataset
    broken = "import not_a_module\n\n\ndef test_x():\n    assert not_a_module\n"
    lines = broken.splitlines()
    patch = f"--- /dev/null\n+++ b/tests/test_broken.py\n@@ -0,0 +1,{len(lines)} @@\n" + "".join(
        f"+{line}\n" for line in lines
    )
    predictions = tmp_path / "broken.jsonl"
    predictions.write_text(json.dumps({"instance_id": "fixture__calc-1", "model_patch": patch}))
    request = Request(
        semantics="strict",
        dataset=str(directory),
        predictions=str(predictions),
        run_id="broken",
        instances=("fixture__calc-1",),
    )
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / "broken" / "instances" / "fixture__calc-1.json"
    result = json.loads(out.read_text())
    assert [run["collection_errors"] for run in result["runs"]] == [["tests/test_broken.py"]] * 2
    assert [(t["test"], t["before"], t["after"]) for t in result["score"]["transitions"]] == [
        ("tests/test_broken.py", "fail", "fail")
    ]
    assert summary.fail_to_any == 100.0 and summary.success == 0.0
