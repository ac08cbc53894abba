"""A run the host ends (its sandbox killed from outside, the OOM killer) is a fault of the
machine; a run that kills itself is its own end."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from validation.environments import sandbox
from validation.runs.backends.local import Limits, LocalSession
from validation.runs.host_kill import (
    HostKilled,
    container_killed_by_host,
    kernel_log,
    killed_by_host,
    limit_reached,
    oom_kills,
    oom_records,
)

SLEEP = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).write_text('up'); time.sleep(60)"


def _session(tmp_path: Path) -> tuple[LocalSession, Path]:
    tree = tmp_path / "tree"
    tree.mkdir()
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))
    bwrap = sandbox.require("bwrap")
    return LocalSession(tree, tmp_path / "run", python, limits=Limits(), bwrap=bwrap), python


def _children_naming(text: str) -> list[int]:
    """Pids of this process's children whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and text.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_a_run_whose_sandbox_is_killed_from_outside_is_a_fault_of_the_machine(tmp_path):
    session, python = _session(tmp_path)
    started = tmp_path / "run" / "scratch" / "up"
    killed: list[int] = []

    def kill_from_outside() -> None:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in _children_naming(str(tmp_path / "run")):
            os.kill(pid, signal.SIGKILL)  # as an operator or another tool would
            killed.append(pid)

    killer = threading.Thread(target=kill_from_outside)
    killer.start()
    code = [str(python), "-c", SLEEP, session.scratch_path("up")]
    began = time.monotonic()
    with pytest.raises(HostKilled) as raised:
        session.run(code, tmp_path / "run.log", timeout_s=60)
    killer.join()
    assert killed and time.monotonic() - began < 30
    assert raised.value.fault == "killed"
    assert raised.value.evidence() == {
        "fault": "killed",
        "error": "the run's sandbox was killed from outside by SIGKILL",
        "log": str(tmp_path / "run.log"),
    }


def test_a_run_that_kills_itself_is_its_own_end(tmp_path):
    session, python = _session(tmp_path)
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    completed = session.run([str(python), "-c", suicide], tmp_path / "run.log", timeout_s=60)
    assert completed.exit_code == 128 + signal.SIGKILL and not completed.timed_out


def test_the_oom_killer_is_told_from_the_runs_own_memory_limit():
    def decide(exit_code, before, after, own=False, outside=False):
        return killed_by_host(
            exit_code, outside=outside, oom_before=before, oom_after=after, own_limit=own
        )

    host_oom = "the kernel's OOM killer killed the run: the machine ran out of memory"
    assert decide(137, 4, 5) == host_oom  # through bubblewrap
    assert decide(-signal.SIGKILL, 4, 5) == host_oom  # unsandboxed
    assert decide(137, 4, 5, own=True) is None  # killed at its own memory.max: its own end
    assert decide(137, 4, 4) is None  # no OOM kill: a kill from inside reads as its own
    assert decide(137, None, None) is None  # a kernel that does not count them
    assert decide(1, 4, 5) is None and decide(None, 4, 5) is None  # failed; timed out
    assert decide(-signal.SIGTERM, 0, 0, outside=True) == (
        "the run's sandbox was killed from outside by SIGTERM"
    )
    assert decide(-signal.SIGKILL, 0, 0, outside=False) is None  # unsandboxed: it may be itself


def test_the_kernels_counts_are_read(tmp_path):
    vmstat = tmp_path / "vmstat"
    vmstat.write_text("nr_free_pages 10\noom_kill 7\n")
    assert oom_kills(vmstat) == 7 and oom_kills(tmp_path / "none") is None
    group = tmp_path / "group"
    group.mkdir()
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n")
    assert limit_reached(group) == 2 and limit_reached(None) == 0
    assert limit_reached(tmp_path) == 0


CONTAINER = "b42e3d544a6cf2c88904c750b7235d3a535586539923595c9b25517b214033df"
PARENT_OOM = (
    f"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset={CONTAINER},mems_allowed=0,"
    f"oom_memcg=/swt-oom,task_memcg=/swt-oom/{CONTAINER},task=python3,pid=7642,uid=0"
)  # a record as this machine's kernel (6.18, cgroup v1) wrote it
OWN_OOM = PARENT_OOM.replace("oom_memcg=/swt-oom,", f"oom_memcg=/docker/{CONTAINER},").replace(
    "task_memcg=/swt-oom/", "task_memcg=/docker/"
)
GLOBAL_OOM = (
    "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
    f"task_memcg=/system.slice/docker-{CONTAINER}.scope,task=python3,pid=8,uid=0"
)


def test_the_kernels_record_tells_a_container_killed_for_memory_not_its_own():
    def decide(exit_code, kernel, before=None, after=None, own=True):
        return container_killed_by_host(
            CONTAINER, exit_code, kernel=kernel, oom_before=before, oom_after=after, own_limit=own
        )

    assert oom_records(["something else", PARENT_OOM])[0]["oom_memcg"] == "/swt-oom"
    killed = decide(137, ["Memory cgroup out of memory", PARENT_OOM])
    assert "OOM killer killed python3 (pid 7642)" in killed and "(/swt-oom)" in killed, killed
    assert PARENT_OOM in killed  # the kernel's own words: the evidence
    assert "the machine's memory" in decide(137, [GLOBAL_OOM])
    assert decide(137, [OWN_OOM]) is None  # its own limit: the tests' result
    assert decide(137, [PARENT_OOM.replace(CONTAINER, "f" * 64)]) is None  # another container
    assert decide(137, []) is None  # killed by its own code
    assert decide(1, [PARENT_OOM]) is None and decide(None, [PARENT_OOM]) is None
    # no kernel log to read (not root): the count of OOM kills, less the container's own limit
    assert "OOM killer" in decide(137, None, 4, 5, own=False)
    assert decide(137, None, 4, 5, own=True) is None


def test_the_kernel_log_gives_what_is_written_after_it_was_opened():
    with kernel_log() as kernel:
        if kernel.since() is None:
            pytest.skip("/dev/kmsg cannot be read here (root or CAP_SYSLOG)")
        marker = f"swt-builder test {os.getpid()}"
        try:
            Path("/dev/kmsg").write_text(marker + "\n")
        except OSError as error:
            pytest.skip(f"/dev/kmsg cannot be written here: {error}")
        assert any(marker in message for message in kernel.since())
