"""Local environments: one venv per environment hash, made with uv (or venv+pip), built once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from builder.store import atomic_write_text, canonical_json
from validation.repos import file_lock

COMPLETE = "swt-environment.json"
"""Written last, atomically: an environment without it is unfinished and is rebuilt."""


class EnvironmentBuildError(RuntimeError):
    """Building an environment failed; ``log_path`` holds the installer's output."""

    def __init__(self, message: str, log_path: Path) -> None:
        super().__init__(f"{message} (log: {log_path})")
        self.log_path = log_path


@dataclasses.dataclass(frozen=True)
class EnvironmentSpec:
    """What defines an environment; its hash names the venv."""

    python: str
    packages: tuple[str, ...]
    project: Path | None = None  # a checkout at the environment commit, installed when set
    project_commit: str = ""

    def key(self) -> str:
        material = {"python": self.python, "packages": list(self.packages)}
        if self.project is not None:
            material["project_commit"] = self.project_commit
        return hashlib.sha256(canonical_json(material).encode()).hexdigest()[:24]


def find_uv() -> str | None:
    """The uv binary: the one installed with this package, else on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


class LocalEnvironments:
    """Builds and reuses venvs under ``root/<key>``; safe across threads and processes."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def python(self, spec: EnvironmentSpec) -> Path:
        """The environment's interpreter, building the environment first if needed."""
        directory = self.root / spec.key()
        interpreter = directory / "bin" / "python"
        with file_lock(self.root / f"{spec.key()}.lock"):
            if (directory / COMPLETE).is_file():
                return interpreter
            shutil.rmtree(directory, ignore_errors=True)
            log_path = self.root / f"{spec.key()}.build.log"
            self._build(spec, directory, log_path)
            record = {"python": spec.python, "packages": list(spec.packages), "installer": "uv"}
            atomic_write_text(directory / COMPLETE, json.dumps(record, sort_keys=True))
        return interpreter

    def _build(self, spec: EnvironmentSpec, directory: Path, log_path: Path) -> None:
        uv = find_uv()
        targets = [*spec.packages, *([str(spec.project)] if spec.project else [])]
        if uv:
            steps = [
                [uv, "venv", "--quiet", "--python", spec.python, str(directory)],
                [uv, "pip", "install", "--python", str(directory / "bin" / "python"), *targets],
            ]
        else:
            base = _interpreter_for(spec.python, log_path)
            steps = [
                [base, "-m", "venv", str(directory)],
                [str(directory / "bin" / "python"), "-m", "pip", "install", "-q", *targets],
            ]
        if not targets:
            steps = steps[:1]
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w") as log:
            for step in steps:
                log.write(f"$ {' '.join(step)}\n")
                log.flush()
                completed = subprocess.run(step, stdout=log, stderr=subprocess.STDOUT)
                if completed.returncode != 0:
                    raise EnvironmentBuildError(
                        f"environment step failed with exit code {completed.returncode}: "
                        f"{' '.join(step[:3])}",
                        log_path,
                    )


def _interpreter_for(version: str, log_path: Path) -> str:
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    found = shutil.which(f"python{version}")
    if found is None:
        raise EnvironmentBuildError(f"no python{version} on PATH and no uv to get one", log_path)
    return found
