"""End to end: a build of the demo with ``[text]`` on writes the text configs, the card lists
them, the manifest hashes them, and a second build changes no byte."""

from pathlib import Path

import datasets

from builder.cli import main
from builder.release.manifest import hash_files, read_manifest
from tests.support.tiers import END_TO_END

pytestmark = END_TO_END


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def test_a_build_with_text_writes_its_configs_and_rebuilds_byte_identical(tmp_path, capsys):
    demo = tmp_path / "demo"
    assert main(["demo", str(demo)]) == 0
    argv = [
        "build", "--config", str(demo / "swt-builder.toml"),
        "--output-dir", str(tmp_path / "dist"), "--work-dir", str(tmp_path / "work"),
        "--set", "source.kind=swe-bench", "--set", "validation.backend=local",
        "--set", "validation.timeout_s=20", "--set", "text.enabled=true",
        "--set", 'text.retrieval=["bm25", "oracle"]', "--no-progress",
    ]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "text configs written to" in printed
    out = tmp_path / "dist" / "swt-demo"

    manifest = read_manifest(out)
    names = {entry["config"] for entry in manifest["text"]}
    assert {"bm25_27k_zsb", "bm25_27k_zsp", "oracle_27k_zsp", "lite_bm25_27k_zsp"} <= names
    months = {s["split"] for s in manifest["splits"] if s["config"] == "monthly" and s["rows"]}
    twins = {e["split"] for e in manifest["text"] if e["config"] == "monthly_bm25_27k_zsp"}
    assert months and twins == months  # the monthly splits have their twins too
    assert manifest["files"] == hash_files(out)
    card = (out / "README.md").read_text()
    assert all(f"- config_name: {name}\n" in card for name in names)
    rows = datasets.load_dataset(str(out), "bm25_27k_zsp", split="test")
    plain = datasets.load_dataset(str(out), split="test")
    assert rows["instance_id"] == plain["instance_id"]
    assert all("<issue>" in text and "[start of " in text for text in rows["text"])
    first = {k: v for k, v in _files(out).items() if not k.startswith("rejected/")}

    assert main(argv) == 0
    assert "2 of 2 reused from the store" in capsys.readouterr().out
    assert {k: v for k, v in _files(out).items() if not k.startswith("rejected/")} == first
