"""A build that keeps no instance: says so, points at the drops, writes and publishes nothing."""

from __future__ import annotations

import json

from builder.cli import main
from builder.cli.build import EXIT_NO_INSTANCE
from tests.support.instances import make_instance, make_release
from tests.support.net import closed_port_url


def _build(tmp_path, capsys) -> tuple[int, str, str]:
    source = tmp_path / "source.jsonl"
    source.write_text("not a record\n")
    argv = ["build", "--source", str(source), "--work-dir", str(tmp_path / "w")]
    argv += ["--output-dir", str(tmp_path / "o"), "--set", "validation.backend=local"]
    argv += ["--set", "name=bench"]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_no_instance_kept_says_so_and_leaves_no_dir_to_misload(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_REPO_ID", "a/b")  # the build would publish, and the Hub is away
    monkeypatch.setenv("HF_TOKEN", "hf_unused")
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    code, out, err = _build(tmp_path, capsys)
    assert code == EXIT_NO_INSTANCE == 1
    evidence = tmp_path / "w" / "rejected"
    assert (
        f"no instance was kept: no release written to {tmp_path / 'o' / 'bench'}, nothing "
        f"published; why each candidate was dropped: {evidence}/" in out
    )
    assert "1 dropped: malformed_record" in out
    assert err == "" and "published" not in out.replace("nothing published", "")
    assert not (tmp_path / "o").exists()
    rows = [json.loads(line) for line in (evidence / "source.jsonl").read_text().splitlines()]
    assert [row["reason"] for row in rows] == ["malformed_record"]


def test_an_earlier_release_is_left_as_it_was(tmp_path, capsys):
    config, _ = make_release(tmp_path / "o", [make_instance(1)])
    before = {p: p.read_bytes() for p in config.dataset_dir.rglob("*") if p.is_file()}
    code, out, _ = _build(tmp_path, capsys)
    assert code == EXIT_NO_INSTANCE
    assert "(the release there is from an earlier build)" in out
    assert {p: p.read_bytes() for p in config.dataset_dir.rglob("*") if p.is_file()} == before
