"""A cgroup v2 per sandboxed run where one can be made here: ``pids.max`` and ``memory.max``
bound the run's processes together (``setrlimit`` bounds each process alone).

A cgroup can be made where this process's own cgroup v2 directory (``/proc/self/cgroup``'s
``0::`` line, under the cgroup2 mount) is writable and already gives its children the ``pids``
and ``memory`` controllers (its ``cgroup.subtree_control``): delegated by systemd
(``Delegate=yes``) or a container runtime. Elsewhere (cgroup v1, no delegation) runs have only
their rlimits.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

CONTROLLERS = ("pids", "memory")
ROOT = Path("/sys/fs/cgroup")
"""Where the cgroup v2 hierarchy is mounted on a unified host."""
ENTER = 'echo 0 > "$0/cgroup.procs" && exec "$@"'
"""``sh -c`` shim: move itself into the cgroup named by ``$0``, then exec the command."""


def _mount() -> Path | None:
    """The cgroup2 file system's mount point, or None."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(" - ")
        if len(fields) == 2 and fields[1].split()[0] == "cgroup2":
            return Path(fields[0].split()[4])
    return None


def parent(mount: Path | None = None) -> tuple[Path | None, str]:
    """Where per-run cgroups can be made (None if nowhere), and why or why not."""
    mount = mount or _mount()
    if mount is None:
        return None, "no cgroup v2 file system mounted"
    own = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                own = line[3:].strip()
    folder = mount / own.lstrip("/")
    control = folder / "cgroup.subtree_control"
    given = set(control.read_text().split()) if control.is_file() else set()
    missing = [name for name in CONTROLLERS if name not in given]
    if missing:
        return None, f"cgroup v2 at {folder} gives its children no {', '.join(missing)} controller"
    if not os.access(folder, os.W_OK):
        return None, f"cgroup v2 at {folder} is not delegated to this user"
    return folder, f"cgroup v2 at {folder}: pids.max and memory.max per run"


@functools.lru_cache(maxsize=1)
def found() -> tuple[Path | None, str]:
    """:func:`parent` of this machine, looked up once."""
    return parent()


@contextlib.contextmanager
def run_group(folder: Path | None, processes: int, memory_mb: int) -> Iterator[Path | None]:
    """A new cgroup under ``folder`` with the limits set (0 = none), removed afterwards; None
    when ``folder`` is."""
    if folder is None:
        yield None
        return
    group = folder / f"swt-run-{uuid.uuid4().hex[:12]}"
    group.mkdir()
    try:
        if processes:
            (group / "pids.max").write_text(f"{processes}\n")
        if memory_mb:
            (group / "memory.max").write_text(f"{memory_mb * 1024 * 1024}\n")
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: nothing to set
                (group / "memory.swap.max").write_text("0\n")
        yield group
    finally:
        _kill(group)
        with contextlib.suppress(OSError):
            group.rmdir()


def entered(group: Path | None, command: list[str]) -> list[str]:
    """``command`` started inside ``group`` (unchanged when None)."""
    return command if group is None else ["/bin/sh", "-c", ENTER, str(group), *command]


def _kill(group: Path) -> None:
    """End whatever is left in ``group`` (cgroup.kill, Linux 5.14+)."""
    with contextlib.suppress(OSError):
        (group / "cgroup.kill").write_text("1\n")


__all__ = ["CONTROLLERS", "ENTER", "entered", "found", "parent", "run_group"]
