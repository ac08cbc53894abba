"""Patches apply with git; only runnable Python test files of a test patch are selected."""

import os
import subprocess

import pytest

from tests.support.git import GIT_ENV
from validation.runs.patches import (
    PatchError,
    UnsafePathError,
    apply_patch,
    check_checkout,
    named_paths,
    patch_size,
    restore,
    runnable_test_files,
    unsafe_patch_paths,
)


def test_selects_python_test_files_only(git_repo):
    git_repo.commit({"tests/test_old.py": "x = 1\n", "tests/conftest.py": "", "README": "r\n"})
    patch = git_repo.diff({
        "tests/test_old.py": "x = 2\n", "tests/test_new.py": "y = 1\n",
        "tests/conftest.py": "z = 1\n", "tests/data/sample.json": "{}\n",
        "tests/__init__.py": "", "README": "r2\n",
    })  # fmt: skip
    assert runnable_test_files(patch) == ["tests/test_new.py", "tests/test_old.py"]


def test_deleted_test_file_is_not_run(git_repo):
    git_repo.commit({"tests/test_gone.py": "x = 1\n", "tests/test_kept.py": "y = 1\n"})
    patch = git_repo.diff({"tests/test_gone.py": None, "tests/test_kept.py": "y = 2\n"})
    assert runnable_test_files(patch) == ["tests/test_kept.py"]


def test_apply_and_clear_failures(git_repo):
    git_repo.commit({"a.py": "one\n"})
    good = git_repo.diff({"a.py": "two\n"})
    bad = good.replace("-one", "-three")
    with pytest.raises(PatchError, match="golden patch does not apply"):
        apply_patch(git_repo.path, bad, "golden patch")
    with pytest.raises(PatchError, match="is empty"):
        apply_patch(git_repo.path, "  \n", "test patch")
    apply_patch(git_repo.path, good, "golden patch", check_only=True)
    assert (git_repo.path / "a.py").read_text() == "one\n"
    apply_patch(git_repo.path, good, "golden patch")
    assert (git_repo.path / "a.py").read_text() == "two\n"


def test_unparsable_test_patch(git_repo):
    with pytest.raises(PatchError, match="cannot be parsed"):
        runnable_test_files("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-only one line\n")


def _crlf_patch(git_repo, files: dict[str, str]) -> str:
    """The diff ``files`` make on HEAD, read as bytes (text mode would drop its CRs), with
    every line ending in CRLF, headers too: how a patch stored with CRLF line ends comes."""
    git_repo.write(files)
    git_repo.git("add", "-A")
    env = {**os.environ, **GIT_ENV}
    diff = subprocess.run(
        ["git", "diff", "--cached"], cwd=git_repo.path, env=env, check=True, capture_output=True
    ).stdout.decode()
    git_repo.git("reset", "-q", "--hard", "HEAD")
    return "".join(line.rstrip("\r\n") + "\r\n" for line in diff.splitlines(keepends=True))


def test_a_crlf_test_patch_is_runnable_and_applies(git_repo):
    git_repo.commit({"tests/test_win.py": "def test_a():\r\n    pass\r\n"})
    patch = _crlf_patch(git_repo, {
        "tests/test_win.py": "def test_a():\r\n    assert 1\r\n",
        "tests/test_new.py": "def test_b():\r\n    pass\r\n",
    })  # fmt: skip
    assert patch.startswith("diff --git a/tests/test_new.py b/tests/test_new.py\r\n")
    assert runnable_test_files(patch) == ["tests/test_new.py", "tests/test_win.py"]
    assert patch_size(patch) == (2, 4)
    apply_patch(git_repo.path, patch, "test patch")
    written = (git_repo.path / "tests" / "test_win.py").read_bytes()
    assert written == b"def test_a():\r\n    assert 1\r\n"
    assert (
        git_repo.path / "tests" / "test_new.py"
    ).read_bytes() == b"def test_b():\r\n    pass\r\n"


def test_a_crlf_patch_must_still_match_the_files_it_changes(git_repo):
    git_repo.commit({"tests/test_unix.py": "def test_a():\n    pass\n"})
    patch = _crlf_patch(git_repo, {"tests/test_unix.py": "def test_a():\n    assert 1\n"})
    assert runnable_test_files(patch) == ["tests/test_unix.py"]
    with pytest.raises(PatchError, match="test patch does not apply"):
        apply_patch(git_repo.path, patch, "test patch")  # its content lines gained a CR


def test_a_patch_writing_a_link_is_refused_after_applying(git_repo, tmp_path):
    git_repo.commit({"README": "r\n"})
    os.symlink(tmp_path / "host-file", git_repo.path / "test_link.py")
    git_repo.git("add", "-A")
    patch = git_repo.git("diff", "--cached")
    git_repo.git("reset", "-q", "--hard", "HEAD")
    assert unsafe_patch_paths({"test patch": patch}) == {
        "patch": "test patch",
        "paths": f"test_link.py (symbolic link to {tmp_path / 'host-file'})",
    }
    with pytest.raises(UnsafePathError, match="test patch has unsafe paths: test_link.py"):
        apply_patch(git_repo.path, patch, "test patch")


