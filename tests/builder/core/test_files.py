"""Atomic writes: whole files only, and the permissions any new file gets under the umask."""

import os
import stat
from pathlib import Path

import pytest

from builder.core.files import OutsideRoot, atomic_write_text, inside
from tests.support.instances import make_instance, make_release


@pytest.fixture(params=[0o022, 0o077])
def umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_write_honours_the_umask(tmp_path, umask):
    target = tmp_path / "a" / "file.txt"
    atomic_write_text(target, "text")
    assert _mode(target) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]


def test_every_release_file_has_the_mode_of_its_parquet_files(tmp_path, umask):
    instances = [make_instance(n, created_at=f"2024-0{n}-10T00:00:00Z") for n in (1, 2)]
    config, _ = make_release(tmp_path / "out", instances)
    files = [p for p in config.dataset_dir.rglob("*") if p.is_file()]
    assert any(p.suffix == ".png" for p in files) and any(p.suffix == ".parquet" for p in files)
    modes = {p.relative_to(config.dataset_dir).as_posix(): _mode(p) for p in files}
    assert modes == dict.fromkeys(modes, 0o666 & ~umask)


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "file.txt"
    atomic_write_text(target, "old")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


@pytest.mark.parametrize("parts", [("..",), ("../x",), ("a", "../../x"), ("/abs/x",), (".",)])
def test_inside_refuses_paths_that_leave_the_root(tmp_path, parts):
    with pytest.raises(OutsideRoot, match="leaves"):
        inside(tmp_path / "root", *parts)


def test_inside_refuses_a_symlink_out_of_the_root(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    with pytest.raises(OutsideRoot):
        inside(tmp_path / "root", "link", "x")


def test_inside_gives_the_path_under_the_root(tmp_path):
    assert inside(tmp_path, "a", "b.c") == tmp_path / "a" / "b.c"
    assert inside(tmp_path, "a/../b") == tmp_path / "a/../b"
