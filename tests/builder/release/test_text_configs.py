"""Text configs in a release: twins of the plain splits with a ``text`` column, listed by the
card, hashed by the manifest, the same bytes when written again."""

import json

import datasets
import pytest
import yaml

from builder.release.card import with_text_configs
from builder.release.export import FEATURES
from builder.release.manifest import hash_files, read_manifest
from builder.release.write import TextTable, write_text_configs
from builder.text.release_dir import read_release
from tests.support.instances import make_instance, make_release


def _release(root):
    registry = root / "cutoffs.toml"
    registry.write_text('[cutoffs]\n"new-model" = 2024-02-15\n')
    instances = [
        make_instance(1, created_at="2024-01-10T00:00:00Z"),
        make_instance(2, created_at="2024-02-20T00:00:00Z"),
        make_instance(3, created_at="2024-03-05T00:00:00Z", problem_statement="too short"),
    ]
    config, _ = make_release(root / "dist", instances, as_of="2024-04-01", cutoffs=str(registry))
    return config, instances


def _table(name="bm25_27k_zsp", style="zsp", marker="prompt"):
    texts = {f"owner__repo-{n}": f"{marker} {n}" for n in (1, 2, 3)}
    return TextTable(name, "bm25", 27000, style, "cl100k_base", texts)


