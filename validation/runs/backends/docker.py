"""The Docker backend: environment images per spec hash, a fresh container per test run."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.core.config import DockerConfig, ValidationConfig
from builder.core.repos import worktree
from validation.environments import services
from validation.environments.docker_engine import (
    connect,
    extract_files,
    labels,
    remove,
    run_to_end,
    tar_files,
    tar_tree,
    with_retries,
)
from validation.environments.docker_environments import (
    ENV_SCHEMA,
    VENV,
    WORKDIR,
    DockerEnvironment,
    DockerEnvironments,
    limits,
)
from validation.environments.environment import EnvironmentSpec, merge_env
from validation.environments.images import SUITES
from validation.environments.metadata import SHIM, Identity, identity
from validation.environments.runtime import RuntimeFiles
from validation.runs import checkout_path, host_kill, test_ids
from validation.runs.backends.base import Backend, Session, read_optional
from validation.runs.patches import apply_patch
from validation.runs.process import Completed

RUN_DIR = "/swt"
"""The run's own folder in a container (scratch files, tools, the metadata shadow)."""
HOME = "/swt/home"
TMP = "/swt/tmp"
"""The run's home and temp dir: its own, empty, at the paths a sandboxed local run has them
(a test id holding either names it alike on both backends: ``test_ids``)."""
SCRATCH = "/swt/scratch"
METADATA = "/swt/metadata"
TOOLS = "/swt/tools"
"""Where the toolkit's runtime files (``Session.provide``) are in every container."""
SESSION = "org.swt-builder.session"
_KILL_MARGIN_S = 30
"""Containers also kill themselves this long after their timeout, should the builder die."""


class DockerSession(Session):
    """A worktree on the host (patches applied there); each run copies it into a new container.

    Runs have no network, resource limits, and are killed on timeout; the container is removed
    after every run, so nothing a run does survives into the next one. A run the host's OOM
    killer ended (for memory outside the container's own limit) raises HostKilled: a fault of
    the machine, not the tests' result (``host_kill``).
    """

    def __init__(
        self,
        client: Any,
        environment: DockerEnvironment,
        tree: Path,
        run_dir: Path,
        settings: DockerConfig,
        project: Identity | None = None,
    ) -> None:
        self.client, self.environment, self.settings = client, environment, settings
        self.tree, self.run_dir = tree, run_dir
        self.project = project  # its metadata as of the base commit, shadowed in every run
        self.session_id = uuid.uuid4().hex[:16]
        self.containers: list[str] = []  # ids of the containers this session ran
        self.provided: dict[str, RuntimeFiles] = {}  # by digest: copied into every container

    def apply(self, patch: str, label: str, check_only: bool = False) -> None:
        apply_patch(self.tree, patch, label, check_only)

    def run(self, command: list[str], log_path: Path, timeout_s: float) -> Completed:
        """One run in a new container; tried again in a new one when the daemon interrupts it
        (a restart, the container removed or stopped under it): that is no result of the
        tests. The result counts the interrupted tries (``interruptions``)."""
        tries: list[None] = []

        def once() -> Completed:
            tries.append(None)
            return self._run_once(command, log_path, timeout_s)

        completed = with_retries(once, f"test run {log_path.name}")
        return dataclasses.replace(completed, interruptions=len(tries) - 1)

    def _run_once(self, command: list[str], log_path: Path, timeout_s: float) -> Completed:
        guard = str(math.ceil(timeout_s) + _KILL_MARGIN_S)
        container = self.client.containers.create(
            self.environment.image_id,
            command=["timeout", "-s", "KILL", guard, *self._with_metadata(command)],
            working_dir=WORKDIR,
            environment=self._env(),
            network_mode="bridge" if self.network else "none",
            labels=labels("run", session=self.session_id),
            **limits(self.settings),
            detach=True,
        )
        self.containers.append(container.id)
        try:
            scratch = ("swt", SCRATCH.strip("/"), HOME.strip("/"), TMP.strip("/"))
            container.put_archive("/", tar_tree(self.tree, WORKDIR.strip("/"), dirs=scratch))
            container.put_archive("/", self._checkout_pth())
            if self.provided:
                container.put_archive("/", self._tools())
            with host_kill.kernel_log() as kernel:
                oom_before = host_kill.oom_kills()
                completed = run_to_end(container, log_path, timeout_s)
                messages, oom_after = kernel.since(), host_kill.oom_kills()
            chunks, _ = container.get_archive(SCRATCH)
            extract_files(chunks, self.run_dir / "scratch")
        finally:
            remove(container)
        if _local(self.client):  # this machine's kernel is the daemon's
            killed = host_kill.container_killed_by_host(
                container.id, completed.exit_code, kernel=messages, oom_before=oom_before,
                oom_after=oom_after, own_limit=completed.oom_killed,
            )  # fmt: skip
            if killed is not None:
                raise host_kill.HostKilled(killed, log=str(log_path))
        return Completed(completed.exit_code, completed.timed_out, completed.duration_s)

    def _with_metadata(self, command: list[str]) -> list[str]:
        """Each container starts fresh: the shim writes the metadata shadow, then execs (the
        services' shim, when the run has services, then the command)."""
        if self.services:
            command = services.shim(self.provide(services.SHIM), self.services, command)
        if self.project is None:
            return command
        return self.project.shim(self.provide(SHIM), METADATA, command)

    def provide(self, files: RuntimeFiles) -> str:
        self.provided[files.digest] = files
        return f"{TOOLS}/{files.digest}"

    def _tools(self) -> io.BytesIO:
        """A tar of the provided files under TOOLS, each in its digest's folder."""
        root = TOOLS.strip("/")
        entries: dict[str, bytes | None] = {root: None}
        for digest, files in sorted(self.provided.items()):
            entries[f"{root}/{digest}"] = None
            entries.update(files.entries(root))
        return tar_files(entries, {name: 0o755 for name, data in entries.items() if data is None})

    def id_places(self) -> list[tuple[str, str]]:
        """The container's checkout, environment, run dir, home and temp dir; the launcher in
        the run adds the interpreter's prefix."""
        python = self.environment.spec.python
        pairs = test_ids.run_pairs(WORKDIR, VENV, "", python, HOME, TMP)
        return [*pairs, (RUN_DIR, test_ids.RUN)]

    def scratch_path(self, name: str) -> str:
        return f"{SCRATCH}/{name}"

    def read_scratch(self, name: str) -> bytes | None:
        return read_optional(self.run_dir / "scratch" / name)

    def _checkout_pth(self) -> io.BytesIO:
        """A tar of the run's ``.pth`` naming its checkout (``checkout_path``), in the
        environment's site-packages (each container starts from the image: the file is its own)."""
        metadata = METADATA if self.project else None
        paths = checkout_path.run_paths(WORKDIR, (self.tree / "src").is_dir(), metadata)
        site_packages = f"{VENV}/lib/python{self.environment.spec.python}/site-packages"
        name = f"{site_packages.strip('/')}/{checkout_path.PTH}"
        return tar_files({name: checkout_path.literal(paths).encode()})

    def _env(self) -> dict[str, str]:
        """What a run sees besides the image's variables (the checkout is on the import path
        through its ``.pth``, not ``PYTHONPATH``: see ``checkout_path``)."""
        base = {
            "HOME": HOME,
            "TMPDIR": TMP,
            **({} if self.bytecode else {"PYTHONDONTWRITEBYTECODE": "1"}),
            "LANG": "C.UTF-8",
        }
        base[test_ids.PLACES_VARIABLE] = test_ids.places_variable(self.id_places())
        return {**merge_env(base, self.environment.spec), **dict(self.extra_env)}


