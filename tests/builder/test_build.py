"""End to end on the bundled demo: funnel, load_dataset, determinism, resume after SIGKILL."""

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

from builder.cli import main
from recipes.demo.generate import EXPECTED

OUTPUTS = ("data/full/test-00000-of-00001.parquet", "README.md", "stats.json", "instances.jsonl")
FAST = ["--set", "validation.timeout_s=4", "--no-progress"]


def _build(demo: Path, out: Path, work: Path, *extra: str, capsys=None) -> str:
    argv = ["build", "--config", str(demo / "swt-builder.toml")]
    argv += ["--output-dir", str(out), "--work-dir", str(work), *FAST, *extra]
    assert main(argv) == 0
    return capsys.readouterr().out if capsys else ""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    directory = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(directory)]) == 0
    return directory


@pytest.fixture(scope="module")
def built(demo, tmp_path_factory):
    """One cold build of the demo shared by the read-only tests."""
    root = tmp_path_factory.mktemp("built")
    _build(demo, root / "dist", root / "work")
    return root / "dist" / "swt-demo", root / "work"


def test_funnel_puts_every_demo_case_where_it_belongs(built):
    dataset_dir, _ = built
    stats = json.loads((dataset_dir / "stats.json").read_text())
    expected = collections.Counter(v.lower() for v in EXPECTED.values() if v != "kept")
    observed = collections.Counter()
    for stage in stats["funnel"]:
        observed.update(stage["dropped"])
    assert observed == expected
    kept = sorted(k for k, v in EXPECTED.items() if v == "kept")
    assert stats["instances"] == len(kept)
    for stage in ("source", "validate"):
        for line in (dataset_dir / "rejected" / f"{stage}.jsonl").read_text().splitlines():
            row = json.loads(line)
            instance_id = row["record"]["instance_id"]
            assert EXPECTED[instance_id].lower() == row["reason"], instance_id
            assert row["evidence"], f"{instance_id} dropped without evidence"
    card = (dataset_dir / "README.md").read_text()
    assert card.startswith("---\n") and "| validate | 8 | 2 |" in card


def test_load_dataset_reads_the_output(demo, built):
    dataset_dir, _ = built
    rows = datasets.load_dataset(str(dataset_dir), split="test")
    assert sorted(rows["instance_id"]) == sorted(k for k, v in EXPECTED.items() if v == "kept")
    assert list(rows.features)[:12] == [
        "instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
        "hints_text", "created_at", "version", "environment_setup_commit", "FAIL_TO_PASS",
        "PASS_TO_PASS",
    ]  # fmt: skip
    reference = {
        record["instance_id"]: record
        for record in map(json.loads, (demo / "records.jsonl").read_text().splitlines())
    }
    for row in rows:  # the graded lists equal the demo's reference lists exactly
        expected = reference[row["instance_id"]]
        assert json.loads(row["FAIL_TO_PASS"]) == sorted(json.loads(expected["FAIL_TO_PASS"]))
        assert json.loads(row["PASS_TO_PASS"]) == sorted(json.loads(expected["PASS_TO_PASS"]))
        assert json.loads(row["FAIL_TO_PASS"])


def test_fresh_build_elsewhere_is_byte_identical(demo, built, tmp_path, capsys):
    dataset_dir, _ = built
    _build(demo, tmp_path / "dist", tmp_path / "work", capsys=capsys)
    for name in OUTPUTS:
        assert (tmp_path / "dist" / "swt-demo" / name).read_bytes() == (
            dataset_dir / name
        ).read_bytes(), name


def test_rebuild_reuses_and_settings_recompute_only_what_they_affect(demo, tmp_path, capsys):
    out, work = tmp_path / "dist", tmp_path / "work"
    first = _build(demo, out, work, capsys=capsys)
    assert "reused" not in first
    entries = sorted((work / "store" / "validate").glob("*/*.json"))
    assert len(entries) == 8
    again = _build(demo, out, work, "--set", "name=renamed", capsys=capsys)
    assert "validate: 8 of 8 reused from the store" in again
    changed = _build(demo, out, work, "--set", "validation.timeout_s=5", capsys=capsys)
    assert "reused" not in changed
    assert len(list((work / "store" / "validate").glob("*/*.json"))) == 16


def test_tokens_never_reach_outputs_or_test_runs(demo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue_for_test_0001")
    monkeypatch.setenv("HF_TOKEN", "hf_secretvalue_for_test_0002")
    out, work = tmp_path / "dist", tmp_path / "work"
    printed = _build(demo, out, work, capsys=capsys)
    for root in (out, work / "logs", work / "store"):
        for path in root.rglob("*"):
            if path.is_file():
                text = path.read_bytes()
                assert b"secretvalue" not in text, path
    assert "secretvalue" not in printed


def test_sigkill_midway_then_resume(demo, built, tmp_path):
    """Kill a build once some results are stored; the rerun keeps them and matches a clean one."""
    out, work = tmp_path / "dist", tmp_path / "work"
    command = [
        sys.executable,
        "-m",
        "builder.cli",
        "build",
        "--config",
        str(demo / "swt-builder.toml"),
    ]
    command += ["--output-dir", str(out), "--work-dir", str(work), "--jobs", "1", *FAST]
    process = subprocess.Popen(command, start_new_session=True, cwd=Path(__file__).parents[2])
    store = work / "store" / "validate"
    deadline = time.monotonic() + 120
    while len(list(store.glob("*/*.json"))) < 3:
        assert process.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in store.glob("*/*.json")}
    assert 3 <= len(finished) < 8
    assert not (out / "swt-demo" / "stats.json").exists()

    rerun = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert rerun.returncode == 0, rerun.stderr
    assert f"validate: {len(finished)} of 8 reused from the store" in rerun.stdout
    for path, identity in finished.items():
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == identity, "recomputed"
    assert len(list(store.glob("*/*.json"))) == 8
    dataset_dir, _ = built
    for name in OUTPUTS:
        assert (out / "swt-demo" / name).read_bytes() == (dataset_dir / name).read_bytes(), name
