"""Per-run cgroups: found where a delegated cgroup v2 gives its children pids and memory (or
can, once its processes are in a leaf of their own), set with the run's limits, entered by the
run's command before anything else runs."""

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import time
import uuid
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


@pytest.fixture
def busy() -> Iterator[tuple[Path, Path, str, subprocess.Popen]]:
    """A cgroup of a real cgroup v2 hierarchy that holds a process (``sleep``) and has a
    controller to give its children but gives it not: the case of a cgroup systemd delegates.
    Made as root in the hierarchy's root, whose children get the controller (undone
    afterwards); the process is killed and the cgroups removed afterwards. Yields the mount,
    the cgroup, the controller and the process."""
    mount = sandbox_cgroup._mount()
    if mount is None:
        pytest.skip("no cgroup v2 file system is mounted")
    offered = (mount / "cgroup.controllers").read_text().split()
    if not offered:
        pytest.skip(
            f"the cgroup v2 hierarchy at {mount} offers no controller: the kernel's are all "
            "bound to cgroup v1 hierarchies (/proc/cgroups)"
        )
    if os.geteuid() != 0:
        pytest.skip("a test cgroup in the hierarchy's root takes root")
    name = offered[0]
    control = mount / "cgroup.subtree_control"
    added = name not in control.read_text().split()
    if added:
        control.write_text(f"+{name}\n")
    group = mount / f"swt-test-{uuid.uuid4().hex[:12]}"
    group.mkdir()
    sleeper = subprocess.Popen(sandbox_cgroup.entered(group, ["sleep", "600"]))
    try:
        deadline = time.monotonic() + 30
        while not (group / "cgroup.procs").read_text().split():  # the shim moved itself in
            assert time.monotonic() < deadline, "the process did not enter its cgroup"
            time.sleep(0.05)
        yield mount, group, name, sleeper
    finally:
        sleeper.kill()
        sleeper.wait()
        for folder in sorted(group.glob("*/"), reverse=True):
            if folder.is_dir():
                folder.rmdir()
        group.rmdir()
        if added:  # left where another user of the hierarchy enabled it meanwhile (EBUSY)
            with contextlib.suppress(OSError):
                control.write_text(f"-{name}\n")


def test_a_cgroup_holding_processes_moves_them_to_a_leaf_and_then_gives_its_children(busy):
    """What makes a delegated cgroup usable: it cannot give its children a controller while it
    holds processes (EBUSY); moved into a leaf of their own, they let it, and runs' cgroups,
    the leaf's siblings, have the controller."""
    mount, group, name, sleeper = busy
    control = group / "cgroup.subtree_control"
    with pytest.raises(OSError) as refused:
        control.write_text(f"+{name}\n")
    assert refused.value.errno == errno.EBUSY, refused.value
    # a check (doctor) only says what a validation would do, and changes nothing
    looked, said = sandbox_cgroup.parent(mount, own=group.name, controllers=(name,), change=False)
    assert looked is None and "once a validation moves its processes into swt-builder/" in said
    assert (group / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
    assert not (group / sandbox_cgroup.LEAF).exists() and control.read_text() == ""
    folder, why = sandbox_cgroup.parent(mount, own=group.name, controllers=(name,))
    assert folder == group, why
    assert "moved into swt-builder/" in why, why
    leaf = group / sandbox_cgroup.LEAF
    assert (leaf / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
    assert (group / "cgroup.procs").read_text() == ""
    assert control.read_text().split() == [name]
    assert sleeper.poll() is None  # moved, not ended
    # A process in the leaf (one started from the moved ones) finds the same folder.
    again, why = sandbox_cgroup.parent(mount, own=f"{group.name}/{leaf.name}", controllers=(name,))
    assert again == group, why
    with sandbox_cgroup.run_group(folder, processes=0, memory_mb=0) as run:
        assert run.parent == group
        assert name in (run / "cgroup.controllers").read_text().split()
    assert sorted(path.name for path in group.iterdir() if path.is_dir()) == [leaf.name]


def test_a_process_that_cannot_be_moved_leaves_the_cgroup_as_it_was(busy):
    """A process of the cgroup outside the builder's PID namespace (cgroup.procs lists it as
    0) is not the builder's to move: no per-run cgroups, saying so, and nothing changed."""
    mount, group, name, sleeper = busy
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to start the builder in a PID namespace of its own")
    look = (
        "import sys; from pathlib import Path; "
        "from validation.environments import sandbox_cgroup as c; "
        "folder, why = c.parent(Path(sys.argv[1]), own=sys.argv[2], controllers=(sys.argv[3],)); "
        "print(folder); print(why)"
    )
    seen = subprocess.run(
        [unshare, "--pid", "--fork", sys.executable, "-c", look, str(mount), group.name, name],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    folder, why = seen.stdout.splitlines()
    assert folder == "None", seen.stdout
    assert "outside this PID namespace" in why, why
    assert (group / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
    assert not (group / sandbox_cgroup.LEAF).exists()
    assert (group / "cgroup.subtree_control").read_text().split() == []


def test_when_the_controllers_cannot_be_enabled_the_moved_processes_go_back(busy):
    """A cgroup delegated to a user but for its cgroup.subtree_control: the user moves the
    processes into the leaf, cannot enable the controller, and moves them back."""
    mount, group, name, sleeper = busy
    for path in (group, group / "cgroup.procs"):
        os.chown(path, 65534, 65534)
    look = (
        "import os, sys; from pathlib import Path; "
        "from validation.environments import sandbox_cgroup as c; "
        "os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534); "
        "folder, why = c.parent(Path(sys.argv[1]), own=sys.argv[2], controllers=(sys.argv[3],)); "
        "print(folder); print(why)"
    )
    seen = subprocess.run(
        [sys.executable, "-c", look, str(mount), group.name, name],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    folder, why = seen.stdout.splitlines()
    assert folder == "None", seen.stdout
    assert "enabling them after the move failed: Permission denied" in why, why
    assert (group / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
    assert not (group / sandbox_cgroup.LEAF).exists()
    assert (group / "cgroup.subtree_control").read_text().split() == []


def test_the_hierarchys_root_is_left_to_the_service_manager():
    """The root cgroup holds the machine's processes (kernel threads, which cannot move, too);
    a controller it does not give its children is not enabled from here, and nothing moves."""
    mount = sandbox_cgroup._mount()
    if mount is None:
        pytest.skip("no cgroup v2 file system is mounted")
    given = (mount / "cgroup.subtree_control").read_text().split()
    withheld = [n for n in (mount / "cgroup.controllers").read_text().split() if n not in given]
    if not withheld:
        pytest.skip(f"the cgroup v2 hierarchy at {mount} gives its children all it offers")
    folder, why = sandbox_cgroup.parent(mount, own="/", controllers=(withheld[0],))
    assert folder is None and "the hierarchy's root" in why, why
    assert not (mount / sandbox_cgroup.LEAF).exists()
    assert (mount / "cgroup.subtree_control").read_text().split() == given
