"""The manifest: every file's sha256, portable config, counts; byte-identical, skip when intact."""

import hashlib
import json

from builder.core import __version__
from builder.release.manifest import MANIFEST, read_manifest
from tests.support.instances import make_instance, make_release


def _instances():
    return [make_instance(n, created_at=f"2024-0{n}-10T00:00:00Z") for n in (1, 2, 3)]


def _all_files(directory):
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_manifest_hashes_every_file_and_records_config_version_counts(tmp_path):
    config, result = make_release(tmp_path / "out", _instances(), as_of="2024-04-01")
    directory = config.dataset_dir
    manifest = read_manifest(directory)
    files = _all_files(directory)
    assert set(manifest["files"]) == set(files) - {MANIFEST}
    for path, entry in manifest["files"].items():
        assert entry == {
            "sha256": hashlib.sha256(files[path]).hexdigest(),
            "bytes": len(files[path]),
        }
    assert {"README.md", "CHANGELOG.md", "stats.json", "config.json", "instances.jsonl"} <= set(
        files
    )
    assert {"figures/repos.png", "figures/issue_words.png", "figures/funnel.png"} <= set(files)
    assert manifest["toolkit_version"] == __version__
    assert manifest["version"] == "0.1.0" and manifest["previous_version"] is None
    assert manifest["counts"]["instances"] == 3
    assert manifest["counts"]["splits"]["full/test"] == 3
    assert manifest["counts"]["splits"]["monthly/month_2024_02"] == 1
    assert manifest["config"]["lite"]["size"] == 300
    assert manifest["config"] == json.loads(files["config.json"])
    assert result.split_rows == manifest["counts"]["splits"]


def test_no_machine_path_reaches_the_release(tmp_path):
    config, _ = make_release(tmp_path / "out", _instances())
    for path, data in _all_files(config.dataset_dir).items():
        assert str(tmp_path).encode() not in data, path


def test_same_inputs_elsewhere_give_byte_identical_files(tmp_path):
    first, _ = make_release(tmp_path / "a", _instances(), as_of="2024-04-01")
    second, _ = make_release(tmp_path / "deeper" / "b", _instances(), as_of="2024-04-01")
    assert _all_files(first.dataset_dir) == _all_files(second.dataset_dir)


def test_an_intact_release_is_not_rewritten_and_a_damaged_one_is(tmp_path):
    config, first = make_release(tmp_path / "out", _instances())
    assert first.plan is not None
    card = config.dataset_dir / "README.md"
    stamp = card.stat().st_mtime_ns
    _, again = make_release(tmp_path / "out", _instances())
    assert again.plan is None and card.stat().st_mtime_ns == stamp
    original = card.read_bytes()
    card.write_text("damaged")
    _, repaired = make_release(tmp_path / "out", _instances())
    assert repaired.plan is not None and card.read_bytes() == original
    _, resized = make_release(tmp_path / "out", _instances(), size=1)
    assert resized.plan is not None and resized.split_rows["lite/test"] == 1


def test_rejected_diagnostics_are_neither_hashed_nor_inputs(tmp_path):
    for where in ("a", "b"):
        rejected = tmp_path / where / "bench" / "rejected" / "validate.jsonl"
        rejected.parent.mkdir(parents=True)
        rejected.write_text(json.dumps({"evidence": {"log": str(tmp_path / where / "x.log")}}))
    first, _ = make_release(tmp_path / "a", _instances())
    second, _ = make_release(tmp_path / "b", _instances())
    assert not any(
        path.startswith("rejected/") for path in read_manifest(first.dataset_dir)["files"]
    )
    a, b = _all_files(first.dataset_dir), _all_files(second.dataset_dir)
    assert a.pop("rejected/validate.jsonl") != b.pop("rejected/validate.jsonl")
    assert a == b
