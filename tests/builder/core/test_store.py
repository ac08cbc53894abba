"""The result store: keys cover inputs, config and versions; writes are atomic; an unusable
entry is a miss that names its file, and the recomputed result replaces it."""

import logging
import os

import pytest

from builder.core import store as store_module
from builder.core.files import atomic_write_text
from builder.core.store import ResultStore, result_key
from tests.support.store_entries import RESULT, corruptions, write_temporary

KEY = "ab" + "c" * 62
KINDS = sorted(corruptions(KEY, "s"))


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


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "builder.core.store"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_unusable_entry_is_a_miss_named_in_a_warning_and_healed_by_put(tmp_path, kind, caplog):
    results = ResultStore(tmp_path)
    path = results.path("s", KEY)
    path.parent.mkdir(parents=True)
    content, problem = corruptions(KEY, "s")[kind]
    path.write_bytes(content)
    caplog.set_level(logging.WARNING)

    assert results.get("s", KEY) is None
    [warning] = _warnings(caplog)
    assert f"{path}: " in warning and problem in warning, warning
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert results.problem(path) is not None

    results.put("s", KEY, RESULT)  # what the pipeline does with the recomputed result
    assert results.get("s", KEY) == RESULT
    assert results.problem(path) is None
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_each_bad_file_is_warned_about_once(tmp_path, caplog):
    results = ResultStore(tmp_path)
    for key in (KEY, "cd" + "e" * 62):
        results.path("s", key).parent.mkdir(parents=True)
        results.path("s", key).write_text("{")
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        assert results.get("s", KEY) is None
        assert results.get("s", "cd" + "e" * 62) is None
    assert len(_warnings(caplog)) == 2
    results.put("s", KEY, RESULT)
    results.path("s", KEY).write_text("[]")  # bad again after a good write: said again
    assert results.get("s", KEY) is None
    assert len(_warnings(caplog)) == 3 and "holds a JSON array" in _warnings(caplog)[-1]


def test_a_good_entry_and_a_missing_one_warn_nothing(tmp_path, caplog):
    results = ResultStore(tmp_path)
    results.put("s", KEY, RESULT)
    caplog.set_level(logging.DEBUG)
    assert results.get("s", KEY) == RESULT
    assert results.get("s", "f" * 64) is None
    assert _warnings(caplog) == []


def test_an_unreadable_file_is_not_mistaken_for_a_bad_entry(tmp_path):
    """Only what a bad file's content produces is a miss: other read errors still raise."""
    results = ResultStore(tmp_path)
    results.path("s", KEY).mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(IsADirectoryError):
        results.get("s", KEY)


def test_entry_files_problems_and_stale_temporaries(tmp_path):
    results = ResultStore(tmp_path)
    good = results.put("s", KEY, RESULT)
    misplaced = tmp_path / "s" / "zz" / good.name
    misplaced.parent.mkdir()
    misplaced.write_bytes(good.read_bytes())
    stale = write_temporary(good, age_s=120)
    write_temporary(tmp_path / "s" / "zz" / "x.json", age_s=5)  # a write under way
    assert results.entry_files() == [good, misplaced]
    assert results.problem(good) is None
    assert results.problem(misplaced) == "in folder 'zz', not its key's 'ab'"
    assert results.stale_temporaries() == [stale]
    assert list(results.keys("s")) == [KEY, KEY]
