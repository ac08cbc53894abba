"""The demo release exported as a task repo: swebench's check and build accept it, its rows are
the release's, it round-trips byte for byte, and it builds again as a source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.cli import main
from builder.release.task_repo import read_task_repo, write_task_repo
from tests.support.tiers import END_TO_END

pytestmark = END_TO_END

FAST = ["--set", "validation.timeout_s=20", "--set", "validation.backend=local", "--no-progress"]
SWEBENCH = str(Path(sys.executable).parent / "swebench")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The demo built from its SWE-bench-format records (no GitHub server needed)."""
    root = tmp_path_factory.mktemp("release")
    assert main(["demo", str(root / "demo")]) == 0
    config = root / "demo" / "swt-builder.toml"
    argv = ["build", "--config", str(config), "--output-dir", str(root / "dist")]
    argv += ["--work-dir", str(root / "work"), *FAST, "--set", "source.kind=swe-bench"]
    assert main(argv) == 0
    return root / "dist" / "swt-demo", config, root / "work"


@pytest.fixture(scope="module")
def exported(release, tmp_path_factory):
    dataset_dir, config, work = release
    out = tmp_path_factory.mktemp("exported") / "tasks"
    argv = ["export", "--format", "task-repo", str(dataset_dir), str(out)]
    assert main([*argv, "--config", str(config), "--work-dir", str(work)]) == 0
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_swebench_dataset_check_reports_no_error(exported):
    result = subprocess.run(
        [SWEBENCH, "dataset", "check", str(exported)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_swebench_dataset_build_gives_the_releases_rows(release, exported, tmp_path):
    dataset_dir, _, _ = release
    result = subprocess.run(
        [SWEBENCH, "dataset", "build", str(exported), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    datasets = {(s.config, s.split): s.dataset for s in read_task_repo(exported).splits}
    compared = 0
    for entry in manifest["splits"]:
        if not entry["rows"]:
            continue
        ours = pq.read_table(dataset_dir / entry["path"]).to_pylist()
        name = datasets[(entry["config"], entry["split"])]
        theirs = {
            r["instance_id"]: r for r in pq.read_table(tmp_path / name / "test.parquet").to_pylist()
        }
        assert sorted(theirs) == sorted(r["instance_id"] for r in ours)
        for row in ours:
            built = theirs[row["instance_id"]]
            for column, value in row.items():
                if column in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                    value = json.loads(value)
                assert built[column] == value, (name, row["instance_id"], column)
            compared += 1
    assert compared >= 2


def test_export_import_export_is_byte_identical(exported, tmp_path):
    read = read_task_repo(exported)
    write_task_repo(tmp_path, read.name, read.version, read.instances, read.splits, read.harness)
    assert _tree(tmp_path) == _tree(exported)


def test_the_instances_read_back_are_the_releases(release, exported):
    dataset_dir, _, _ = release
    lines = (dataset_dir / "instances.jsonl").read_text().splitlines()
    assert [i.to_json() for i in read_task_repo(exported).instances] == lines


def test_an_environment_other_than_the_validated_one_is_refused(release, tmp_path, capsys):
    dataset_dir, config, work = release
    argv = ["export", str(dataset_dir), str(tmp_path / "out"), "--config", str(config)]
    argv += ["--work-dir", str(work), "--set", "validation.coverage=false"]
    assert main(argv) == 2
    assert "is not the one it was validated in" in capsys.readouterr().err


def test_the_task_repo_builds_again_as_a_source(release, exported, tmp_path):
    dataset_dir, config, work = release
    argv = [
        "build",
        "--config",
        str(config),
        "--output-dir",
        str(tmp_path),
        "--work-dir",
        str(work),
    ]
    argv += [*FAST, "--set", "source.kind=task-repo", "--set", f"source.path={exported}"]
    assert main(argv) == 0
    rebuilt = (tmp_path / "swt-demo" / "instances.jsonl").read_text()
    assert rebuilt == (dataset_dir / "instances.jsonl").read_text()
