"""Per-run cgroups: found where a delegated cgroup v2 gives its children pids and memory, set
with the run's limits, entered by the run's command before anything else runs."""

import subprocess
from pathlib import Path

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
