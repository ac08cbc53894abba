"""A cgroup v2 per sandboxed run where one can be made here: ``pids.max`` and ``memory.max``
bound the run's processes together (``setrlimit`` bounds each process alone).

A cgroup can be made where this process's own cgroup v2 directory (``/proc/self/cgroup``'s
``0::`` line, under the cgroup2 mount) is writable and gives its children the ``pids`` and
``memory`` controllers (its ``cgroup.subtree_control``). Where it is writable and has them to
give (its ``cgroup.controllers``) but does not give them yet (a cgroup systemd delegates,
``Delegate=yes``, holds the service's processes, and cgroup v2 lets a cgroup other than the
hierarchy's root give controllers to its children only while it holds none), its processes
(ours, under delegation) move into a leaf child, :data:`LEAF`, and then the controllers are
enabled; runs' cgroups are the leaf's siblings. Where a process cannot be moved, those moved go
back and runs have only their rlimits, as elsewhere (cgroup v1, no delegation, the hierarchy's
root).
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

CONTROLLERS = ("pids", "memory")
LEAF = "swt-builder"
"""The child cgroup this process's cgroup moves its processes into to give its children
controllers."""
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


def _words(path: Path) -> list[str]:
    """A cgroup file's words; none where it cannot be read."""
    try:
        return path.read_text().split()
    except OSError:
        return []


def _own() -> str:
    """This process's cgroup v2 path (``/proc/self/cgroup``'s ``0::`` line), '' if none."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:].strip()
    return ""


def parent(
    mount: Path | None = None,
    own: str | None = None,
    controllers: tuple[str, ...] = CONTROLLERS,
    change: bool = True,
) -> tuple[Path | None, str]:
    """Where per-run cgroups with ``controllers`` can be made (None if nowhere), and why or why
    not. ``own``: the cgroup to make them in, as a path in the hierarchy (this process's by
    default). Gives ``own``'s processes a leaf of their own if it must, unless ``change`` is
    off (``doctor``: then only says it would, with None); never raises."""
    mount = mount or _mount()
    if mount is None:
        return None, "no cgroup v2 file system mounted"
    folder = mount / (_own() if own is None else own).strip("/")
    given = _words(folder.parent / "cgroup.subtree_control")
    if folder.name == LEAF and folder != mount and all(name in given for name in controllers):
        folder = folder.parent  # in the leaf an earlier call moved this cgroup's processes to
    given = _words(folder / "cgroup.subtree_control")
    missing = [name for name in controllers if name not in given]
    moved = ""
    if missing:
        offered = _words(folder / "cgroup.controllers")
        absent = [name for name in missing if name not in offered]
        if absent:
            return None, (
                f"cgroup v2 at {folder} gives its children no {', '.join(absent)} controller and "
                f"has none to give (its cgroup.controllers: {' '.join(offered) or 'none'})"
            )
        if not (folder / "cgroup.type").exists():  # a file of every cgroup but the root
            return None, (
                f"cgroup v2 at {folder}, the hierarchy's root, gives its children no "
                f"{', '.join(missing)} controller (enabling it there is the service manager's)"
            )
        if not os.access(folder, os.W_OK):
            return None, f"cgroup v2 at {folder} is not delegated to this user"
        if not change:
            return None, (
                f"cgroup v2 at {folder}: {' and '.join(f'{name}.max' for name in controllers)} "
                f"per run once a validation moves its processes into {LEAF}/ (not done by this "
                "check)"
            )
        why = _enable(folder, missing)
        if why:
            return None, why
        moved = f" (its processes moved into {LEAF}/ so that it may give them)"
    if not os.access(folder, os.W_OK):
        return None, f"cgroup v2 at {folder} is not delegated to this user"
    return (
        folder,
        f"cgroup v2 at {folder}: {' and '.join(f'{name}.max' for name in controllers)} per run"
        + moved,
    )


def _enable(folder: Path, names: list[str]) -> str:
    """Give ``folder``'s children the controllers ``names`` after moving its processes into
    :data:`LEAF`; '' when done, else why not, with everything as it was."""
    but = (
        f"cgroup v2 at {folder} can give its children {', '.join(names)} only once its "
        f"processes are in a leaf ({LEAF}), but"
    )
    procs = folder / "cgroup.procs"
    try:
        listed = procs.read_text().split()
    except OSError as error:
        return f"{but} its processes cannot be listed: {error.strerror}"
    hidden = f"{but} a process of it is outside this PID namespace (0 in its cgroup.procs)"
    if "0" in listed:  # not ours to name, so not ours to move (writing 0 would move us)
        return hidden
    leaf = folder / LEAF
    try:
        leaf.mkdir()
        made = True
    except FileExistsError:
        made = False
    except OSError as error:
        return f"{but} the leaf cannot be made: {error.strerror}"
    moved: list[str] = []
    why = ""
    for _ in range(3):  # a process started meanwhile joins this cgroup: move it too
        for pid in listed:
            if pid == "0":
                why = hidden
                break
            try:
                (leaf / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:  # ended meanwhile: nothing to move
                continue
            except OSError as error:
                why = f"{but} its process {pid} cannot be moved there: {error.strerror}"
                break
            moved.append(pid)
        listed = _words(procs)
        if why or not listed:
            break
    if not why and listed:
        why = f"{but} new processes keep joining it"
    if not why:
        try:
            (folder / "cgroup.subtree_control").write_text(
                " ".join(f"+{name}" for name in names) + "\n"
            )
            return ""
        except OSError as error:
            why = f"{but} enabling them after the move failed: {error.strerror}"
    for pid in moved:  # back as they were
        with contextlib.suppress(OSError):
            procs.write_text(f"{pid}\n")
    if made:
        with contextlib.suppress(OSError):
            leaf.rmdir()
    return why


@functools.lru_cache(maxsize=1)
def found() -> tuple[Path | None, str]:
    """:func:`parent` of this machine, looked up once."""
    return parent()


def preview() -> tuple[Path | None, str]:
    """:func:`parent` of this machine without changing anything (what ``doctor`` says)."""
    return parent(change=False)


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


__all__ = ["CONTROLLERS", "ENTER", "LEAF", "entered", "found", "parent", "preview", "run_group"]
