"""The result store: keys cover inputs, config and versions; writes are atomic."""

import os

import pytest

from builder.core import store as store_module
from builder.core.files import atomic_write_text
from builder.core.store import ResultStore, result_key


def test_key_depends_on_input_config_schema_and_toolkit(monkeypatch):
    base = result_key("validate", {"timeout": 1}, {"id": 1})
    assert base == result_key("validate", {"timeout": 1}, {"id": 1})
    assert base != result_key("validate", {"timeout": 2}, {"id": 1})
    assert base != result_key("validate", {"timeout": 1}, {"id": 2})
    assert base != result_key("other", {"timeout": 1}, {"id": 1})
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 999)
    assert base != result_key("validate", {"timeout": 1}, {"id": 1})
    monkeypatch.undo()
    monkeypatch.setattr(store_module, "__version__", "9.9.9")
    assert base != result_key("validate", {"timeout": 1}, {"id": 1})


def test_put_get_and_keys(tmp_path):
    results = ResultStore(tmp_path)
    key = result_key("s", {}, {"x": 1})
    assert results.get("s", key) is None
    results.put("s", key, {"verdict": "ok"})
    assert results.get("s", key) == {"verdict": "ok"}
    assert list(results.keys("s")) == [key]


def test_failed_write_keeps_old_content_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "f.json"
    atomic_write_text(target, "old")

    def broken_replace(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_entry_under_wrong_key_is_an_error(tmp_path):
    results = ResultStore(tmp_path)
    results.put("s", "a" * 64, {"v": 1})
    os.replace(results.path("s", "a" * 64), results.path("s", "a" * 63 + "b"))
    with pytest.raises(ValueError, match="holds key"):
        results.get("s", "a" * 63 + "b")
