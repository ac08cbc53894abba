"""The backend interface: build an environment, open a checkout session, run commands in it."""

from __future__ import annotations

import abc
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from builder.core.config import DockerConfig, ValidationConfig
from validation.environments.environment import EnvironmentSpec
from validation.environments.runtime import RuntimeFiles
from validation.runs import test_ids
from validation.runs.process import Completed


class Session(abc.ABC):
    """One checkout of a repository at a commit, inside an environment, for one validation."""

    network: bool = False
    """True: this session's runs may use the network (a spec's ``network = true``)."""

    services: tuple[str, ...] = ()
    """Local stand-ins for network services each run starts on its loopback and stops after
    (``validation.environments.services``)."""

    bytecode: bool = False
    """True: this session's runs write bytecode, and a later run reuses it. Only for a checkout
    whose sources no run follows with a change the bytecode could outlive: Python checks a
    cached ``.pyc`` by its source's size and second, and a patch applied within the second a
    run compiled the file, keeping its size, would run the old code."""

    tree: Path
    """The checkout on this machine (what the runs see at their fixed path); read, never run."""

    extra_env: tuple[tuple[str, str], ...] = ()
    """Variables this session's runs get besides the backend's and the spec's (set by the
    caller, e.g. the variables SWT-Bench's command for the repository sets)."""

    work_dir: Path | None = None
    """The builder's work dir, when the backend has one (a place of test ids: ``test_ids``)."""

    checkout_key: tuple[str, str, str] | None = None
    """(environment, mirror, commit) this session's checkout was opened from, set by the
    backend: two sessions of one key start from the same files in the same environment, so
    what one found of the environment's generated files holds for the other
    (``validation.runs.generated``); None: nothing is shared."""

    generated_listed: bool = False
    """True once this session's checkout had its generated files placed (a later call lists
    the checkout as it is then)."""

    def id_places(self) -> list[tuple[str, str]]:
        """The paths of this session's runs that a test id may hold, with their placeholders
        (``validation.runs.test_ids``), as commands see them; runs get those a process cannot
        find itself in ``test_ids.PLACES_VARIABLE``."""
        return [(str(self.work_dir), test_ids.WORK)] if self.work_dir else []

    @abc.abstractmethod
    def apply(self, patch: str, label: str, check_only: bool = False) -> None:
        """Apply a patch to the checkout; raise PatchError (git's message) if it does not apply."""

    @abc.abstractmethod
    def run(self, command: list[str], log_path: Path, timeout_s: float) -> Completed:
        """Run ``command`` in the checkout (no secrets, HOME/TMP private); kill all on timeout."""

    @abc.abstractmethod
    def scratch_path(self, name: str) -> str:
        """A path, as commands in the session see it, for a file the session may write."""

    @abc.abstractmethod
    def read_scratch(self, name: str) -> bytes | None:
        """The bytes of a scratch file written by a command, or None if there is none."""

    @abc.abstractmethod
    def provide(self, files: RuntimeFiles) -> str:
        """The folder, as commands in the session see it, holding copies of ``files`` in every
        later run (named by their digest, so a command naming a file there names its hash)."""


class Backend(abc.ABC):
    """Builds environments once per spec and opens sessions in them."""

    name: str

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = Path(work_dir)

    @classmethod
    @abc.abstractmethod
    def from_config(
        cls, work_dir: Path, validation: ValidationConfig, docker: DockerConfig
    ) -> Backend:
        """The backend as the configuration sets it up, its caches under ``work_dir``; each
        backend reads the sections it needs (``[validation]``, ``[docker]``)."""

    @abc.abstractmethod
    def fingerprint(self) -> dict[str, str]:
        """What of the backend affects results (part of every validation result key)."""

    @abc.abstractmethod
    def prepare(self, spec: EnvironmentSpec) -> object:
        """Build (or reuse) the environment; raise EnvironmentBuildError with a log on failure."""

    def self_test(self) -> str | None:
        """Why this machine cannot do what every record needs now, found for no record (no
        record's code runs in it): None when it can. Here: the work dir's disk takes a file;
        a backend with a sandbox starts one too."""
        return disk_problem(self.work_dir)

    def left_out(self, environment: object) -> tuple[str, ...]:
        """The optional additions of ``environment``'s spec its build left out (they could not
        be installed beside its pinned stack: ``environment.optional_additions``)."""
        return ()

    @abc.abstractmethod
    def session(
        self, environment: object, mirror: Path, commit: str, run_dir: Path
    ) -> contextlib.AbstractContextManager[Session]:
        """A fresh checkout of ``commit`` from ``mirror``, removed when the context ends."""


SELF_TEST_BYTES = 1 << 20
"""What the disk self-test writes: a full disk refuses it, where an empty file would pass."""


def disk_problem(directory: Path) -> str | None:
    """Why a MiB cannot be written in ``directory`` now (and removed), or None."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".swt-self-test-") as probe:
            probe.write(b"\0" * SELF_TEST_BYTES)
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as error:
        return f"{directory} does not take a file of {SELF_TEST_BYTES} bytes: {error}"
    return None


def read_optional(path: Path) -> bytes | None:
    """A file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


__all__ = ["Backend", "Iterator", "Session", "read_optional"]
