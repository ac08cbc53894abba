"""Versions: successive releases, frozen months carried byte for byte, changelog and diff."""

import pytest

from builder.cli import main
from builder.core.config import ConfigError
from builder.release.manifest import read_manifest
from builder.release.versions import (
    changelog_entry,
    check_successor,
    diff_releases,
    parse_version,
)
from tests.support.instances import make_instance, make_release

MONTH_01 = "data/monthly/month_2024_01-00000-of-00001.parquet"
MONTH_02 = "data/monthly/month_2024_02-00000-of-00001.parquet"


def _at(number, day):
    return make_instance(number, created_at=f"{day}T12:00:00Z")


@pytest.fixture
def two_releases(tmp_path):
    first = [_at(1, "2024-01-10"), _at(2, "2024-02-10"), _at(3, "2024-02-12")]
    config1, _ = make_release(tmp_path / "v1", first, version="1.0.0", as_of="2024-03-01")
    second = [
        _at(1, "2024-01-10"),
        _at(2, "2024-02-10"),
        _at(4, "2024-02-25"),
        _at(5, "2024-03-03"),
    ]
    config2, _ = make_release(
        tmp_path / "v2",
        second,
        version="1.1.0",
        previous=str(config1.dataset_dir),
        as_of="2024-04-01",
    )
    return config1.dataset_dir, config2.dataset_dir


def test_a_later_release_adds_months_and_never_changes_released_ones(two_releases):
    old, new = two_releases
    for path in (MONTH_01, MONTH_02):
        assert (new / path).read_bytes() == (old / path).read_bytes(), path
    manifest = read_manifest(new)
    splits = {f"{s['config']}/{s['split']}": s for s in manifest["splits"]}
    # owner__repo-4 appeared in February after February was released: not in that split.
    assert splits["monthly/month_2024_02"]["instance_ids"] == ["owner__repo-2", "owner__repo-3"]
    assert splits["monthly/month_2024_03"]["instance_ids"] == ["owner__repo-5"]
    assert splits["full/test"]["instance_ids"] == [
        "owner__repo-1",
        "owner__repo-2",
        "owner__repo-4",
        "owner__repo-5",
    ]
    assert manifest["previous_version"] == "1.0.0"


def test_changelog_lists_ids_added_and_removed_per_split(two_releases, capsys):
    old, new = two_releases
    changes = diff_releases(read_manifest(old), read_manifest(new))
    assert changes["full/test"] == {
        "status": "kept",
        "added": ["owner__repo-4", "owner__repo-5"],
        "removed": ["owner__repo-3"],
    }
    assert changes["monthly/month_2024_01"] == {"status": "kept", "added": [], "removed": []}
    assert changes["monthly/month_2024_03"]["status"] == "new"
    changelog = (new / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog\n\n## 1.1.0 (previous: 1.0.0)\n")
    assert "  - added `owner__repo-4`" in changelog and "  - removed `owner__repo-3`" in changelog
    assert "## 1.0.0\n\nFirst release." in changelog  # the history is kept below
    assert main(["diff", str(old), str(new)]) == 0
    printed = capsys.readouterr().out
    assert printed == changelog_entry(read_manifest(old), read_manifest(new))
    assert "- `full/test`: +2 −1" in printed
    assert "- `monthly/month_2024_03` (new split): +1 −0" in printed
    assert main(["diff", str(old), str(old.parent)]) == 2
    assert "is not a release dir (no manifest.json)" in capsys.readouterr().err


def test_a_release_must_raise_the_version_within_its_major(tmp_path, two_releases):
    old, _ = two_releases
    for version, message in (("1.0.0", "must be higher"), ("2.0.0", "changes MAJOR")):
        with pytest.raises(ConfigError, match=message):
            make_release(tmp_path / version, [_at(1, "2024-01-10")], version, previous=str(old))
    check_successor("1.0.0", "1.0.1")
    assert parse_version("10.2.3") == (10, 2, 3)
    with pytest.raises(ConfigError, match="MAJOR.MINOR.PATCH"):
        parse_version("1.2")


def test_a_tampered_released_file_is_refused(tmp_path, two_releases):
    old, _ = two_releases
    (old / MONTH_01).write_bytes((old / MONTH_01).read_bytes() + b"x")
    with pytest.raises(ValueError, match="a released split must not change"):
        make_release(
            tmp_path / "v3", [_at(1, "2024-01-10")], "1.2.0", previous=str(old), as_of="2024-04-01"
        )


def test_previous_without_a_manifest_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="holds no manifest.json"):
        make_release(tmp_path / "x", [_at(1, "2024-01-10")], "1.1.0", previous=str(tmp_path))
