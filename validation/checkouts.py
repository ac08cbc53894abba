"""The checkouts of one validation: at the base commit, in its environment, with generated files."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from builder.core.config import ValidationConfig
from validation.job import Job
from validation.runs.backends import Session
from validation.runs.backends.base import Backend
from validation.runs.generated import place_generated


class Checkouts:
    """Opens a validation's checkouts (the golden runs' and the existing tests')."""

    backend: Backend
    settings: ValidationConfig

    @contextlib.contextmanager
    def _session(
        self, job: Job, environment: object, mirror: Path, run_dir: Path
    ) -> Iterator[Session]:
        """A checkout at the base commit, with the files the environment's install generated
        that it lacks; with network when the spec allows it (``network`` is what the backend's
        runs honour). Its runs write bytecode: its patches are applied before any run, and the
        test patch is undone with the bytecode of its files (:func:`restore`)."""
        commit = job.record.base_commit
        with self.backend.session(environment, mirror, commit, run_dir) as session:
            session.network = job.network
            session.services = job.services
            session.bytecode = True
            log = job.logs / f"{run_dir.name}-generated.log"
            place_generated(session, mirror, log, job.environment_commit)
            yield session
