"""A history that lacks files' content: found, recovered from archives with the same bytes, or
stubbed (and said), on real git repositories; a submodule's gitlink is never missing content."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

from builder.core.mirror_repair import missing_content, repair
from builder.core.repos import worktree
from tests.support.git import GitRepo

HELPERS = "astropy_helpers"
BIG, HUGE = b"large content\n", b"larger content\n"


def _with_submodule(tmp_path: Path) -> tuple[GitRepo, str, str]:
    """A repository whose tree has a gitlink (mode 160000) to a commit it does not hold, as
    astropy's ``astropy_helpers`` was, and two data files in one directory."""
    helpers = GitRepo(tmp_path / "helpers")
    linked = helpers.commit({"setup_helpers.py": "x = 1\n"})
    repo = GitRepo(tmp_path / "repo")
    repo.write(
        {
            ".gitmodules": f'[submodule "{HELPERS}"]\n\tpath = {HELPERS}\n\turl = ../helpers\n',
            "data/big.bin": BIG.decode(),
            "data/huge.bin": HUGE.decode(),
            "data/small.txt": "kept\n",
            "pkg/__init__.py": "",
        }
    )
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{linked},{HELPERS}")
    repo.git("commit", "-q", "-m", "with a submodule")
    return repo, repo.git("rev-parse", "HEAD").strip(), linked


def _mirror(repo: GitRepo, tmp_path: Path, *lacking: str) -> Path:
    """A mirror clone (its own copies of the loose objects) lacking the blobs of ``lacking``,
    with the submodule's commits fetched into it as the repo cache fetches them."""
    mirror = tmp_path / "mirror.git"
    repo.git("clone", "-q", "--mirror", str(repo.path), str(mirror))
    _git(mirror, "fetch", "-q", str(tmp_path / "helpers"), "+refs/heads/*:refs/sub/helpers/*")
    for path in lacking:
        sha = repo.git("rev-parse", f"HEAD:{path}").strip()
        (mirror / "objects" / sha[:2] / sha[2:]).unlink()
    return mirror


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def test_a_gitlink_is_not_missing_content(tmp_path: Path) -> None:
    repo, commit, _ = _with_submodule(tmp_path)
    mirror = _mirror(repo, tmp_path)
    assert missing_content(mirror, commit) == []
    found = repair(mirror, [commit], stub=True)
    assert found.complete and (found.recovered, found.stubbed, found.missing) == ({}, {}, {})
    assert _git(mirror, "replace", "-l") == ""


def test_without_a_source_or_stubs_the_missing_paths_are_named_and_nothing_changes(tmp_path):
    repo, commit, _ = _with_submodule(tmp_path)
    mirror = _mirror(repo, tmp_path, "data/big.bin", "data/huge.bin")
    found = repair(mirror, [commit], [tmp_path / "no-such-folder"])
    assert not found.complete
    assert found.missing == {commit: ["data/big.bin", "data/huge.bin"]}
    assert _git(mirror, "replace", "-l") == ""


def test_stubs_empty_the_missing_files_only_and_go_when_the_content_comes(tmp_path: Path):
    repo, commit, linked = _with_submodule(tmp_path)
    mirror = _mirror(repo, tmp_path, "data/big.bin", "data/huge.bin")
    found = repair(mirror, [commit], stub=True)
    assert found.complete and found.stubbed == {commit: ["data/big.bin", "data/huge.bin"]}
    assert _git(mirror, "ls-tree", commit, HELPERS).split() == [
        "160000", "commit", linked, HELPERS,
    ]  # fmt: skip
    assert _git(mirror, "rev-parse", "HEAD").strip() == commit  # commit ids unchanged
    with worktree(mirror, commit, tmp_path / "checkout") as checkout:
        assert (checkout / "data" / "big.bin").read_text() == ""
        assert (checkout / "data" / "huge.bin").read_text() == ""
        assert (checkout / "data" / "small.txt").read_text() == "kept\n"
        assert (checkout / HELPERS / "setup_helpers.py").read_text() == "x = 1\n"
    shutil.rmtree(tmp_path / "checkout", ignore_errors=True)
    # content written since (by hand here) is checked out as it is: the stubs are taken back
    for content in (BIG, HUGE):
        subprocess.run(["git", "hash-object", "-w", "--stdin"], input=content, cwd=mirror,
                       check=True, capture_output=True)  # fmt: skip
    assert repair(mirror, [commit]).complete
    assert _git(mirror, "replace", "-l") == ""
    with worktree(mirror, commit, tmp_path / "again") as checkout:
        assert (checkout / "data" / "big.bin").read_bytes() == BIG
        assert (checkout / "data" / "huge.bin").read_bytes() == HUGE
    shutil.rmtree(tmp_path / "again", ignore_errors=True)


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _sdist(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_content_is_recovered_from_wheels_and_sdists_with_the_same_bytes(tmp_path: Path):
    """Any member whose bytes are the blob's gives it, wherever the archive keeps it; a member
    with other bytes, an archive that cannot be read and other files give nothing."""
    repo, commit, _ = _with_submodule(tmp_path)
    mirror = _mirror(repo, tmp_path, "data/big.bin", "data/huge.bin", "data/small.txt")
    wheels = tmp_path / "wheels"
    (wheels / "nested").mkdir(parents=True)
    _wheel(wheels / "pkg-1.0-py3-none-any.whl", {"pkg/data/big.bin": BIG, "x": b"other"})
    _sdist(wheels / "nested" / "pkg-1.0.tar.gz", {"pkg-1.0/data/huge.bin": HUGE})
    (wheels / "broken-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    (wheels / "small.txt").write_bytes(b"kept\n")  # not an archive: not read
    _wheel(wheels / "other-1.0-py3-none-any.whl", {"data/small.txt": b"kept, but changed\n"})
    found = repair(mirror, [commit], [wheels])
    assert found.recovered == {commit: ["data/big.bin", "data/huge.bin"]}
    assert found.missing == {commit: ["data/small.txt"]}
    found = repair(mirror, [commit], [wheels], stub=True)  # the rest stubbed, the rest only
    assert found.stubbed == {commit: ["data/small.txt"]} and found.recovered == {}
    with worktree(mirror, commit, tmp_path / "checkout") as checkout:
        assert (checkout / "data" / "big.bin").read_bytes() == BIG
        assert (checkout / "data" / "huge.bin").read_bytes() == HUGE
        assert (checkout / "data" / "small.txt").read_bytes() == b""
    shutil.rmtree(tmp_path / "checkout", ignore_errors=True)
