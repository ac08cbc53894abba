"""A container run the host's OOM killer ends for memory outside the container's own limit is
a fault of the machine (HostKilled), with the kernel's record as evidence; one that reaches its
own limit is the tests' result (``test_docker_retries.py``)."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder.core.config import DockerConfig
from builder.core.faults import as_fault
from tests.support import docker as docker_support
from tests.support.tiers import DOCKER
from validation.environments.environment import EnvironmentSpec
from validation.runs.backends.docker import DockerBackend
from validation.runs.host_kill import HostKilled, kernel_log

pytestmark = DOCKER

HOARDS = "h = []\nwhile True:\n    h.append(bytearray(16 * 2**20))\n"
PARENT_MB = 96
"""What the host leaves the containers of the test's cgroup: far below their own limit."""


class _Containers:
    """The daemon's ``containers``, each created under the cgroup ``parent``."""

    def __init__(self, containers: Any, parent: str) -> None:
        self._containers, self._parent = containers, parent

    def create(self, *args: Any, **kwargs: Any) -> Any:
        return self._containers.create(*args, cgroup_parent=self._parent, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._containers, name)


class _Placed:
    """A client of the daemon whose containers go under ``parent``, as a daemon started with
    ``--cgroup-parent`` (or a host slice with a memory limit) places them."""

    def __init__(self, client: Any, parent: str) -> None:
        self._client = client
        self.containers = _Containers(client.containers, parent)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@contextlib.contextmanager
def _limited_parent(client: Any) -> Iterator[str]:
    """A memory cgroup of PARENT_MB at the top of the daemon's hierarchy (cgroupfs driver)."""
    info = client.info()
    if info.get("CgroupDriver") != "cgroupfs":
        pytest.skip(f"the daemon's cgroup driver is {info.get('CgroupDriver')}, not cgroupfs")
    with kernel_log() as kernel:
        if kernel.since() is None:
            pytest.skip("the kernel's log (/dev/kmsg) cannot be read here: root or CAP_SYSLOG")
    name = f"swt-host-oom-{uuid.uuid4().hex[:8]}"
    limit = str(PARENT_MB * 2**20)
    if str(info.get("CgroupVersion")) == "2":
        folder, files = Path("/sys/fs/cgroup") / name, ["memory.max", "memory.swap.max"]
        values = [limit, "0"]
    else:
        folder = Path("/sys/fs/cgroup/memory") / name
        files = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
        values = [limit, limit]
    try:
        folder.mkdir()
    except OSError as error:
        pytest.skip(f"no memory cgroup can be made here: {error}")
    try:
        for file, value in zip(files, values, strict=True):
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: none to limit
                (folder / file).write_text(value)
        yield f"/{name}"
    finally:  # the daemon made it in every hierarchy (cgroup v1): each goes once empty
        for made in [folder, *Path("/sys/fs/cgroup").glob(f"*/{name}")]:
            for _ in range(50):  # the container's own cgroup goes with its removal
                with contextlib.suppress(OSError):
                    made.rmdir()
                if not made.exists():
                    break
                time.sleep(0.2)


def test_a_run_the_host_oom_killer_ends_is_a_fault_of_the_machine(git_repo, tmp_path):
    """The container's own limit (docker.memory) is 2 GB; its cgroup's parent has 96 MB: the
    kernel kills the hoarding test there. Docker says ``OOMKilled`` either way; the kernel's
    record names the limit that ran out, and it is not the container's."""
    client = docker_support.engine()
    docker_support.base_image()
    backend = DockerBackend(tmp_path / "work", DockerConfig(memory="2g"))
    environment = backend.prepare(EnvironmentSpec(docker_support.PYTHON, ()))
    base = git_repo.commit({"README": "r\n"})
    with (
        _limited_parent(client) as parent,
        backend.session(environment, git_repo.path / ".git", base, tmp_path / "run") as session,
    ):
        session.client = _Placed(session.client, parent)
        log = tmp_path / "run.log"
        with pytest.raises(HostKilled) as raised:
            session.run(["python", "-c", HOARDS], log, 120)
    message = str(raised.value)
    assert "OOM killer" in message and f"oom_memcg={parent}" in message, message
    assert session.containers[0] in message  # the kernel's record names the container
    fault = as_fault(raised.value, "demo/repo")
    assert fault is not None and fault.evidence()["fault"] == "killed"
    assert fault.evidence()["log"] == str(log)
    assert len(session.containers) == 1  # not run again: the machine is out of memory
