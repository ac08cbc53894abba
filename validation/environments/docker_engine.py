"""The Docker engine as the toolkit uses it: connecting, labels, tar copies and killable runs."""

from __future__ import annotations

import dataclasses
import io
import os
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import IO, Any

import docker
import requests
from docker.errors import DockerException

from builder.core import __version__
from builder.core.errors import SwtError

LABEL_PREFIX = "org.swt-builder."
CREATED_BY = LABEL_PREFIX + "created-by"
KIND = LABEL_PREFIX + "kind"  # base | environment | build | run
TOOLKIT_VERSION = LABEL_PREFIX + "toolkit-version"
PYTHON = LABEL_PREFIX + "python"
SUITE = LABEL_PREFIX + "suite"
SPEC_HASH = LABEL_PREFIX + "spec-hash"
SPEC_KEY = LABEL_PREFIX + "spec-key"
SPEC_LABEL = LABEL_PREFIX + "spec-label"
BASE_IMAGE = LABEL_PREFIX + "base-image"
SCHEMA = LABEL_PREFIX + "schema"
USER_BASE = LABEL_PREFIX + "user-base"

_CONNECT_TIMEOUT_S = 300
_SPOOL_BYTES = 64 * 2**20


class DockerUnavailable(SwtError, RuntimeError):
    """No Docker daemon answers (the docker backend was asked for explicitly)."""


def connect(timeout_s: float = _CONNECT_TIMEOUT_S) -> docker.DockerClient:
    """A client for the daemon in the environment (DOCKER_HOST or the default socket)."""
    try:
        client = docker.from_env(version="auto", timeout=int(timeout_s))
        client.ping()
    except (DockerException, requests.RequestException) as error:
        raise DockerUnavailable(f"no Docker daemon answers: {error}") from error
    return client


def daemon_answers() -> bool:
    """Whether a Docker daemon answers a ping within a few seconds."""
    try:
        connect(timeout_s=5).close()
    except DockerUnavailable:
        return False
    return True


def labels(kind: str, **extra: str) -> dict[str, str]:
    """The labels every object the toolkit creates carries: what made it, and which kind."""
    return {
        CREATED_BY: "swt-builder",
        KIND: kind,
        TOOLKIT_VERSION: __version__,
        **{LABEL_PREFIX + name.replace("_", "-"): value for name, value in extra.items()},
    }


def label_filter(kind: str | None = None) -> dict[str, Any]:
    """A ``filters`` argument selecting the toolkit's objects (of one kind)."""
    wanted = [f"{CREATED_BY}=swt-builder"]
    if kind is not None:
        wanted.append(f"{KIND}={kind}")
    return {"label": wanted}


@dataclasses.dataclass(frozen=True)
class ContainerRun:
    exit_code: int | None
    timed_out: bool
    duration_s: float


def run_to_end(container: Any, log_path: Path, timeout_s: float) -> ContainerRun:
    """Start a created container, wait; on timeout kill it. Its output goes to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    container.start()
    try:
        status = container.wait(timeout=timeout_s)
        exit_code, timed_out = int(status["StatusCode"]), False
    except requests.exceptions.ConnectionError:  # urllib3's read timeout surfaces as this
        exit_code, timed_out = None, True
    except requests.exceptions.ReadTimeout:
        exit_code, timed_out = None, True
    if timed_out:
        container.kill()
        container.wait(timeout=60)
    duration = round(time.monotonic() - started, 3)
    log_path.write_bytes(container.logs(stdout=True, stderr=True))
    return ContainerRun(exit_code, timed_out, duration)


def tar_tree(
    source: Path, prefix: str, exclude: Iterable[str] = (".git",), dirs: Iterable[str] = ()
) -> IO[bytes]:
    """A tar of ``source``'s content under ``prefix`` (top-level names in ``exclude`` left out),
    plus the empty, world-writable directories ``dirs`` (one copy into a container, not two)."""
    buffer = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)
    skipped = set(exclude)
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o777, int(time.time())
            archive.addfile(info)
        archive.add(str(source), arcname=prefix, recursive=False)
        for entry in sorted(os.listdir(source)):
            if entry in skipped:
                continue
            archive.add(str(source / entry), arcname=f"{prefix}/{entry}")
    buffer.seek(0)
    return buffer


def tar_files(files: dict[str, bytes | None], modes: dict[str, int] | None = None) -> io.BytesIO:
    """A tar of in-memory files (``None``: a directory), each with an optional mode."""
    buffer = io.BytesIO()
    modes = modes or {}
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.mtime = int(time.time())
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, modes.get(name, 0o777)
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), modes.get(name, 0o644)
                archive.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def extract_files(chunks: Iterable[bytes], destination: Path) -> list[Path]:
    """Write the regular files of a tar stream (from ``get_archive``) under ``destination``.

    The archive's top directory is dropped; links, devices and paths leaving it are refused.
    """
    data = io.BytesIO(b"".join(chunks))
    written = []
    with tarfile.open(fileobj=data, mode="r") as archive:
        for member in archive.getmembers():
            parts = PurePosixPath(member.name).parts[1:]
            if not member.isfile() or not parts or ".." in parts:
                continue
            target = destination.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = archive.extractfile(member)
            if handle is not None:
                target.write_bytes(handle.read())
                written.append(target)
    return written
