"""A release as a SWE-bench task repo: our records through it and back, read by swebench itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from swebench.task.checks import check_task_repo, errors
from swebench.task.publish import compile_datasets
from swebench.task.repo import load_task_repo

from builder.core.records import SWE_BENCH_COLUMNS
from builder.task_repo.format import TaskRepoError, read_task
from builder.task_repo.release import (
    Harness,
    dataset_names,
    read_task_repo,
    write_task_repo,
)
from tests.support.instances import make_instance

EVAL = (
    "#!/bin/bash\nset -uxo pipefail\n"
    ": '>>>>> Start Test Output'\npytest -rA\n: '>>>>> End Test Output'\n"
)


def _instances():
    return [
        make_instance(1, hints_text="see the docs\n", run_metadata={"python": "3.11", "x": "1"}),
        make_instance(
            2,
            # CRLF, a trailing space, a tab and text outside ASCII survive as written
            problem_statement="Crash on ünïcode\r\nline with space \n\ttabbed\n",
            patch="diff --git a/a.py b/a.py\r\n--- a/a.py\r\n+++ b/a.py\r\n"
            "@@ -1 +1 @@\r\n-a\r\n+b\r\n",
            issue_numbers=(7,),
            issue_created_at=("2024-03-01T00:00:00Z",),
            version="1.0",
        ),
        make_instance(3, golden_coverage=None, merged_at=None, created_at="2025-01-02T03:04:05Z"),
    ]


def _splits(instances):
    ids = [i.instance_id for i in instances]
    return dataset_names(
        "owner/bench",
        [("full", "test", ids), ("lite", "test", ids[:1]), ("lite", "empty", []),
         ("monthly", "month_2024_03", ids[1:2])],
    )  # fmt: skip


def _harness(instances):
    context = {"build.sh": b"#!/bin/sh\necho 'built' \\\n  $HOME\n"}  # beside the Dockerfile
    return {
        i.instance_id: Harness(EVAL, "FROM scratch\nCOPY build.sh /\n", "parse_log_pytest", context)
        for i in instances
    }


@pytest.fixture
def exported(tmp_path):
    instances = _instances()
    out = tmp_path / "tasks-repo"
    write_task_repo(out, "bench", "1.2.0", instances, _splits(instances), _harness(instances))
    return out, instances


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_export_import_export_is_byte_identical(exported, tmp_path):
    out, instances = exported
    read = read_task_repo(out)
    assert read.instances == sorted(instances, key=lambda i: i.instance_id)
    assert (read.name, read.version) == ("bench", "1.2.0")
    again = tmp_path / "again"
    write_task_repo(again, read.name, read.version, read.instances, read.splits, read.harness)
    assert _tree(again) == _tree(out)


def test_swebench_checks_the_repo_and_reads_every_column_back(exported):
    out, instances = exported
    assert errors(check_task_repo(out)) == []
    loaded = {row["instance_id"]: row for row in load_task_repo(out)}
    for instance in instances:
        row, theirs = instance.to_row(), loaded[instance.instance_id]
        for column in SWE_BENCH_COLUMNS:
            expected = (
                json.loads(row[column])
                if column in ("FAIL_TO_PASS", "PASS_TO_PASS")
                else row[column]
            )
            assert theirs[column] == expected, (instance.instance_id, column)
        for column in ("golden_coverage", "stats", "run_metadata", "issue_created_at", "merged_at"):
            assert theirs[column] == row[column], (instance.instance_id, column)
        assert (
            theirs["image"]
            == f"swebench/sweb.eval.x86_64.owner_1776_repo-{instance.pull_number}:latest"
        )


def test_every_split_is_a_dataset_with_the_releases_rows(exported):
    out, instances = exported
    compiled = compile_datasets(out)
    ids = [i.instance_id for i in instances]
    assert {
        name: [r["instance_id"] for r in by_split["test"]] for name, by_split in compiled.items()
    } == {
        "owner/bench": ids,
        "owner/bench-lite": ids[:1],
        "owner/bench-month_2024_03": ids[1:2],
    }
    assert [s.config for s in read_task_repo(out).splits] == ["full", "lite", "monthly"]


def test_a_foreign_task_repo_reads_as_full_configs(exported):
    out, instances = exported
    config = (out / "sweb.yaml").read_text()
    (out / "sweb.yaml").write_text(config.split("swt_builder:")[0])
    read = read_task_repo(out)
    assert [(s.config, s.dataset) for s in read.splits] == [
        ("full", "owner/bench"),
        ("full", "owner/bench-lite"),
        ("full", "owner/bench-month_2024_03"),
    ]


def test_a_bad_task_names_its_file(exported):
    out, _ = exported
    folder = out / "tasks" / "owner__repo-1"
    (folder / "tests.json").write_text('{"FAIL_TO_PASS": "x"}')
    with pytest.raises(TaskRepoError, match="tests.json: FAIL_TO_PASS is not a list"):
        read_task(folder)


def test_tests_json_holds_ids_as_the_harness_reads_them_and_task_yaml_the_releases(tmp_path):
    """swebench's parsers read sympy's bare names and cut a pytest id at its first space: a
    task whose lists held our ids could not grade (pylint's ``test_x[a: int = 1]``, every sympy
    test). tests.json has their form; task.yaml keeps the release's lists, read back whole."""
    sympy = make_instance(
        5,
        FAIL_TO_PASS=("sympy/a/tests/test_x.py::test_one",),
        PASS_TO_PASS=("sympy/a/tests/test_x.py::test_two", "sympy/b/tests/test_y.py::test_two"),
        run_metadata={"runner": "sympy"},
    )
    spaced = make_instance(
        6, FAIL_TO_PASS=("t.py::test_a[a: int = 1-x]",), PASS_TO_PASS=("t.py::test_b",)
    )
    plain = make_instance(7)
    instances = [sympy, spaced, plain]
    out = tmp_path / "repo"
    write_task_repo(out, "bench", "1.0.0", instances, _splits(instances), _harness(instances))
    loaded = {row["instance_id"]: row for row in load_task_repo(out)}
    row = loaded[sympy.instance_id]
    assert (row["FAIL_TO_PASS"], row["PASS_TO_PASS"]) == (["test_one"], ["test_two"])
    assert loaded[spaced.instance_id]["FAIL_TO_PASS"] == ["t.py::test_a[a:"]
    assert "swt_builder_tests" not in (out / "tasks" / plain.instance_id / "task.yaml").read_text()
    assert read_task_repo(out).instances == sorted(instances, key=lambda i: i.instance_id)
