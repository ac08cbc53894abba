"""The local backend: uv-made venvs shared per environment hash, a git worktree per run, each
build and run in a bubblewrap sandbox (``sandbox = "none"``: limits and a netns only)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from builder.core.config import DockerConfig, ValidationConfig
from builder.core.files import write_text_if_changed
from builder.core.repos import worktree
from validation.environments import (
    sandbox,
    sandbox_cgroup,
    sandbox_root,
    sandbox_user,
    services,
)
from validation.environments.environment import (
    COMPLETE,
    EnvironmentSpec,
    LocalEnvironments,
    left_out,
)
from validation.environments.interpreters import Interpreters
from validation.environments.metadata import SHIM, Identity, identity
from validation.environments.refusal import SandboxRefused, refused_run
from validation.environments.runtime import RuntimeFiles
from validation.environments.sandbox import require as require_sandbox
from validation.runs import checkout_path, host_kill, test_ids
from validation.runs.backends.base import Backend, Session, read_optional
from validation.runs.patches import apply_patch
from validation.runs.process import Completed, run_killable

_LOOPBACK = r"""
import fcntl, os, socket, struct, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
request = struct.pack("16sH", b"lo", 0)
flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
fcntl.ioctl(sock, 0x8914, struct.pack("16sH", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP
sock.close()
os.execvp(sys.argv[1], sys.argv[1:])
"""
"""Exec shim of ``sandbox = "none"`` runs: bring loopback up in the netns ``unshare`` made."""

_UNSHARE_VARIANTS = (
    ("--net",),
    ("--net", "--user", "--map-current-user"),
    ("--net", "--user", "--map-root-user"),
)


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of a test run (0 = not limited) and whether the network is cut."""

    cpu_s: int = 0
    memory_mb: int = 0
    processes: int = 0
    file_size_mb: int = 0
    network: bool = False  # True: the run may use the network

    def rlimits(self) -> dict[str, int]:
        mib = 1024 * 1024
        return {
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_AS": self.memory_mb * mib,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_size_mb * mib,
        }


@functools.lru_cache(maxsize=1)
def network_isolation() -> tuple[tuple[str, ...] | None, str]:
    """The ``unshare`` arguments that cut the network here, or None and the reason it cannot."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return None, "no unshare(1) on this system (network namespaces need Linux + util-linux)"
    errors = []
    for variant in _UNSHARE_VARIANTS:
        completed = subprocess.run(
            [unshare, *variant, "true"], capture_output=True, text=True, timeout=30
        )
        if completed.returncode == 0:
            return (unshare, *variant), "network namespace (" + " ".join(variant) + ")"
        errors.append(f"{' '.join(variant)}: {completed.stderr.strip() or completed.returncode}")
    return None, "unshare cannot create a network namespace here: " + "; ".join(errors)


class LocalSession(Session):
    """A worktree on this machine; commands run with the environment's interpreter first.

    With ``bwrap`` (the bubblewrap binary) every command runs in a new sandbox that sees the
    checkout at ``/testbed`` and the run dir at ``/swt`` (both writable), the environment
    read-only and the rest of the host read-only; without it (``sandbox = "none"``) commands
    run on the host with limits and, where ``unshare`` can, without network.
    """

    def __init__(
        self,
        tree: Path,
        run_dir: Path,
        python: Path,
        spec: EnvironmentSpec | None = None,
        limits: Limits | None = None,
        project: Identity | None = None,
        bwrap: str | None = None,
    ) -> None:
        self.tree, self.run_dir, self.python = tree, run_dir, python
        self.spec = spec
        self.limits = limits or Limits()
        self.project = project  # its metadata as of the base commit, shadowed in every run
        self.bwrap = bwrap
        sandboxed = bwrap is not None
        self.testbed = sandbox.TESTBED if sandboxed else str(tree)  # as commands see them
        self.inside = sandbox.RUN_ROOT if sandboxed else str(run_dir)

    def apply(self, patch: str, label: str, check_only: bool = False) -> None:
        apply_patch(self.tree, patch, label, check_only)

    def run(self, command: list[str], log_path: Path, timeout_s: float) -> Completed:
        """SandboxRefused when the sandbox (or a launcher) did not start ``command``; HostKilled
        when the host ended it (``host_kill``). A run whose output looks like a launcher's
        refusal is one only when the same launchers refuse ``true`` now (:meth:`self_test`):
        its code may have printed that line itself."""
        oom_before = host_kill.oom_kills()
        completed, own_limit = self._run(command, log_path, timeout_s)
        looks_refused = not completed.timed_out and refused_run(completed.exit_code, log_path)
        if looks_refused:
            problem = self.self_test()
            if problem is not None:
                raise SandboxRefused(
                    f"the sandbox did not start a run: {problem} (it refuses `true` too)",
                    log=str(log_path),
                )
        killed = host_kill.killed_by_host(
            completed.exit_code, outside=self.bwrap is not None, oom_before=oom_before,
            oom_after=host_kill.oom_kills(), own_limit=own_limit,
        )  # fmt: skip
        if killed is not None:
            raise host_kill.HostKilled(killed, log=str(log_path))
        return completed

    def _run(self, command: list[str], log_path: Path, timeout_s: float) -> tuple[Completed, bool]:
        """The run, and whether it reached its own cgroup's ``memory.max``."""
        env = self._env()
        if self.bwrap is None:
            return run_killable(
                self.wrap(command), cwd=self.tree, env=env, log_path=log_path,
                timeout_s=timeout_s,
            ), False  # fmt: skip
        cgroups, _ = sandbox_cgroup.found()
        limits = self.limits
        with (
            sandbox_user.claimed() as user,
            sandbox_cgroup.run_group(cgroups, limits.processes, limits.memory_mb) as group,
        ):
            if user is not None:  # the builder is root: the run's own uid writes these
                user.lend(self.run_dir, self.tree)
            try:
                completed = run_killable(
                    sandbox_cgroup.entered(group, self.wrap(command, user)), cwd=self.tree,
                    env=env, log_path=log_path, timeout_s=timeout_s,
                )  # fmt: skip
                return completed, host_kill.limit_reached(group) > 0
            finally:
                if user is not None:  # the builder's again, git's checks of ownership too
                    sandbox_user.restore(self.run_dir, self.tree)

    def self_test(self) -> str | None:
        """Why this session's launchers (the sandbox with this run's mounts, its user switch,
        limits and network cut) cannot run ``true`` now, or None when they can: evidence no
        record's code wrote (``sandbox.attempt``)."""
        if self.bwrap is None:
            return sandbox.attempt(self.wrap([sandbox.TRUE], shims=False))
        with sandbox_user.claimed() as user:
            if user is not None:  # as for a run: its own uid enters the checkout
                user.lend(self.run_dir, self.tree)
            try:
                return sandbox.attempt(self.wrap([sandbox.TRUE], user, shims=False))
            finally:
                if user is not None:
                    sandbox_user.restore(self.run_dir, self.tree)

    def wrap(
        self, command: list[str], user: sandbox_user.User | None = None, shims: bool = True
    ) -> list[str]:
        """``command`` with its limits set, in the sandbox (as ``user`` when the builder is root)
        or, without one, no network unless allowed, where ``unshare`` can cut it; the network
        is allowed by the limits or by the session (a spec with ``network = true``). ``shims``:
        the session's services and package metadata around it (a self-test has none)."""
        network = self.limits.network or self.network
        if shims and self.services:  # innermost: the services live as long as the command
            command = services.shim(self.provide(services.SHIM), self.services, command)
        if shims and self.project is not None:
            command = self.project.shim(self.provide(SHIM), f"{self.inside}/metadata", command)
        limited = sandbox.limited(self.limits.rlimits(), command)
        if self.bwrap is not None:
            return sandbox.command(
                self.bwrap, limited, mounts=self._mounts(), network=network,
                cwd=sandbox.TESTBED, user=user,
            )  # fmt: skip
        if not network:
            isolation, _ = network_isolation()
            if isolation is not None:
                return [*isolation, sys.executable, "-I", "-c", _LOOPBACK, *limited]
        return limited

    def _mounts(self) -> list[sandbox.Mount | sandbox.Link]:
        """The environment and the interpreter it links to read-only (at their own paths,
        through their links), its site-packages layered (writable for this run alone) with the
        run's ``.pth`` of its checkout in it (``checkout_path``), the run dir at ``/swt`` and the
        checkout at ``/testbed``, both writable: nothing else of the host but its system
        directories."""
        environment = self.python.parent.parent
        mounts: list[sandbox.Mount | sandbox.Link] = [
            *sandbox_root.interpreter(self.python),
            sandbox.Mount(environment, str(environment)),
            *sandbox_root.reachable(environment),
        ]
        checkout = self._checkout_pth()
        for site_packages in sorted(environment.glob("lib/python*/site-packages")):
            mounts += sandbox.layered(site_packages)  # then this run's checkout before it
            real = os.path.realpath(site_packages)
            mounts.append(sandbox.Mount(checkout, f"{real}/{checkout_path.PTH}"))
        mounts.append(sandbox.Mount(self.run_dir, sandbox.RUN_ROOT, writable=True))
        mounts.append(sandbox.Mount(self.tree, sandbox.TESTBED, writable=True))
        return mounts

    def _run_paths(self) -> list[str]:
        metadata = f"{self.inside}/metadata" if self.project else None
        return checkout_path.run_paths(self.testbed, (self.tree / "src").is_dir(), metadata)

    def _checkout_pth(self) -> Path:
        """This run's ``.pth`` naming its checkout where the sandbox sees it (``checkout_path``),
        written in the run dir: each site-packages of the environment gets it in its layer."""
        path = self.run_dir / "tools" / checkout_path.PTH
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_if_changed(path, checkout_path.literal(self._run_paths()))
        return path

    def _shared_checkout_pth(self) -> None:
        """``sandbox = "none"``: the environment's own ``.pth`` that reads each run's paths from
        ``checkout_path.VARIABLE`` (one content for every run: written once, atomically)."""
        text = checkout_path.from_variable()
        environment = self.python.parent.parent
        for site_packages in sorted(environment.glob("lib/python*/site-packages")):
            write_text_if_changed(site_packages / checkout_path.PTH, text)

    def id_places(self) -> list[tuple[str, str]]:
        """The checkout, the environment and the interpreter it links to, the run dir with its
        home and temp dir, as the run sees them (the environment at its own path), and the
        work dir."""
        environment = self.python.parent.parent
        interpreter = Path(os.path.realpath(self.python)).parent.parent
        version = self.spec.python if self.spec is not None else ""
        return [
            *super().id_places(),
            *test_ids.run_pairs(
                self.testbed, str(environment), str(interpreter) if version else "", version,
                f"{self.inside}/home", f"{self.inside}/tmp",
            ),
            (self.inside, test_ids.RUN),
        ]  # fmt: skip

    def scratch_path(self, name: str) -> str:
        return f"{self.inside}/scratch/{name}"

    def read_scratch(self, name: str) -> bytes | None:
        return read_optional(self.run_dir / "scratch" / name)

    def provide(self, files: RuntimeFiles) -> str:
        folder = files.place(self.run_dir / "tools")
        return f"{self.inside}/tools/{folder.name}"

    def _env(self) -> dict[str, str]:
        """A minimal environment for untrusted code: no tokens, HOME and TMP in the run dir."""
        for folder in ("home", "tmp", "scratch"):
            (self.run_dir / folder).mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{self.python.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": f"{self.inside}/home",
            "TMPDIR": f"{self.inside}/tmp",
            **({} if self.bytecode else {"PYTHONDONTWRITEBYTECODE": "1"}),
            "LANG": "C.UTF-8",
            "VIRTUAL_ENV": str(self.python.parent.parent),
            test_ids.PLACES_VARIABLE: test_ids.places_variable(self.id_places()),
        }
        if self.bwrap is None:  # the environment's shared file reads the run's paths here
            self._shared_checkout_pth()
            env[checkout_path.VARIABLE] = os.pathsep.join(self._run_paths())
        if self.spec is not None:
            env.update(dict(self.spec.env))
        env.update(dict(self.extra_env))
        return env


class LocalBackend(Backend):
    """Environments under ``env_dir`` (default ``work_dir/envs``); mirrors under ``work_dir``.

    ``sandbox = "bwrap"`` (the default) runs every environment build and test run in a
    bubblewrap sandbox and refuses to start (SandboxUnavailable) where bubblewrap cannot run.
    """

    name = "local"

    def __init__(
        self,
        work_dir: Path,
        *,
        env_dir: Path | None = None,
        python_search_paths: list[str] | None = None,
        limits: Limits | None = None,
        installer: str = "auto",
        sandbox: str = "bwrap",
        build_timeout_s: float = 1800.0,
        build_hosts: tuple[str, ...] = (),
    ) -> None:
        super().__init__(work_dir)
        self.installer = installer
        self._specs: dict[Path, EnvironmentSpec] = {}
        self.limits = limits or Limits()
        self.sandbox = sandbox
        self.bwrap = require_sandbox(sandbox)
        self.environments = LocalEnvironments(
            Path(env_dir) if env_dir else self.work_dir / "envs",
            Interpreters(python_search_paths),
            installer,
            sandbox=sandbox,
            timeout_s=build_timeout_s,
            rlimits=self.limits.rlimits(),
            build_hosts=build_hosts,
        )

    @classmethod
    def from_config(
        cls, work_dir: Path, validation: ValidationConfig, docker: DockerConfig
    ) -> LocalBackend:
        """Environment dir, interpreters, sandbox, build timeout and run limits come from
        ``[validation]``."""
        return cls(
            work_dir,
            env_dir=Path(validation.env_dir) if validation.env_dir else None,
            python_search_paths=validation.python_search_paths,
            limits=Limits(**validation.limits.model_dump()),
            sandbox=validation.sandbox,
            build_timeout_s=validation.build_timeout_s,
            build_hosts=tuple(validation.build_hosts),
        )

    def fingerprint(self) -> dict[str, str]:
        if self.limits.network:
            isolation = "allowed"
        elif self.bwrap is not None:
            isolation = "network namespace (bwrap)"
        else:
            isolation = network_isolation()[1]
        found = {"backend": self.name, "sandbox": self.sandbox,
                 "limits": json.dumps(self.limits.rlimits()), "network": isolation}  # fmt: skip
        if self.bwrap is not None:  # what a sandboxed run sees is part of its result
            found["sandbox_version"] = str(sandbox.SANDBOX_VERSION)
        return found

    def available_pythons(self) -> list[str]:
        """Python minor versions this backend can build environments with."""
        return sorted(self.environments.interpreters.available())

    def self_test(self) -> str | None:
        """The disk's self-test, then a sandbox of its own made now for no record (a fresh
        one with no mounts of any record's, bubblewrap, user switch and limits as every run
        has them) running ``true``: what failed, or None."""
        problem = super().self_test()
        if problem is not None or self.bwrap is None:
            return problem or sandbox.attempt(
                sandbox.limited(self.limits.rlimits(), [sandbox.TRUE])
            )
        with sandbox_user.claimed() as user:
            return sandbox.self_test(self.bwrap, self.limits.rlimits(), user)

    def prepare(self, spec: EnvironmentSpec) -> Path:
        python = self.environments.python(spec)
        self._specs[python] = spec
        return python

    def left_out(self, environment: object) -> tuple[str, ...]:
        return left_out(Path(str(environment)).parent.parent)

    @contextlib.contextmanager
    def session(
        self, environment: Path, mirror: Path, commit: str, run_dir: Path
    ) -> Iterator[LocalSession]:
        with worktree(mirror, commit, run_dir / "repo") as tree:
            session = LocalSession(
                tree, run_dir, environment, self._specs.get(environment), self.limits,
                identity(mirror, commit), self.bwrap,
            )  # fmt: skip
            session.work_dir = self.work_dir
            session.checkout_key = (_built(environment), str(mirror), commit)
            yield session


def _built(environment: Path) -> str:
    """The environment as built: its path and its completion marker's identity, so a venv
    built again at the same path (after a failed or removed one) is another environment."""
    marker = Path(environment).parent.parent / COMPLETE
    try:
        found = marker.stat()
    except OSError:
        return str(environment)
    return f"{environment}@{found.st_ino}:{found.st_mtime_ns}"
