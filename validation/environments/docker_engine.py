"""The Docker engine as the toolkit uses it: connecting, labels, tar copies and killable runs."""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import io
import logging
import os
import signal
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import IO, Any, TypeVar

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from builder.core import __version__
from builder.core.capped_log import CappedLog
from builder.core.faults import InfrastructureError

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

ATTEMPTS = 3
"""How many times an operation the daemon interrupted is tried in all before the build stops."""
DAEMON_WAIT_S = 120.0
"""How long a retry waits for the daemon to answer again (a restart) before it tries anyway."""

_GONE = ("marked for removal", "is dead", "which is dead", "removal of container")
"""What the daemon's conflict (409) answers say of a container removed under an operation."""

_STOP_EXIT_CODES = (128 + 15, 128 + 9)
"""How a container the daemon stopped ends: its SIGTERM, or the SIGKILL after it."""
_SIGNALLED = ("kill", "stop")
"""The daemon's events of a container sent a signal through it (``docker kill``/``stop``)."""
_END_EVENT_WAIT_S = 10.0
"""How long the end of a container may take to reach its event stream after its wait."""

LOG = logging.getLogger(__name__)
T = TypeVar("T")


class DockerUnavailable(InfrastructureError):
    """No Docker daemon answers (the docker backend was asked for explicitly)."""

    fault = "docker"


