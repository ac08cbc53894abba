"""Tell a run the host killed (a kill from outside its sandbox, the kernel's OOM killer) from a
run that ended by its own doing: the first is a fault of the machine, never a verdict."""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path

from builder.core.faults import InfrastructureError

VMSTAT = Path("/proc/vmstat")
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


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


__all__ = ["HostKilled", "killed_by_host", "limit_reached", "oom_kills"]
