"""The local backend: uv-made venvs shared per environment hash, a git worktree per run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from validation.backends.base import Backend, Session, read_optional
from validation.environment import EnvironmentSpec, LocalEnvironments
from validation.patches import apply_patch
from validation.process import Completed, run_killable
from validation.repos import worktree


class LocalSession(Session):
    """A worktree on this machine; commands run with the environment's interpreter first."""

    def __init__(self, tree: Path, run_dir: Path, python: Path) -> None:
        self.tree, self.run_dir, self.python = tree, run_dir, python

    def apply(self, patch: str, label: str, check_only: bool = False) -> None:
        apply_patch(self.tree, patch, label, check_only)

    def run(self, command: list[str], log_path: Path, timeout_s: float) -> Completed:
        return run_killable(
            command, cwd=self.tree, env=self._env(), log_path=log_path, timeout_s=timeout_s
        )

    def scratch_path(self, name: str) -> str:
        return str(self.run_dir / "scratch" / name)

    def read_scratch(self, name: str) -> bytes | None:
        return read_optional(self.run_dir / "scratch" / name)

    def _env(self) -> dict[str, str]:
        """A minimal environment for untrusted code: no tokens, HOME and TMP in the run dir."""
        home, tmp = self.run_dir / "home", self.run_dir / "tmp"
        for folder in (home, tmp, self.run_dir / "scratch"):
            folder.mkdir(parents=True, exist_ok=True)
        paths = [str(self.tree / "src")] if (self.tree / "src").is_dir() else []
        return {
            "PATH": f"{self.python.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "PYTHONPATH": os.pathsep.join([str(self.tree), *paths]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
        }


class LocalBackend(Backend):
    """Environments under ``work_dir/envs``; mirrors under ``work_dir/repos``."""

    name = "local"

    def __init__(self, work_dir: Path) -> None:
        super().__init__(work_dir)
        self.environments = LocalEnvironments(self.work_dir / "envs")

    def fingerprint(self) -> dict[str, str]:
        return {"backend": self.name}

    def prepare(self, spec: EnvironmentSpec) -> Path:
        return self.environments.python(spec)

    @contextlib.contextmanager
    def session(
        self, environment: Path, mirror: Path, commit: str, run_dir: Path
    ) -> Iterator[LocalSession]:
        with worktree(mirror, commit, run_dir / "repo") as tree:
            yield LocalSession(tree, run_dir, environment)
