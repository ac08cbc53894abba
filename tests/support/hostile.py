"""The hostile corpus's shared parts: dummy tokens, a canary tree, leftover processes, a loopback
listener, and a fixture project whose candidates the validation stage gets."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from builder.cli import main
from builder.core.config import DockerConfig, LimitsConfig, ValidationConfig
from builder.core.pipeline import Outcome
from builder.core.records import Candidate
from recipes.swe_bench import to_candidate
from tests.support import docker as docker_support
from tests.support.git import GitRepo
from tests.support.processes import alive
from tests.support.records import swe_record
from tests.support.stage_fixtures import CODE, FIXED, TESTS
from validation.stage import ValidateStage

TOKENS = {
    "GITHUB_TOKEN": "ghp_hostileCanary0123456789abcdefABCDEF",
    "HF_TOKEN": "hf_hostileCanary0123456789abcdefABCDEF",
}
"""Dummy secrets set in the environment of every case: none may show up in any output."""

MARK = "swt-hostile-mark"
"""Named in the command line of every process hostile test code starts: none may outlive it."""

REPO = "hostile/fixture"
BASE = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS}
FIX = {"pkg/__init__.py": FIXED}
ADD = "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
"""A golden test failing before the fix and passing after: a case runs through both sides."""
HOSTILE_FILE = "tests/test_hostile.py"
KEPT = ("tests/test_hostile.py::test_add",)
"""FAIL_TO_PASS of a case whose test file is :data:`ADD` plus hostile code that passes."""


def build_local(tmp_path, capsys, project, candidates, env_dir, out=None):
    """``swt-builder build`` of ``candidates`` on the local backend: exit code, stdout, stderr."""
    source = tmp_path / "source.jsonl"
    source.write_text("".join(c.model_dump_json() + "\n" for c in candidates))
    config = tmp_path / "swt-builder.toml"
    config.write_text(
        f'[repos]\n"{project.repo}" = "{project.git.path}"\n'
        f'[validation]\nbackend = "local"\ncoverage = false\nrepetitions = 1\n'
        f'timeout_s = 120\nenv_dir = "{env_dir}"\n'
    )
    out = out or tmp_path / "dist"
    argv = ["build", "--config", str(config), "--source", str(source)]
    argv += ["--work-dir", str(tmp_path / "work"), "--output-dir", str(out), "--no-progress"]
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def hostile_tests(code: str) -> dict[str, str]:
    """A test patch's files: :data:`ADD` and ``code`` (hostile tests) in one test file."""
    return {HOSTILE_FILE: ADD + "\n\n" + code}


def set_tokens(monkeypatch) -> None:
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)


class Canary:
    """Files a case must not change: a folder of files, and the user's HOME with a marker."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "canary"
        self.home = root / "home"
        (self.folder / "sub").mkdir(parents=True)
        self.home.mkdir(parents=True)
        (self.folder / "notes.txt").write_text("canary\n")
        (self.folder / "sub" / "data.bin").write_bytes(bytes(range(256)))
        (self.home / ".swt-home-marker").write_text("home\n")
        (self.home / ".bashrc").write_text("# user's shell\n")

    def state(self) -> dict[str, str]:
        """Every path under both folders with a digest of its kind, mode and bytes (or link
        target; links are not followed): two states differ where something was changed."""
        found = {}
        for top in (self.folder, self.home):
            for path in sorted([top, *top.rglob("*")]):
                info = path.lstat()
                hasher = hashlib.sha256(stat.filemode(info.st_mode).encode())
                if stat.S_ISREG(info.st_mode):
                    hasher.update(path.read_bytes())
                elif stat.S_ISLNK(info.st_mode):
                    hasher.update(os.readlink(path).encode())
                found[str(path)] = hasher.hexdigest()[:16]
        return found


def token_hits(*roots: Path) -> list[str]:
    """``path: NAME`` for every file under ``roots`` holding a token's value (links skipped)."""
    hits = []
    secrets = {name: value.encode() for name, value in TOKENS.items()}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.is_dir() else [root]:
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            hits += [f"{path}: {name}" for name, value in secrets.items() if value in data]
    return hits


