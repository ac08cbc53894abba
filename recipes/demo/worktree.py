"""Git for the demo: a fixed identity and dates, and scratch worktrees detached at a commit."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from builder.core.gitutil import GitError

__all__ = ["apply", "git", "scratch_worktree"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Calc Maintainer",
    "GIT_AUTHOR_EMAIL": "maintainer@swt-demo.invalid",
    "GIT_COMMITTER_NAME": "Calc Maintainer",
    "GIT_COMMITTER_EMAIL": "maintainer@swt-demo.invalid",
}
_DEFAULT_DATE = "2024-01-01T00:00:00+0000"


def git(cwd: Path, *args: str, date: str = _DEFAULT_DATE, stdin: str | None = None) -> str:
    """Run git isolated from user/system config, with the fixed identity and ``date``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        _IDENTITY,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    command = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args]
    completed = subprocess.run(
        command, cwd=cwd, env=env, input=stdin, capture_output=True, encoding="utf-8"
    )
    if completed.returncode != 0:
        raise GitError(list(args), completed.returncode, completed.stderr)
    return completed.stdout


def apply(tree: Path, *diffs: str, reverse: bool = False) -> None:
    """Apply unified diffs to the files of ``tree`` (in reverse: undo them)."""
    for diff in diffs:
        if diff:
            git(tree, "apply", *(["--reverse"] if reverse else []), "-", stdin=diff)


@contextmanager
def scratch_worktree(repo: Path, commit: str) -> Iterator[Path]:
    """A temporary worktree of ``repo`` detached at ``commit``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="swt-demo-") as scratch:
        worktree = Path(scratch) / "worktree"
        git(repo, "worktree", "add", "--quiet", "--detach", str(worktree), commit)
        try:
            yield worktree
        finally:
            git(repo, "worktree", "remove", "--force", str(worktree))
