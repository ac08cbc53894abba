"""Thin wrappers over the git CLI: run a command, raise with its stderr when it fails."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from builder.core.errors import SwtError


class GitError(SwtError, RuntimeError):
    """A git command failed; carries the command and its stderr."""

    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} failed ({returncode}): {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


def git_env() -> dict[str, str]:
    """The environment for git calls: no user/system config, no prompts."""
    env = dict(os.environ)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def git(*args: str, cwd: Path | None = None, input_text: str | None = None, check=True) -> str:
    """Run ``git ARGS`` and return stdout; raise GitError on failure when ``check``."""
    command = ["git", *args]
    completed = subprocess.run(
        command, cwd=cwd, input=input_text, capture_output=True, text=True, env=git_env()
    )
    if check and completed.returncode != 0:
        raise GitError(list(args), completed.returncode, completed.stderr)
    return completed.stdout


def file_reader(repo: Path, commit: str) -> Callable[[str], str | None]:
    """A reader of the files at ``commit`` in ``repo`` (a mirror): a path's text, None when
    the commit has no such file."""
    listed = set(git("ls-tree", "-r", "--name-only", commit, cwd=repo).splitlines())

    def read(path: str) -> str | None:
        if path not in listed:
            return None
        return git("show", f"{commit}:{path}", cwd=repo)

    return read