def processes_naming(*needles: str) -> list[str]:
    """Live processes (not this one) whose command line or working dir names one of
    ``needles``, as ``pid command``."""
    found = []
    wanted = [needle.encode() for needle in needles]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd").encode()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if any(needle in cmdline or needle in cwd for needle in wanted) and alive(int(entry.name)):
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name} {command}")
    return found


def leftovers(*needles: str, grace_s: float = 3.0) -> list[str]:
    """:func:`processes_naming` once ``grace_s`` has passed without them going away."""
    deadline = time.monotonic() + grace_s
    while True:
        found = processes_naming(*needles)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def end(found: list[str]) -> None:
    """SIGKILL the processes :func:`leftovers` found (by their pid; gone already is fine)."""
    for line in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line.split(" ", 1)[0]), signal.SIGKILL)


@contextlib.contextmanager
def token_holder() -> Iterator[int]:
    """A process of this user started with the tokens in its environment (as the shell running
    ``swt-builder`` is): what ``/proc/<pid>/environ`` shows to whoever may read it."""
    process = subprocess.Popen(
        ["sleep", "300"], env={**os.environ, **TOKENS}, stdin=subprocess.DEVNULL
    )
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


class Listener:
    """A TCP server on every address of the host that counts the connections it accepts."""

    def __init__(self) -> None:
        self.server = socket.create_server(("0.0.0.0", 0))  # every address of the host
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.accepted += 1
            connection.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


class Project:
    """A fixture repository (``pkg`` with a bug, its tests) and candidates made on it."""

    def __init__(
        self,
        path: Path,
        base: dict[str, str] | None = None,
        repo: str = REPO,
        links: dict[str, str] | None = None,
    ) -> None:
        self.git = GitRepo(path)
        for name, target in (links or {}).items():  # symbolic links of the base commit
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path / name)
        self.base = self.git.commit(base or BASE)
        self.repo = repo

    def diff(self, files: dict[str, str | bytes | None]) -> str:
        """The diff (``git diff --binary``) that ``files`` make on the base commit."""
        for name, content in files.items():
            target = self.git.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
        return self._staged()

    def link_diff(self, name: str, target: str) -> str:
        """The diff adding ``name`` as a symbolic link to ``target``."""
        link = self.git.path / name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)
        return self._staged()

    def _staged(self) -> str:
        self.git.git("add", "-A")
        text = self.git.git("diff", "--cached", "--binary")
        self.git.git("reset", "-q", "--hard", "HEAD")
        return text

    def candidate(self, case: str, test_patch: str, patch: str | None = None) -> Candidate:
        patch = self.diff(FIX) if patch is None else patch
        raw = swe_record(self.repo, 1, self.base, patch, test_patch, instance_id=f"hostile-{case}")
        return to_candidate(raw)


def stage(
    work_dir: Path,
    backend: str,
    projects: list[Project],
    *,
    timeout_s: float = 60.0,
    memory_mb: int = 16384,
    processes: int = 4096,
    docker_memory: str = "2g",
    build_timeout_s: float = 600.0,
    env_dir: Path | None = None,
) -> ValidateStage:
    """The validation stage over ``projects``, one run per side, no coverage: the cases are
    about what a run may do, not about the grade."""
    settings = ValidationConfig(
        backend=backend,
        python=docker_support.PYTHON,
        timeout_s=timeout_s,
        repetitions=1,
        coverage=False,
        env_dir=str(env_dir) if env_dir else "",
        limits=LimitsConfig(memory_mb=memory_mb, processes=processes),
        build_timeout_s=build_timeout_s,
    )
    docker = DockerConfig(memory=docker_memory, build_timeout_s=build_timeout_s)
    repos = {project.repo: str(project.git.path) for project in projects}
    return ValidateStage(settings, work_dir, repos, docker)


def reason(outcome: Outcome) -> str:
    """``kept`` or the drop reason's value: what a case expects."""
    return "kept" if outcome.verdict.kept else outcome.verdict.reason.value
