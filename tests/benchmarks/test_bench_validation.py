"""benchmarks/bench_validation.py's phase breakdown: the records' ``phases.json`` of a build,
per record and in total, as Markdown tables and JSON."""

from __future__ import annotations

import json

import pytest

from benchmarks.bench_validation import main
from tests.support.docker import PYTHON
from tests.support.git import GitRepo
from tests.support.records import swe_record, write_records
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS


def _clock(instance: str, phases: dict[str, tuple[float, float, int]]) -> dict:
    """A ``phases.json`` as validation writes it: phase → (wall, CPU, entries)."""
    return {
        "instance_id": instance,
        "version": 1,
        "wall_s": sum(wall for wall, _, _ in phases.values()),
        "cpu_s": sum(cpu for _, cpu, _ in phases.values()),
        "phases": {
            name: {"wall_s": wall, "cpu_s": cpu, "count": count}
            for name, (wall, cpu, count) in phases.items()
        },
    }


def test_a_finished_work_dir_is_broken_down_per_record_and_in_total(tmp_path, capsys):
    work = tmp_path / "quick"
    clocks = {
        "a__b-1": {"build": (2.0, 1.0, 1), "run.golden": (5.0, 0.5, 2), "other": (1.0, 0.5, 0)},
        "a__b-2": {"build": (1.0, 0.5, 1), "run.golden": (3.0, 0.5, 2),
                   "run.repeat": (4.0, 0.25, 8), "store": (0.0, 0.0, 1)},
    }  # fmt: skip
    for instance, phases in clocks.items():
        logs = work / "logs" / instance / "0123456789ab"
        logs.mkdir(parents=True)
        (logs / "phases.json").write_text(json.dumps(_clock(instance, phases)))
    out = tmp_path / "phases.json"
    assert main(["--phases-from", str(work), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "### quick (2 records)" in printed
    # wall / CPU per phase, the runs of every kind summed and counted
    assert (
        "| a__b-1 | 2 | 8.00 | 2.00 | – | – | 2.00 / 1.00 | – | 5.00 / 0.50 | – | – | – | – "
        "| 1.00 / 0.50 |" in printed
    )
    assert (
        "| a__b-2 | 10 | 8.00 | 1.25 | – | – | 1.00 / 0.50 | – | 7.00 / 0.75 | – | – | – "
        "| 0.00 / 0.00 | – |" in printed
    )
    assert "| run.golden | 4 | 8.00 | 50.0 % | 1.00 | 30.8 % |" in printed
    assert "| run.repeat | 8 | 4.00 | 25.0 % | 0.25 | 7.7 % |" in printed
    assert "| **total** | | 16.00 | 100 % | 3.25 | 100 % |" in printed
    table = printed[printed.index("| phase | entries") :].splitlines()
    assert [row.split(" | ")[0] for row in table[2:7]] == [
        "| build",
        "| run.golden",
        "| run.repeat",
        "| store",
        "| other",
    ]  # fmt: skip (validation's order, other last)
    found = json.loads(out.read_text())
    assert found["quick"]["total"]["run.golden"] == {"wall_s": 8.0, "cpu_s": 1.0, "count": 4}
    assert found["quick"]["total"]["total"]["wall_s"] == 16.0
    assert sorted(found["quick"]["records"]) == ["a__b-1", "a__b-2"]


@pytest.mark.slow
def test_a_build_with_a_recipes_settings_is_timed_phase_by_phase(tmp_path, capsys):
    """``--phases`` runs ``swt-builder build`` with the recipe's validation settings on a
    fixture repository and reads its record's clock back, the store write included."""
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    record = swe_record("fixture/bench", 1, base, patch, repo.diff({"tests/test_pkg.py": ADD_TEST}))
    records = write_records(tmp_path / "records.jsonl", [record, {**record, "instance_id": "x-2"}])
    config = tmp_path / "swt-builder.toml"
    config.write_text(
        f'name = "bench"\n[source]\nkind = "swe-bench"\npath = "{records}"\n'
        f'[repos]\n"fixture/bench" = "{repo.path}"\n[text]\nenabled = false\n'
        f'[validation]\nbackend = "local"\npython = "{PYTHON}"\npackages = ["pytest"]\n'
        "timeout_s = 20.0\n"
    )
    recipe = tmp_path / "twice.toml"
    recipe.write_text("[validation]\nrepetitions = 2\ncoverage = true\n")
    out = tmp_path / "phases.json"
    argv = ["--phases", "--config", str(config), "--out", str(tmp_path / "out"),
            "--recipe", str(recipe), "--instance", "fixture__bench-1",
            "--env-dir", str(tmp_path / "envs"), "--json", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert '### twice (1 records; settings {"coverage": true, "repetitions": 2}' in printed
    assert "| fixture__bench-1 | 4 |" in printed  # the first pair and one repetition per side
    assert "| store | 1 |" in printed
    found = json.loads(out.read_text())["twice"]
    clock = found["records"]["fixture__bench-1"]
    assert set(clock["phases"]) == {
        "mirror", "resolve", "build", "checkout", "run.golden", "run.repeat", "coverage",
        "grading", "record", "store", "other",
    }  # fmt: skip
    assert clock["phases"]["run.golden"]["count"] == 2
    assert found["build_wall_s"] > clock["wall_s"] > 0
    assert (tmp_path / "envs").is_dir()  # the environment was built where it was told
