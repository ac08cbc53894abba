"""Run a command in its own process group with a timeout that kills the whole group."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from builder.core.capped_log import CappedLog, PipeDrain

_DIE_WITH_PARENT = (
    "import ctypes, os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL\n"
    "    if os.getppid() != int(sys.argv[1]):\n"
    "        os._exit(137)  # the parent died before prctl took effect\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)
"""Exec shim: the run is SIGKILLed by the kernel if the builder dies (Ctrl-C, OOM, kill -9),
where ``setpriv(1)`` cannot set that signal. Started with ``python -I``: the run's PYTHONPATH
names untrusted code, which it must not import."""


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    """util-linux's setpriv when it can set the parent-death signal (no Python to start)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not sys.platform.startswith("linux"):
        return None
    completed = subprocess.run([setpriv, "--pdeathsig", "KILL", "true"], capture_output=True)
    return setpriv if completed.returncode == 0 else None


def _dying_with_parent(command: list[str]) -> list[str]:
    """``command`` SIGKILLed by the kernel when this process dies."""
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", *command]
    return [sys.executable, "-I", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


@dataclasses.dataclass(frozen=True)
class Completed:
    exit_code: int | None
    timed_out: bool
    duration_s: float
    interruptions: int = 0
    """Tries of this run before it that the Docker daemon interrupted (no result: run again)."""


def run_killable(
    command: list[str], *, cwd: Path, env: dict[str, str], log_path: Path, timeout_s: float
) -> Completed:
    """Run ``command`` with its output to ``log_path`` (bounded: ``CappedLog``); on timeout
    SIGKILL its process group."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log_path.open("wb") as log:
        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen(
                _dying_with_parent(command),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        drain = PipeDrain(read_end, CappedLog(log))
        try:
            exit_code = process.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            exit_code = None
        finally:
            _kill_group(process.pid)
            process.wait()
            drain.finish()
    return Completed(exit_code, timed_out, round(time.monotonic() - started, 3))


def _kill_group(pgid: int) -> None:
    """SIGKILL every process left in the group (also after a normal exit: no stragglers)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