def _files(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def test_text_twins_of_full_lite_post_cutoff_and_monthly(tmp_path):
    config, _ = _release(tmp_path)
    out = config.dataset_dir

    entries = write_text_configs(out, [_table(), _table("bm25_27k_zsb", "zsb")])

    configs = sorted({e["config"] for e in entries})
    assert configs == [
        "bm25_27k_zsb", "bm25_27k_zsp", "lite_bm25_27k_zsb", "lite_bm25_27k_zsp",
        "monthly_bm25_27k_zsb", "monthly_bm25_27k_zsp",
        "post_cutoff_bm25_27k_zsb", "post_cutoff_bm25_27k_zsp",
    ]  # fmt: skip
    plain_splits = {(s["config"], s["split"]): s for s in read_manifest(out)["splits"]}
    for entry in entries:  # every non-empty plain split has its twin, with its rows
        split = plain_splits[(entry["base"], entry["split"])]
        assert entry["rows"] == split["rows"] > 0
        twin = datasets.load_dataset("parquet", data_files=str(out / entry["path"]))["train"]
        assert twin["instance_id"] == split["instance_ids"]
    months = {e["split"] for e in entries if e["config"] == "monthly_bm25_27k_zsp"}
    assert months == {s for (c, s), v in plain_splits.items() if c == "monthly" and v["rows"]}
    plain = datasets.load_dataset("parquet", data_files=str(out / "data/full/test-*.parquet"))
    text = datasets.load_dataset("parquet", data_files=str(out / "data/bm25_27k_zsp/test-*"))
    rows, text_rows = plain["train"].to_list(), text["train"].to_list()
    assert list(text["train"].features) == [*FEATURES, "text"]
    assert [{k: v for k, v in r.items() if k != "text"} for r in text_rows] == rows
    assert [r["text"] for r in text_rows] == ["prompt 1", "prompt 2", "prompt 3"]
    lite = read_manifest(out)
    lite_ids = next(s for s in lite["splits"] if s["config"] == "lite")["instance_ids"]
    lite_text = datasets.load_dataset(
        "parquet", data_files=str(out / "data/lite_bm25_27k_zsb/test-*")
    )["train"]
    assert lite_text["instance_id"] == lite_ids
    by_name = datasets.load_dataset(str(out), "lite_bm25_27k_zsp", split="test")
    assert by_name["instance_id"] == lite_ids


def test_the_card_lists_them_and_the_manifest_hashes_them(tmp_path):
    config, _ = _release(tmp_path)
    out = config.dataset_dir
    write_text_configs(out, [_table()])

    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    names = [c["config_name"] for c in header["configs"]]
    assert names[:2] == ["full", "lite"]
    assert {"bm25_27k_zsp", "lite_bm25_27k_zsp", "post_cutoff_bm25_27k_zsp"} <= set(names)
    assert "## Text configs" in card
    assert "| bm25_27k_zsp | test | 3 | BM25" in card
    assert "cl100k_base" in card
    assert card.index("## Text configs") < card.index("## Versions")

    manifest = read_manifest(out)
    assert manifest["files"] == hash_files(out)
    assert "data/bm25_27k_zsp/test-00000-of-00001.parquet" in manifest["files"]
    assert {e["tokenizer"] for e in manifest["text"]} == {"cl100k_base"}


def test_written_again_the_release_is_byte_identical(tmp_path):
    config, _ = _release(tmp_path)
    out = config.dataset_dir
    write_text_configs(out, [_table()])
    first = _files(out)
    write_text_configs(out, [_table()])
    assert _files(out) == first


def test_a_name_is_replaced_other_names_kept_and_none_listed_for_none(tmp_path):
    config, _ = _release(tmp_path)
    out = config.dataset_dir
    before = (out / "README.md").read_text()
    write_text_configs(out, [_table(), _table("oracle_27k_zsp", marker="oracle")])
    write_text_configs(out, [_table(marker="new")])

    manifest = read_manifest(out)
    assert {e["name"] for e in manifest["text"]} == {"bm25_27k_zsp", "oracle_27k_zsp"}
    new = datasets.load_dataset("parquet", data_files=str(out / "data/bm25_27k_zsp/test-*"))
    assert new["train"]["text"][0] == "new 1"
    assert (out / "README.md").read_text().count("## Text configs") == 1
    assert manifest["files"] == hash_files(out)

    assert with_text_configs((out / "README.md").read_text(), []) == before


def test_a_rebuilt_release_drops_the_text_configs_it_does_not_write(tmp_path):
    config, instances = _release(tmp_path)
    out = config.dataset_dir
    write_text_configs(out, [_table()])
    make_release(tmp_path / "dist", instances, version="0.1.1", as_of="2024-04-01",
          cutoffs=str(tmp_path / "cutoffs.toml"))  # fmt: skip
    manifest = read_manifest(out)
    assert "text" not in manifest
    assert not (out / "data/bm25_27k_zsp").exists()
    assert "## Text configs" not in (out / "README.md").read_text()


def test_a_text_missing_for_an_instance_is_a_bug_not_a_silent_gap(tmp_path):
    config, _ = _release(tmp_path)
    table = _table()
    partial = TextTable(table.name, "bm25", 27000, "zsp", "cl100k_base", {"owner__repo-1": "x"})
    with pytest.raises(KeyError):
        write_text_configs(config.dataset_dir, [partial])
    assert "text" not in json.loads((config.dataset_dir / "manifest.json").read_text())


def test_a_carried_month_keeps_its_rows_in_its_twin(tmp_path):
    """A month released before keeps an instance a later release dropped: its twin has the
    carried file's rows, and a text for that instance too."""
    registry = tmp_path / "cutoffs.toml"
    registry.write_text("[cutoffs]\n")
    instances = [
        make_instance(1, created_at="2024-01-10T00:00:00Z"),
        make_instance(2, created_at="2024-01-20T00:00:00Z"),
        make_instance(3, created_at="2024-02-05T00:00:00Z"),
    ]
    first, _ = make_release(tmp_path / "v1", instances, as_of="2024-03-01",
                            cutoffs=str(registry))  # fmt: skip
    second, _ = make_release(tmp_path / "v2", instances[1:], version="0.2.0",
                             previous=str(first.dataset_dir), as_of="2024-03-01",
                             cutoffs=str(registry))  # fmt: skip
    out = second.dataset_dir
    ids = [i.instance_id for i in read_release(out)]
    assert ids == ["owner__repo-1", "owner__repo-2", "owner__repo-3"]  # 1 from the month's file

    write_text_configs(out, [_table()])

    plain = datasets.load_dataset(
        "parquet", data_files=str(out / "data/monthly/month_2024_01-00000-of-00001.parquet")
    )["train"].to_list()
    twin = datasets.load_dataset(
        "parquet",
        data_files=str(out / "data/monthly_bm25_27k_zsp/month_2024_01-00000-of-00001.parquet"),
    )["train"].to_list()
    assert [r["instance_id"] for r in plain] == ["owner__repo-1", "owner__repo-2"]
    assert [{k: v for k, v in r.items() if k != "text"} for r in twin] == plain
    assert [r["text"] for r in twin] == ["prompt 1", "prompt 2"]
    assert read_manifest(out)["files"] == hash_files(out)
