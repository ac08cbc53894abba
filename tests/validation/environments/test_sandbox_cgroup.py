"""Per-run cgroups: found where a delegated cgroup v2 gives its children pids and memory, set
with the run's limits, entered by the run's command before anything else runs."""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from validation.environments import sandbox_cgroup


def _own() -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:].strip().lstrip("/")
    return ""


def _fake(tmp_path: Path, given: str) -> Path:
    """A cgroup2 tree at ``tmp_path`` whose folder of this process gives ``given``."""
    folder = tmp_path / _own()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cgroup.subtree_control").write_text(given + "\n")
    return folder


def test_no_pids_or_memory_controller_for_children_means_no_cgroups(tmp_path):
    _fake(tmp_path, "cpu memory")
    folder, why = sandbox_cgroup.parent(tmp_path)
    assert folder is None and "gives its children no pids controller" in why, why


def test_a_run_group_holds_the_limits_and_the_command_enters_it(tmp_path):
    _fake(tmp_path, "cpu pids memory")
    folder, why = sandbox_cgroup.parent(tmp_path)
    assert folder == tmp_path / _own(), why
    with sandbox_cgroup.run_group(folder, processes=50, memory_mb=512) as group:
        assert (group / "pids.max").read_text() == "50\n"
        assert (group / "memory.max").read_text() == f"{512 * 2**20}\n"
        command = sandbox_cgroup.entered(group, ["true"])
        subprocess.run(command, check=True)
        assert (group / "cgroup.procs").read_text() == "0\n"  # the shim moved itself in
    assert sandbox_cgroup.entered(None, ["true"]) == ["true"]


FORKS = r"""
import os, sys, time
children = []
for _ in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print(len(children))
"""
HOARDS = "h = []\nwhile True:\n    h.append(bytearray(8 * 2**20))\n"


def _kernel_has_them(mount: Path | None) -> str:
    """Why no cgroup v2 hierarchy here can give pids and memory ('' when one can): the
    controllers a hierarchy may have, and where the kernel's are bound instead."""
    if mount is None:
        return "no cgroup v2 file system is mounted"
    available = (mount / "cgroup.controllers").read_text().split()
    missing = [name for name in sandbox_cgroup.CONTROLLERS if name not in available]
    if not missing:
        return ""
    bound = {}
    for line in Path("/proc/cgroups").read_text().splitlines()[1:]:
        name, hierarchy, *_ = line.split()
        if name in missing and hierarchy != "0":
            bound[name] = hierarchy
    said = ", ".join(f"{name} in v1 hierarchy {number}" for name, number in bound.items())
    return (
        f"the cgroup v2 hierarchy at {mount} offers only {' '.join(available) or 'nothing'}: "
        f"the kernel's {', '.join(missing)} controller(s) are bound to cgroup v1 ({said}; "
        "/proc/cgroups), and a controller serves one hierarchy at a time"
    )


@pytest.fixture
def delegated() -> Iterator[Path]:
    """This machine's folder for per-run cgroups (``sandbox_cgroup.parent``), made available
    where the kernel can and this process may: as root in the hierarchy's root cgroup, by
    enabling the controllers for its children (what a delegating service manager does), undone
    afterwards. Skipped, saying why, elsewhere."""
    folder, why = sandbox_cgroup.parent()
    if folder is not None:
        yield folder
        return
    mount = sandbox_cgroup._mount()
    kernel = _kernel_has_them(mount)
    if kernel:
        pytest.skip(f"{why}; {kernel}")
    assert mount is not None
    if os.geteuid() != 0 or _own() != "":
        pytest.skip(
            f"{why}; the kernel has the controllers, but a cgroup that holds processes (this "
            "one's, not the hierarchy's root) cannot give them to children (cgroup v2's "
            "no-internal-process rule)"
        )
    control = mount / "cgroup.subtree_control"
    before = control.read_text().split()
    control.write_text(" ".join(f"+{name}" for name in sandbox_cgroup.CONTROLLERS) + "\n")
    try:
        folder, why = sandbox_cgroup.parent(mount)
        assert folder is not None, why
        yield folder
    finally:
        added = [name for name in sandbox_cgroup.CONTROLLERS if name not in before]
        if added:
            control.write_text(" ".join(f"-{name}" for name in added) + "\n")


def test_a_real_delegated_cgroup_v2_bounds_a_runs_processes_and_memory(delegated):
    """On a real cgroup v2 hierarchy (skipped where the kernel cannot give one, saying why): a
    run's processes together stop at ``pids.max``, its memory together at ``memory.max``."""
    with sandbox_cgroup.run_group(delegated, processes=20, memory_mb=64) as group:
        forks = subprocess.run(
            sandbox_cgroup.entered(group, [sys.executable, "-c", FORKS]),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert int(forks.stdout) < 20, forks.stdout
        assert "max 0" not in (group / "pids.events").read_text()  # the limit was reached
        hog = subprocess.run(sandbox_cgroup.entered(group, [sys.executable, "-c", HOARDS]))
        assert hog.returncode == -9, hog.returncode  # the kernel's OOM kill in the group
        events = dict(line.split() for line in (group / "memory.events").read_text().splitlines())
        assert int(events["oom_kill"]) >= 1, events
    assert not group.exists()  # removed after the run
