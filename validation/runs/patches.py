"""Apply golden patches to a worktree, refuse unsafe paths, pick the test files to run."""

from __future__ import annotations

import fnmatch
import glob
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import unidiff

from builder.core.diffs import UnsafePath, parse_patch, path_problem, unsafe_paths
from builder.core.errors import SwtError
from builder.core.gitutil import git_env
from builder.core.repos import file_at

NOT_RUNNABLE = ("conftest.py", "__init__.py")
"""Python files under tests that are support code, never passed to the runner."""


class PatchError(SwtError, ValueError):
    """A patch does not apply (or cannot be parsed); the message is git's own."""


class UnsafePathError(PatchError):
    """A patch names a file of the checkout that is (or that it made) a symbolic link, lies
    below one, or resolves outside the checkout."""

    def __init__(self, label: str, found: list[UnsafePath]) -> None:
        super().__init__(f"{label} has unsafe paths: " + "; ".join(u.text() for u in found))
        self.found = found


def unsafe_patch_paths(patches: dict[str, str]) -> dict[str, str]:
    """The evidence of an ``unsafe_path`` drop for the first of ``patches`` (label → text)
    naming a symbolic link or a path outside the repository; empty when none does."""
    for label, text in patches.items():
        found = unsafe_paths(text)
        if found:
            return {"patch": label, "paths": "; ".join(u.text() for u in found)}
    return {}


def check_checkout(worktree: Path, paths: list[str]) -> list[UnsafePath]:
    """Which of ``paths`` (relative, as a patch names them) are, in ``worktree``, a symbolic
    link, below one, or resolve outside it."""
    root = os.path.realpath(worktree)
    found = []
    for path in paths:
        problem = path_problem(path)
        if problem is None:
            problem = _link_on_the_way(worktree, path)
        if problem is None and os.path.lexists(worktree / path):
            resolved = os.path.realpath(worktree / path)
            if os.path.commonpath([root, resolved]) != root:
                problem = f"resolves to {resolved}, outside the checkout"
        if problem is not None:
            found.append(UnsafePath(path, problem))
    return found


def _link_on_the_way(worktree: Path, path: str) -> str | None:
    """Why ``path`` in ``worktree`` is unsafe: it, or a folder above it, is a symbolic link."""
    current = worktree
    for part in PurePosixPath(path).parts:
        current = current / part
        if current.is_symlink():
            return f"symbolic link to {os.readlink(current)}"
    return None


def touched_paths(patch: str) -> list[str]:
    """The paths a patch creates, changes or renames to (its targets; unparsable: none)."""
    try:
        patch_set = parse_patch(patch)
    except unidiff.UnidiffParseError:
        return []
    return sorted({p.path for p in patch_set if not p.is_removed_file})


def apply_patch(worktree: Path, patch: str, label: str, check_only: bool = False) -> None:
    """``git apply`` the patch in ``worktree``; raise PatchError with git's message if it fails,
    and UnsafePathError if a file it would write is a symbolic link or lies outside the
    checkout, before applying (a link of the checkout) or after (one the patch made)."""
    if not patch.strip():
        raise PatchError(f"{label} is empty")
    touched = touched_paths(patch)
    found = check_checkout(worktree, touched)  # a link already there is not patched through
    if found:
        raise UnsafePathError(label, found)
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
    if not check_only:
        found = check_checkout(worktree, touched)
        if found:
            raise UnsafePathError(label, found)


def named_paths(patch: str) -> list[str]:
    """Every path a patch names: what it changes, creates or removes, both names of a rename."""
    try:
        patch_set = parse_patch(patch)
    except unidiff.UnidiffParseError as error:
        raise PatchError(f"patch cannot be parsed: {error}") from error
    names = set()
    for patched in patch_set:
        for name, prefix in ((patched.source_file, "a/"), (patched.target_file, "b/")):
            if name and name != "/dev/null":
                names.add(name.removeprefix(prefix))
    return sorted(names)


def restore(worktree: Path, mirror: Path, commit: str, patch: str, label: str) -> None:
    """Undo ``patch`` in ``worktree``, a checkout of ``commit`` it was applied to that runs may
    have changed since: each file it names as ``commit`` has it in ``mirror``, or gone where the
    commit has none, and gone too the bytecode compiled from it (a cached ``.pyc`` of the
    patched text can carry the restored file's size and second). The files are read from the
    mirror, never through the checkout's own git: a run can rewrite the checkout's ``.git``.
    Raise UnsafePathError if a run made one of the paths a symbolic link (or a folder above
    it), PatchError if a file cannot be written back."""
    paths = named_paths(patch)
    found = check_checkout(worktree, paths)
    if found:
        raise UnsafePathError(label, found)
    for path in paths:
        target = worktree / path
        try:
            if target.is_dir():
                shutil.rmtree(target)
            elif os.path.lexists(target):
                target.unlink()
            kept = file_at(mirror, commit, path)
            if kept is not None:
                mode, data = kept
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                target.chmod(0o755 if mode == "100755" else 0o644)
            _drop_bytecode(target)
        except OSError as error:
            raise PatchError(f"{label} cannot be undone at {path}: {error}") from error


def _drop_bytecode(source: Path) -> None:
    """The compiled forms of ``source``: ``__pycache__/NAME.*.pyc`` (pytest's rewritten ones
    too) and Python 2's ``NAMEc`` beside it."""
    if source.suffix != ".py":
        return
    cached = source.parent / "__pycache__"
    compiled = [source.with_name(source.name + "c")]
    if cached.is_dir() and not cached.is_symlink():
        compiled += cached.glob(f"{glob.escape(source.stem)}.*.pyc")
    for path in compiled:
        if os.path.lexists(path):
            path.unlink()


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