class DaemonInterrupted(InfrastructureError):
    """The daemon went away in the middle of an operation (restarted, or the container was
    removed or stopped under it): no result of the operation can be read, so it is tried
    again."""

    fault = "docker"


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` says the daemon, not the work, failed: the connection to it broke, the
    container is gone, or the daemon answered with a server error."""
    if isinstance(error, (DaemonInterrupted, requests.exceptions.ConnectionError)):
        return True
    if isinstance(error, ImageNotFound):
        return False
    if isinstance(error, NotFound):
        return True
    if isinstance(error, APIError) and error.status_code == 409:
        return any(words in str(error.explanation).lower() for words in _GONE)
    return isinstance(error, APIError) and error.is_server_error()


def with_retries(
    operation: Callable[[], T],
    what: str,
    *,
    attempts: int = ATTEMPTS,
    wait: Callable[[], object] | None = None,
) -> T:
    """``operation()``, tried again (up to ``attempts`` in all, one warning each) while the
    daemon interrupts it (:func:`interrupted`); ``wait`` runs before each new try (default: wait
    for the daemon to answer). Any other error is the operation's own and is raised at once;
    the last interruption raises DaemonInterrupted: the instance's ``infra_error``."""
    for attempt in range(1, attempts + 1):
        try:
            return operation()
        except Exception as error:
            if not interrupted(error):
                raise
            if attempt == attempts:
                raise DaemonInterrupted(
                    f"{what}: the Docker daemon interrupted it {attempts} times; last: {error}"
                ) from error
            LOG.warning(
                "%s: interrupted by the Docker daemon (%s); trying again (%d of %d)",
                what, error, attempt + 1, attempts,
            )  # fmt: skip
            (wait or wait_for_daemon)()
    raise AssertionError("unreachable")  # the loop returns or raises


def wait_for_daemon(limit_s: float = DAEMON_WAIT_S) -> bool:
    """Wait until a daemon answers (True) or ``limit_s`` passed (False)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if daemon_answers():
            return True
        time.sleep(1.0)
    return False


def remove(container: Any) -> None:
    """Remove ``container`` (killing it) with its anonymous volumes. One already gone or being
    removed is fine; one left because the daemon is away carries the toolkit's labels
    (``images prune`` removes it)."""
    try:
        container.remove(force=True, v=True)
    except NotFound:
        pass
    except APIError as error:
        if error.status_code == 409 and interrupted(error):  # already being removed
            return
        if not interrupted(error):
            raise
        LOG.warning("container %s not removed: %s", container.id[:12], error)
    except requests.exceptions.ConnectionError as error:
        LOG.warning("container %s not removed: %s", container.id[:12], error)


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
    oom_killed: bool = False
    """The kernel killed a process of the container at its memory limit (the work's own end)."""


class _Signals:
    """The signals sent to a container through the daemon (``docker kill``, ``docker stop``)
    until it ends, read from the daemon's events as they happen (its event log keeps only the
    last few hundred of all containers: read later, a busy daemon's may have dropped them).

    A kernel OOM kill or a process of the container killing another is no such event."""

    def __init__(self, container: Any) -> None:
        created = time.strptime(str(container.attrs["Created"])[:19], "%Y-%m-%dT%H:%M:%S")
        self.stream = container.client.api.events(
            since=calendar.timegm(created),  # the daemon's clock: its events from the start
            filters={"container": container.id, "event": [*_SIGNALLED, "die"]},
            decode=True,
        )
        self.sent: list[str] = []
        self.ended = threading.Event()
        threading.Thread(target=self._read, name="swt-container-events", daemon=True).start()

    def _read(self) -> None:
        try:
            for event in self.stream:
                action = event.get("Action") or event.get("status")
                if action == "die":
                    break
                if action in _SIGNALLED:
                    number = (event.get("Actor") or {}).get("Attributes", {}).get("signal")
                    self.sent.append(f"docker {action}" + (f" {_name(number)}" if number else ""))
        except Exception:  # noqa: BLE001 - the stream closed: the daemon went away, or we did
            pass
        finally:
            self.ended.set()

    def before_end(self) -> list[str]:
        """The signals sent before the container ended (its end awaited a little)."""
        self.ended.wait(_END_EVENT_WAIT_S)
        return list(self.sent)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stream.close()


def _name(number: str) -> str:
    try:
        return signal.Signals(int(number)).name
    except ValueError:
        return f"signal {number}"


def run_to_end(container: Any, log_path: Path, timeout_s: float) -> ContainerRun:
    """Start a created container, wait; on timeout kill it. Its output goes to ``log_path``.

    A connection lost before the timeout is no timeout: DaemonInterrupted. Neither is an end by
    SIGTERM or SIGKILL while no new connection reaches the daemon: one shutting down closes its
    socket, then stops every container and may answer their waits (on connections already
    open) with the exit code of its stop, which says nothing of the work. Nor is an end after
    a signal someone sent through the daemon (``docker kill``/``stop``; the toolkit sends its
    own only after the timeout): what the work would have done is unknown. A kernel OOM kill
    at the container's memory limit is the work's own end (``oom_killed``)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    signals = _Signals(container)
    try:
        started = time.monotonic()
        container.start()
        try:
            status = container.wait(timeout=timeout_s)
            exit_code, timed_out = int(status["StatusCode"]), False
        except requests.exceptions.ConnectionError as error:  # urllib3's read timeout too
            if time.monotonic() - started < timeout_s:  # not a timeout: the daemon went away
                raise DaemonInterrupted(f"connection to the Docker daemon lost: {error}") from error
            exit_code, timed_out = None, True
        except requests.exceptions.ReadTimeout:
            exit_code, timed_out = None, True
        if exit_code in _STOP_EXIT_CODES and not daemon_answers():
            raise DaemonInterrupted(
                f"the container ended (exit code {exit_code}) as the Docker daemon went away"
            )
        sent = [] if timed_out else signals.before_end()
        if sent:
            raise DaemonInterrupted(
                f"the container was stopped from outside ({', '.join(sent)}; exit code {exit_code})"
            )
    finally:
        signals.close()
    if timed_out:
        with contextlib.suppress(APIError):  # 409: it ended as the time ran out
            container.kill()
        container.wait(timeout=60)
    duration = round(time.monotonic() - started, 3)
    _write_log(container, log_path)
    container.reload()
    oom_killed = bool(container.attrs.get("State", {}).get("OOMKilled"))
    return ContainerRun(exit_code, timed_out, duration, oom_killed)


def _write_log(container: Any, log_path: Path) -> None:
    """The container's output to ``log_path``, streamed and bounded (``CappedLog``)."""
    chunks = container.logs(stdout=True, stderr=True, stream=True)
    with log_path.open("wb") as handle:
        log = CappedLog(handle)
        for chunk in [chunks] if isinstance(chunks, bytes) else chunks:  # bytes: all at once
            log.write(chunk)
        log.close()


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
