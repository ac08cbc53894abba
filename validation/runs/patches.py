"""Apply golden patches to a worktree and pick the test files a test patch touches."""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path, PurePosixPath

import unidiff

from builder.core.diffs import parse_patch
from builder.core.errors import SwtError
from builder.core.gitutil import git_env

NOT_RUNNABLE = ("conftest.py", "__init__.py")
"""Python files under tests that are support code, never passed to the runner."""


class PatchError(SwtError, ValueError):
    """A patch does not apply (or cannot be parsed); the message is git's own."""


def apply_patch(worktree: Path, patch: str, label: str, check_only: bool = False) -> None:
    """``git apply`` the patch in ``worktree``; raise PatchError with git's message if it fails."""
    if not patch.strip():
        raise PatchError(f"{label} is empty")
    completed = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", *(["--check"] if check_only else []), "-"],
        cwd=worktree,
        input=patch if patch.endswith("\n") else patch + "\n",
        capture_output=True,
        text=True,
        env=git_env(),
    )
    if completed.returncode != 0:
        raise PatchError(f"{label} does not apply: {completed.stderr.strip()}")


def runnable_test_files(test_patch: str, patterns: tuple[str, ...] = ("*.py",)) -> list[str]:
    """Python test files the patch adds or modifies (not deleted, not conftest/__init__)."""
    try:
        patch_set = parse_patch(test_patch)
    except unidiff.UnidiffParseError as error:
        raise PatchError(f"test patch cannot be parsed: {error}") from error
    files = []
    for patched in patch_set:
        if patched.is_removed_file:
            continue
        path = patched.path
        name = PurePosixPath(path).name
        if name in NOT_RUNNABLE or not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        files.append(path)
    return sorted(set(files))


def patch_size(patch: str) -> tuple[int, int]:
    """(files, added + removed lines) of a unified diff."""
    try:
        patch_set = parse_patch(patch)
    except unidiff.UnidiffParseError as error:
        raise PatchError(f"patch cannot be parsed: {error}") from error
    return len(patch_set), sum(f.added + f.removed for f in patch_set)
