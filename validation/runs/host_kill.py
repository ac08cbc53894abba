"""Tell a run the host killed (a kill from outside its sandbox, the kernel's OOM killer) from a
run that ended by its own doing: the first is a fault of the machine, never a verdict."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

from builder.core.faults import InfrastructureError

VMSTAT = Path("/proc/vmstat")
KMSG = Path("/dev/kmsg")
"""The kernel's log, one record per read: where the OOM killer says whom it killed and which
memory limit ran out (root, or CAP_SYSLOG, may read it)."""
KILLED_EXIT = 128 + signal.SIGKILL
"""How bubblewrap (and a shell) report a child that SIGKILL ended."""


class HostKilled(InfrastructureError):
    """The host ended a run: its sandbox was killed from outside, or the kernel's OOM killer
    killed it while the machine (not the run's own ``memory.max``) was out of memory."""

    fault = "killed"


def oom_kills(vmstat: Path = VMSTAT) -> int | None:
    """How many processes the kernel's OOM killer has killed since boot (None: not told)."""
    with contextlib.suppress(OSError, ValueError):
        for line in vmstat.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
    return None


def limit_reached(group: Path | None) -> int:
    """How often the run's cgroup reached its own ``memory.max`` (``memory.events``' ``oom``)."""
    if group is None:
        return 0
    with contextlib.suppress(OSError, ValueError):
        for line in (group / "memory.events").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom":
                return int(value)
    return 0


def killed_by_host(
    exit_code: int | None,
    *,
    outside: bool,
    oom_before: int | None,
    oom_after: int | None,
    own_limit: bool,
) -> str | None:
    """Why a run that ended with ``exit_code`` was ended by the host, or None when it was not.

    ``outside``: the process the builder started is outside the run's reach (the sandbox's
    launcher, in a PID namespace of its own), so a signal that ended it came from the host.
    Otherwise only the OOM killer is told apart: the run ended by SIGKILL while the kernel's
    count of OOM kills grew and the run's own cgroup did not reach its ``memory.max``
    (``own_limit``). A run killed at its own limit, or by its own code, is its own end."""
    if exit_code is None:
        return None  # timed out: the builder's own kill
    if outside and exit_code < 0:
        return f"the run's sandbox was killed from outside by {_signal_name(-exit_code)}"
    killed = exit_code in (-signal.SIGKILL, KILLED_EXIT)
    if killed and not own_limit and None not in (oom_before, oom_after):
        if oom_after > oom_before:  # type: ignore[operator]
            return "the kernel's OOM killer killed the run: the machine ran out of memory"
    return None


class KernelLog:
    """The kernel log's records written from now on (``None`` from :meth:`since` where this
    process may not read the log)."""

    def __init__(self, path: Path = KMSG) -> None:
        self._fd: int | None = None
        with contextlib.suppress(OSError):
            self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self._fd, 0, os.SEEK_END)

    def since(self) -> list[str] | None:
        """The messages logged since this was made (each record's text, its fields after)."""
        if self._fd is None:
            return None
        found = []
        while True:
            try:
                record = os.read(self._fd, 8192)
            except BrokenPipeError:  # records overwritten before they were read: read on
                continue
            except BlockingIOError:
                return found
            if not record:
                return found
            found.append(record.decode(errors="replace").partition(";")[2].strip())

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@contextlib.contextmanager
def kernel_log() -> Iterator[KernelLog]:
    """A :class:`KernelLog` for the block, closed after it."""
    log = KernelLog()
    try:
        yield log
    finally:
        log.close()


def oom_records(messages: list[str]) -> list[dict[str, str]]:
    """The OOM killer's ``oom-kill:`` records among ``messages``, as their fields (``task``,
    ``pid``, ``task_memcg``: the victim's cgroup; ``oom_memcg``: the cgroup whose limit ran out,
    absent with ``global_oom``: the machine's memory); ``line``: the record itself."""
    found = []
    for message in messages:
        if message.startswith("oom-kill:"):
            fields = dict(
                item.partition("=")[::2] for item in message[len("oom-kill:") :].split(",")
            )
            found.append({**fields, "line": message})
    return found


def container_killed_by_host(
    container: str,
    exit_code: int | None,
    *,
    kernel: list[str] | None,
    oom_before: int | None,
    oom_after: int | None,
    own_limit: bool,
) -> str | None:
    """Why a container run (id ``container``) that ended with ``exit_code`` was ended by the
    host's OOM killer, or None when it was not.

    The kernel's log (``kernel``: its messages during the run) says it exactly: a process of the
    container (its cgroup, ``task_memcg``, names the container) killed for a memory limit that
    is not the container's own (``oom_memcg`` names another cgroup: a parent's, or the machine's
    with ``global_oom``). Where the log cannot be read (None), as for a local run: the run ended
    by SIGKILL while the kernel's count of OOM kills grew and the container did not reach its
    own limit (``own_limit``: Docker's ``OOMKilled``). A signal sent through the daemon
    (``docker kill``) or a daemon gone are told by ``docker_engine``."""
    if exit_code not in (-signal.SIGKILL, KILLED_EXIT):
        return None
    if kernel is None:
        return killed_by_host(
            exit_code, outside=False, oom_before=oom_before, oom_after=oom_after,
            own_limit=own_limit,
        )  # fmt: skip
    for record in oom_records(kernel):
        if container in record.get("task_memcg", "") and container not in record.get(
            "oom_memcg", ""
        ):
            where = record.get("oom_memcg") or "the machine's memory"
            return (
                f"the kernel's OOM killer killed {record.get('task', 'a process')} (pid "
                f"{record.get('pid', '?')}) of the run when memory ran out outside its own "
                f"limit ({where}); the kernel: {record['line']}"
            )
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


__all__ = [
    "HostKilled",
    "KernelLog",
    "container_killed_by_host",
    "kernel_log",
    "killed_by_host",
    "limit_reached",
    "oom_kills",
    "oom_records",
]
