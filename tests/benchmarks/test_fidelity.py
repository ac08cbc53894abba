"""benchmarks/fidelity.py: our runs' collection errors are read from runs.jsonl for compare's
evidence; a history's missing content is recovered from --wheels, else stubbed and listed;
each rebuild recipe runs with its own settings beside the quick mode; and a run on the demo
reports through compare."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks.fidelity import (
    main,
    our_collection_errors,
    quick_settings,
    rebuild_recipes,
    run_label,
    runs,
    settings_for,
)
from builder.core.records import RunResult, write_jsonl
from tests.support.demo_mirrors import demo_mirrors


def _run(side: str, suite: str, errors: tuple[str, ...]) -> RunResult:
    return RunResult(
        side=side,
        suite=suite,
        repetition=0,
        command=("python", "-m", "pytest"),
        exit_code=1,
        timed_out=False,
        duration_s=1.0,
        report_found=True,
        tests={},
        collection_errors=errors,
        log_path="golden-before-0.log",
    )


def test_collection_errors_of_the_golden_runs_by_side(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "runs.jsonl",
        [
            _run("before", "golden", ("tests/test_new.py",)),
            _run("before", "golden", ("tests/test_new.py",)),
            _run("after", "golden", ()),
            _run("before", "existing", ("tests/test_old.py",)),
        ],
    )
    assert our_collection_errors(tmp_path) == {"before": ["tests/test_new.py"], "after": []}
    assert our_collection_errors(tmp_path / "none") == {"before": [], "after": []}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fidelity_reports_through_compare_on_the_demo(tmp_path: Path, capsys) -> None:
    paths, repos = demo_mirrors(tmp_path)
    work = tmp_path / "work"
    argv = ["--data", str(paths.records), "--repos-dir", str(repos), "--work-dir", str(work)]
    argv += ["--instance", "swt-demo__calc-7", "--instance", "swt-demo__calc-10"]
    exclusions = tmp_path / "filter_cases.txt"
    exclusions.write_text("# excluded\nswt-demo__calc-10\nswt-demo__calc-99\n")
    recipe = ["--recipe", "recipes/swt-bench/verified.toml", "--exclusions", str(exclusions)]
    assert main([*argv, "--mode", "tuned", "--timeout", "60", *recipe]) == 0
    printed = capsys.readouterr().out
    # each run beside the exclusion list, and the recipe's run beside the quick one
    beside = (
        "2 records decided: both keep 1, both leave out 1, only we drop 0, only the list excludes 0"
    )
    assert printed.count(beside) == 2
    assert "same decision and lists (tuned, tuned+verified)" in printed
    saved = json.loads((work / "decisions-tuned+verified.json").read_text())
    assert saved["swt-demo__calc-10"]["outcome"] == "no_fail_to_pass"
    assert (
        saved["swt-demo__calc-7"]["outcome"] == "kept" and saved["swt-demo__calc-7"]["FAIL_TO_PASS"]
    )
    row = next(line for line in printed.splitlines() if line.startswith("swt-demo/calc"))
    # records, kept, exact F→P, as defined, env. differences, exact P→P, Jaccards, unexplained
    assert row.split() == ["swt-demo/calc", "2", "1", "1", "1", "0", "1", "1.000", "1.000", "0"]
    assert re.search(r"collection_abort +0\n", printed)
    report = json.loads((work / "fidelity-tuned.json").read_text())
    assert report["complete"] is True
    rows = {row["instance_id"]: row for row in report["instances"]}
    assert rows["swt-demo__calc-7"]["labels"]["FAIL_TO_PASS"]["exact"] is True
    assert rows["swt-demo__calc-10"]["ours"] == {
        "kept": False,
        "stage": "validate",
        "reason": "no_fail_to_pass",
    }
    (dropped,) = (work / "rejected-tuned" / "validate.jsonl").read_text().splitlines()
    assert json.loads(dropped)["evidence"]["fail_to_fail"]
    # the machine time each repository took, from the run's files: the two validations'
    # test runs and the one environment they share, built in this run
    spent = json.loads((work / "fidelity-tuned-time.json").read_text())["swt-demo/calc"]
    assert spent["environments"] == 1 and spent["environment_s"] > 0
    assert 0 < spent["validation_s"] < 600
    times = printed.split("machine time (tuned):\n", 1)[1].splitlines()
    assert times[0].split() == ["repository", "validation", "min", "environments", "built",
                                "building", "min"]  # fmt: skip
    assert times[1].split()[0] == "calc" and times[1].split()[2] == "1"
    assert times[2].split()[0] == "all"
    # read again from the store (--only-stored): the same figures, from the same files
    assert main([*argv, "--mode", "tuned", "--timeout", "60", "--only-stored"]) == 0
    assert json.loads((work / "fidelity-tuned-time.json").read_text())["swt-demo/calc"] == spent


def test_other_histories_give_submodules_their_repositories(tmp_path: Path) -> None:
    from benchmarks.fidelity import other_histories

    for name in ("astropy+astropy", "astropy+astropy-helpers"):
        subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / name / "repo")], check=True)
    (tmp_path / "not-a-repo+x").mkdir()
    assert other_histories(tmp_path) == {
        "astropy/astropy": str(tmp_path / "astropy+astropy" / "repo"),
        "astropy/astropy-helpers": str(tmp_path / "astropy+astropy-helpers" / "repo"),
    }


def _args(**given) -> argparse.Namespace:
    quick = dict(backend="local", timeout=1800.0, repetitions=1, coverage=False, spec_dir=[])
    return argparse.Namespace(**{**quick, "resolve_as_of": "", "python_choice": None, **given})


def test_each_rebuild_recipe_runs_with_its_own_settings_beside_the_quick_mode() -> None:
    """lite.toml measures coverage over five runs per side: its sphinx records all dropped
    runner_failed while the quick mode (one run, no coverage) kept them."""
    recipes = rebuild_recipes()
    assert [recipe.stem for recipe in recipes] == ["full", "lite", "verified"]
    lite = recipes[1]
    assert runs(("tuned", "dated"), [lite]) == [
        ("tuned", None), ("tuned", lite), ("dated", None), ("dated", lite),
    ]  # fmt: skip
    args = _args()
    quick = settings_for("tuned", args)
    assert (quick.repetitions, quick.coverage) == (1, False)
    # the command line's defaults are the quick mode's, for other benchmarks too
    assert quick_settings("tuned") == quick
    own = settings_for("tuned", args, lite)
    assert (own.repetitions, own.coverage, own.timeout_s) == (5, True, 900.0)
    assert own.bundled_specs and own.backend == "local"
    assert not settings_for("dated", args, lite).bundled_specs  # the spec mode still decides
    assert run_label("tuned", args, lite) == "tuned+lite"
    assert run_label("dated", _args(repetitions=3, coverage=True)) == "dated+3x+cov"
    # the command line's repetitions and coverage are the quick mode's, never a recipe's
    assert run_label("tuned", _args(repetitions=3), lite) == "tuned+lite"
    assert settings_for("tuned", _args(repetitions=3), lite).repetitions == 5
    # the Python choice: the default unless named, in the quick mode and a recipe's alike
    assert own.python_choice == settings_for("dated", args).python_choice == "median"
    newest = _args(python_choice="newest")
    assert settings_for("dated", newest).python_choice == "newest"
    assert settings_for("tuned", newest, lite).python_choice == "newest"
    assert run_label("dated", newest) == "dated+py-newest"


def test_the_reference_mode_uses_the_reference_files_over_the_bundled_specs(tmp_path) -> None:
    args = _args(reference_dir=tmp_path)
    quick = settings_for("reference", args)
    assert quick.reference_environments == str(tmp_path) and quick.bundled_specs
    assert quick_settings("reference", tmp_path) == quick
    verified = rebuild_recipes()[2]
    own = settings_for("reference", args, verified)
    assert own.reference_environments == str(tmp_path) and own.repetitions == 5
    assert settings_for("tuned", args, verified).reference_environments == ""
    assert run_label("reference", args, verified) == "reference+verified"


def test_missing_content_is_recovered_from_the_wheels_and_else_stubbed_in_every_setting(
    tmp_path,
) -> None:
    """The histories the tool library brings lack some large files: the measurement recovers
    them from --wheels and stubs the rest (listed per record), in the quick mode and a
    recipe's settings alike."""
    verified = rebuild_recipes()[2]
    for given in (_args(wheels=tmp_path), _args(wheels=None)):
        for settings in (settings_for("tuned", given), settings_for("tuned", given, verified)):
            assert settings.stub_missing
            assert settings.repair_from == ([str(tmp_path)] if given.wheels else [])
