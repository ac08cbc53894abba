"""A timeout kills the whole process group, even a grandchild that ignores SIGTERM."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.support.processes import alive
from validation.runs.process import run_killable

GRANDCHILD = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    open(sys.argv[1], "w").write(str(child.pid))
    time.sleep(600)
    """
)


@pytest.mark.slow
def test_timeout_kills_grandchild_that_ignores_sigterm(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run_killable(
        [sys.executable, "-c", GRANDCHILD, str(pid_file)],
        cwd=tmp_path, env=dict(os.environ), log_path=tmp_path / "log.txt", timeout_s=2,
    )  # fmt: skip
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_normal_exit_reports_code_and_log(tmp_path):
    result = run_killable(
        [sys.executable, "-c", "print('hello'); raise SystemExit(3)"],
        cwd=tmp_path, env=dict(os.environ), log_path=tmp_path / "log.txt", timeout_s=30,
    )  # fmt: skip
    assert result.exit_code == 3 and not result.timed_out
    assert "hello" in (tmp_path / "log.txt").read_text()


def test_run_dies_with_its_parent(tmp_path):
    """A killed builder leaves no test run behind (PR_SET_PDEATHSIG through the exec shim)."""
    pid_file = tmp_path / "run.pid"
    parent_code = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from validation.runs.process import run_killable
        run_killable([sys.executable, "-c",
            "import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid()));"
            "time.sleep(600)"],
            cwd=Path({str(tmp_path)!r}), env=dict(os.environ),
            log_path=Path({str(tmp_path / "log")!r}), timeout_s=600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], cwd=os.getcwd())
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the test run never started"
        time.sleep(0.05)
    run_pid = int(pid_file.read_text())
    assert alive(run_pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while alive(run_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run_pid)
