"""Local bare mirrors of the candidates' repositories and a git worktree per run."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from builder.core.errors import SwtError
from builder.core.files import inside
from builder.core.gitutil import GitError, git


class RepoUnavailable(SwtError, RuntimeError):
    """The repository or the commit cannot be had (clone failed, commit unknown)."""


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between threads and processes on this machine (flock on ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class RepoCache:
    """Bare mirrors under ``root``, cloned from the configured location or GitHub."""

    def __init__(self, root: Path, locations: Mapping[str, str] | None = None) -> None:
        self.root = Path(root)
        self.locations = dict(locations or {})

    def location(self, repo: str) -> str:
        return self.locations.get(repo, f"https://github.com/{repo}.git")

    def mirror(self, repo: str, commit: str) -> Path:
        """A bare mirror of ``repo`` that contains ``commit`` (fetching once if it lacks it)."""
        path = inside(self.root, repo.replace("/", "__") + ".git")
        with file_lock(self.root / (path.name + ".lock")):
            try:
                if not (path / "HEAD").is_file():
                    shutil.rmtree(path, ignore_errors=True)
                    partial = path.with_name(path.name + ".partial")
                    shutil.rmtree(partial, ignore_errors=True)
                    git("clone", "--quiet", "--mirror", self.location(repo), str(partial))
                    partial.rename(path)
                if not _has_commit(path, commit):
                    git("fetch", "--quiet", "origin", cwd=path)
            except GitError as error:
                raise RepoUnavailable(f"{repo}: {error}") from error
            if not _has_commit(path, commit):
                raise RepoUnavailable(f"{repo}: commit {commit} not found")
        return path


@contextlib.contextmanager
def worktree(mirror: Path, commit: str, path: Path) -> Iterator[Path]:
    """A detached worktree of ``mirror`` at ``commit`` in ``path``, removed afterwards."""
    lock = mirror.parent / (mirror.name + ".lock")
    with file_lock(lock):
        _discard_worktree(mirror, path)  # a killed run may have left it, even locked
        git("worktree", "add", "--quiet", "--detach", str(path), commit, cwd=mirror)
    try:
        yield path
    finally:
        with file_lock(lock):
            _discard_worktree(mirror, path)


def _discard_worktree(mirror: Path, path: Path) -> None:
    """Remove the worktree at ``path`` and git's record of it, whatever state it was left in."""
    git("worktree", "unlock", str(path), cwd=mirror, check=False)
    git("worktree", "remove", "--force", "--force", str(path), cwd=mirror, check=False)
    shutil.rmtree(path, ignore_errors=True)
    git("worktree", "prune", cwd=mirror)


def _has_commit(mirror: Path, commit: str) -> bool:
    return bool(git("cat-file", "-t", f"{commit}^{{commit}}", cwd=mirror, check=False).strip())
