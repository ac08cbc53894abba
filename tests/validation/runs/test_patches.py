"""Patches apply with git; only runnable Python test files of a test patch are selected."""

import pytest

from validation.runs.patches import PatchError, apply_patch, runnable_test_files


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