def _local(client: Any) -> bool:
    """Whether the daemon is reached by a Unix socket (runs on this machine's kernel, as a rule;
    a daemon in a VM behind one has a kernel whose log never names its containers)."""
    return str(getattr(client.api, "base_url", "")).startswith("http+docker://localhost")


class DockerBackend(Backend):
    """Environment images built from base images; test runs in containers without network."""

    name = "docker"

    def __init__(
        self,
        work_dir: Path,
        settings: DockerConfig | None = None,
        build_hosts: tuple[str, ...] = (),
    ) -> None:
        super().__init__(work_dir)
        self._client: Any = None
        self.settings = settings or DockerConfig()
        self.build_hosts = tuple(build_hosts)

    @classmethod
    def from_config(
        cls, work_dir: Path, validation: ValidationConfig, docker: DockerConfig
    ) -> DockerBackend:
        """Images, limits and build access come from ``[docker]``; the hosts builds may reach
        besides the package index from ``validation.build_hosts``."""
        return cls(work_dir, docker, build_hosts=tuple(validation.build_hosts))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None  # a connection does not cross processes; reconnect there
        return state

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = connect()
        return self._client

    @property
    def environments(self) -> DockerEnvironments:
        return DockerEnvironments(self.client, self.work_dir, self.settings, self.build_hosts)

    def fingerprint(self) -> dict[str, str]:
        limits = {"memory": self.settings.memory, "pids": self.settings.pids_limit,
                  "cpus": self.settings.cpus}  # fmt: skip
        return {
            "backend": self.name,
            "environment_schema": ENV_SCHEMA,
            "base_images": json.dumps(self.settings.base_images, sort_keys=True),
            "limits": json.dumps(limits, sort_keys=True),
        }

    def available_pythons(self) -> list[str]:
        """Python versions with a base image: built offline (Debian suites) or user-named."""
        return sorted(
            {*SUITES, *self.settings.base_images}, key=lambda v: tuple(map(int, v.split(".")))
        )

    def prepare(self, spec: EnvironmentSpec) -> DockerEnvironment:
        return self.environments.get(spec)

    def left_out(self, environment: object) -> tuple[str, ...]:
        return getattr(environment, "left_out", ())

    @contextlib.contextmanager
    def session(
        self, environment: DockerEnvironment, mirror: Path, commit: str, run_dir: Path
    ) -> Iterator[DockerSession]:
        with worktree(mirror, commit, run_dir / "repo") as tree:
            session = DockerSession(
                self.client, environment, tree, run_dir, self.settings, identity(mirror, commit)
            )
            session.checkout_key = (environment.image_id, str(mirror), commit)
            yield session
