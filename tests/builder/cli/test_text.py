"""``swt-builder text`` on a release whose repository is a local git repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from builder.cli import EXIT_USAGE, main
from builder.release.manifest import read_manifest
from builder.text.records import COLUMNS, SKIPPED_COLUMN
from tests.support.instances import make_release
from tests.support.text_repo import REPO, text_fixture

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def release(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no swt-builder.toml of the checkout is read
    fixture = text_fixture(tmp_path / "repo")
    config, _ = make_release(tmp_path / "dist", [fixture.instance])
    return config.dataset_dir, fixture


def _argv(dataset_dir, work, location, *extra):
    return ["text", "--dataset", str(dataset_dir), "--work-dir", str(work),
            "--set", f"repos.{REPO}={location}", "--no-progress", *extra]  # fmt: skip


def _files(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def test_the_command_writes_the_configs_and_a_rerun_the_same_bytes(release, tmp_path, capsys):
    dataset_dir, fixture = release
    argv = _argv(dataset_dir, tmp_path / "work", fixture.repo.path, "--budget", "1300")

    assert main([*argv, "--retrieval", "bm25", "--prompt", "both"]) == 0
    out = capsys.readouterr().out
    assert "text configs written to" in out and "bm25_1300_zsb, bm25_1300_zsp" in out
    first = _files(dataset_dir)
    text = datasets.load_dataset(
        "parquet", data_files=str(dataset_dir / "data/bm25_1300_zsp/test-*")
    )["train"]
    assert text["instance_id"] == [fixture.instance.instance_id]
    assert "[start of calc/stats.py]" in text["text"][0]

    assert main([*argv, "--retrieval", "bm25", "--prompt", "both"]) == 0
    assert "1 of 1 reused from the store" in capsys.readouterr().out
    assert _files(dataset_dir) == first

    extra = ["--retrieval", "oracle+tests", "--prompt", "zsb", "--tokenizer", "o200k_base"]
    assert main([*argv, *extra]) == 0
    counted = {entry["name"]: entry["tokenizer"] for entry in read_manifest(dataset_dir)["text"]}
    assert counted == {
        "bm25_1300_zsb": "cl100k_base",
        "bm25_1300_zsp": "cl100k_base",
        "oracle_tests_1300_zsb": "o200k_base",
    }
    assert "| oracle_tests_1300_zsb | test | 1 |" in (dataset_dir / "README.md").read_text()


def test_a_missing_repository_exits_2_with_one_line(release, tmp_path, capsys):
    dataset_dir, _ = release
    argv = _argv(dataset_dir, tmp_path / "work", tmp_path / "absent")
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("swt-builder text: 1 of 1 instances have no text (bm25), e.g. ")
    assert "repo_unavailable" in err


def test_a_directory_that_is_no_release_exits_2_in_a_real_process(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "builder.cli", "text", "--dataset", str(tmp_path),
         "--work-dir", str(tmp_path / "work"), "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert completed.returncode == EXIT_USAGE
    assert completed.stderr == (
        f"swt-builder text: {tmp_path} is not a release dir (no manifest.json)\n"
    )


def test_text_from_records_without_a_build_loads_with_swe_bench_s_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fixture = text_fixture(tmp_path / "repo")
    records = tmp_path / "records.jsonl"
    record = {**fixture.instance.to_row(), "extra": 1}
    records.write_text(json.dumps(record) + "\n")
    out = tmp_path / "texts"
    argv = ["text", "--source", str(records), "--output", str(out), "--work-dir",
            str(tmp_path / "work"), "--set", f"repos.{REPO}={fixture.repo.path}", "--no-progress",
            "--retrieval", "issue+bm25", "--prompt", "zsb"]  # fmt: skip

    assert main(argv) == 0

    rows = datasets.load_dataset(str(out), "issue_bm25_27k_zsb", split="test")
    assert rows.column_names == [*COLUMNS, SKIPPED_COLUMN]
    assert rows["instance_id"] == [fixture.instance.instance_id]
    assert rows["patch"][0] == f"<patch>\n{fixture.instance.test_patch}\n</patch>"
    assert rows["FAIL_TO_PASS"][0] == record["FAIL_TO_PASS"]
    assert "[start of calc/stats.py]" in rows["text"][0]
    assert main([*argv[:-4], "--style", "all-text", "--prompt", "zsp"]) == 0
    card = (out / "README.md").read_text()
    assert "config_name: issue_bm25_27k_zsb" in card
    assert "config_name: all_text_bm25_27k_zsp" in card
