"""Run metadata names an environment spec by a label that is the same on every machine."""

from __future__ import annotations

from pathlib import Path

from builder.core.config import packaged_spec_dir
from validation.environments.resolution import spec_label


def test_a_bundled_spec_is_named_by_its_file() -> None:
    bundled = packaged_spec_dir() / "swt-demo__calc.toml"
    assert bundled.is_file()
    assert spec_label(bundled, packaged_spec_dir()) == "bundled:swt-demo__calc.toml"


def test_a_spec_in_a_spec_dir_is_named_relative_to_it(tmp_path: Path) -> None:
    for root in (tmp_path / "one", tmp_path / "deep" / "two"):
        spec = root / "specs" / "sub" / "acme__pkg.toml"
        spec.parent.mkdir(parents=True)
        spec.write_text("")
        assert spec_label(spec, None, [root / "specs"]) == "sub/acme__pkg.toml"


def test_a_named_spec_file_is_named_by_its_file_name(tmp_path: Path) -> None:
    spec = tmp_path / "anywhere" / "acme__pkg.toml"
    spec.parent.mkdir()
    spec.write_text("")
    label = spec_label(spec, None, [tmp_path / "elsewhere"])
    assert label == "acme__pkg.toml" and str(tmp_path) not in label