def test_the_checkout_check_sees_links_on_the_way_and_outside(git_repo, tmp_path):
    git_repo.commit({"tests/test_a.py": "x = 1\n"})
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", git_repo.path / "linked")
    found = check_checkout(git_repo.path, ["tests/test_a.py", "linked/test_b.py", "../x"])
    assert [(u.path, u.why.split(" ")[0]) for u in found] == [
        ("linked/test_b.py", "symbolic"),
        ("../x", "leaves"),
    ]
    assert unsafe_patch_paths({"test patch": "--- a/x\n+++ b/x\n"}) == {}


def test_a_patch_changing_a_link_of_the_checkout_is_refused_before_applying(git_repo, tmp_path):
    (tmp_path / "host-file").write_text("host\n")
    os.symlink(tmp_path / "host-file", git_repo.path / "test_l.py")
    git_repo.commit({})
    plain = "--- a/test_l.py\n+++ b/test_l.py\n@@ -1 +1 @@\n-host\n+def test_x(): pass\n"
    for check_only in (True, False):
        with pytest.raises(UnsafePathError, match="golden patch has unsafe paths: test_l.py"):
            apply_patch(git_repo.path, plain, "golden patch", check_only=check_only)
    assert (tmp_path / "host-file").read_text() == "host\n"


def _mirror_of(git_repo, tmp_path):
    """A bare clone of ``git_repo`` (what a session's checkout is read back from) and a
    separate checkout of its HEAD."""
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo.path), str(mirror)], check=True)
    tree = tmp_path / "tree"
    subprocess.run(["git", "clone", "-q", str(git_repo.path), str(tree)], check=True)
    return mirror, tree


def test_restore_undoes_a_patch_after_runs_changed_the_checkout(git_repo, tmp_path):
    """Every path the patch names is as the commit has it, whatever runs did to it since; the
    bytecode of a restored file is gone (it can carry the same size and second)."""
    commit = git_repo.commit({
        "tests/test_a.py": "def test_a():\n    assert 1\n", "tests/old.py": "OLD = 1\n",
        "tests/gone.py": "GONE = 1\n", "src/keep.py": "KEEP = 1\n",
    })  # fmt: skip
    mirror, tree = _mirror_of(git_repo, tmp_path)
    patch = git_repo.diff({
        "tests/test_a.py": "def test_a():\n    assert 2\n", "tests/test_new.py": "X = 1\n",
        "tests/gone.py": None,
    })  # fmt: skip
    git_repo.git("mv", "tests/old.py", "tests/renamed.py")
    renamed = git_repo.git("diff", "--cached", "-M")
    git_repo.git("reset", "-q", "--hard", "HEAD")
    for text in (patch, renamed):
        apply_patch(tree, text, "test patch")
    assert named_paths(renamed) == ["tests/old.py", "tests/renamed.py"]
    cache = tree / "tests" / "__pycache__"  # what the runs left
    cache.mkdir()
    for name in ("test_a.cpython-311.pyc", "test_a.cpython-311-pytest-8.3.3.pyc", "keep.pyc"):
        (cache / name).write_bytes(b"stale")
    (tree / "tests" / "test_a.pyc").write_bytes(b"stale")  # Python 2's, beside it
    (tree / "tests" / "test_new.py").write_text("changed by a run\n")
    (tree / "tests" / "renamed.py").unlink()
    (tree / "tests" / "gone.py").mkdir()  # a run made a folder where the file was
    for text in (renamed, patch):
        restore(tree, mirror, commit, text, "test patch")
    assert (tree / "tests" / "test_a.py").read_text() == "def test_a():\n    assert 1\n"
    assert (tree / "tests" / "old.py").read_text() == "OLD = 1\n"
    assert (tree / "tests" / "gone.py").read_text() == "GONE = 1\n"
    assert not (tree / "tests" / "test_new.py").exists()
    assert not (tree / "tests" / "renamed.py").exists()
    assert sorted(p.name for p in cache.iterdir()) == ["keep.pyc"]  # not of a restored file
    assert not (tree / "tests" / "test_a.pyc").exists()
    assert subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=tree,
        capture_output=True, text=True, check=True,
    ).stdout == ""  # fmt: skip


def test_restore_refuses_a_link_a_run_made_on_a_patched_path(git_repo, tmp_path):
    commit = git_repo.commit({"tests/test_a.py": "A = 1\n"})
    mirror, tree = _mirror_of(git_repo, tmp_path)
    patch = git_repo.diff({"tests/test_a.py": "A = 2\n"})
    apply_patch(tree, patch, "test patch")
    outside = tmp_path / "host.py"
    outside.write_text("HOST = 1\n")
    (tree / "tests" / "test_a.py").unlink()
    (tree / "tests" / "test_a.py").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="undone after"):
        restore(tree, mirror, commit, patch, "test patch (undone after its runs)")
    assert outside.read_text() == "HOST = 1\n"  # not written through the link
