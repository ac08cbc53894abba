"""The Docker engine for the tests: install it, start dockerd, build the base image once."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from builder.core.config import DockerConfig
from validation.environments.docker_engine import connect, daemon_answers
from validation.environments.images import ensure_base_image

PYTHON = "3.11"
"""The base image the tests use: bookworm's Python, also the local backend's default."""

_LOG = Path(tempfile.gettempdir()) / "swt-test-dockerd.log"
PIDFILE = Path("/var/run/docker.pid")
"""Where dockerd (by default) writes its process id."""
_STARTED: set[int] = set()
"""Process ids of the daemons these tests started (each stopped when the tests end)."""


def _install_missing() -> None:
    wanted = {"dockerd": "docker.io", "debootstrap": "debootstrap"}
    missing = [
        package
        for program, package in wanted.items()
        if shutil.which(program) is None and not os.access(f"/usr/sbin/{program}", os.X_OK)
    ]
    if not missing:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", *missing], check=True, env=env, capture_output=True
    )


def _start_daemon(stop_at_exit: bool = True) -> None:
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    log = _LOG.open("ab")
    process = subprocess.Popen(
        [dockerd], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    if stop_at_exit:
        _STARTED.add(process.pid)
        atexit.register(_stop, process)
    for _ in range(120):
        if daemon_answers():
            return
        if process.poll() is not None:
            raise RuntimeError(f"dockerd exited with {process.returncode}; see {_LOG}")
        time.sleep(0.5)
    raise RuntimeError(f"dockerd did not answer within 60 s; see {_LOG}")


def _stop(process: subprocess.Popen) -> None:
    """Stop the daemon these tests started (not one that was already running)."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def restart_daemon() -> float:
    """Stop the running dockerd (its containers stop with it) and start it again as
    :func:`engine` does, waiting until it answers; the seconds it was away. One these tests did
    not start is started again to keep running after them, as it was."""
    pid = int(PIDFILE.read_text())
    started = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    while _alive(pid):
        with contextlib.suppress(ChildProcessError):  # a child of these tests: reap it
            os.waitpid(pid, os.WNOHANG)
        if time.monotonic() - started > 60:
            raise RuntimeError(f"dockerd {pid} did not stop within 60 s; see {_LOG}")
        time.sleep(0.2)
    _start_daemon(stop_at_exit=pid in _STARTED)
    return time.monotonic() - started


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def local_daemon() -> bool:
    """Whether the daemon the tests use is a dockerd of this machine they may restart."""
    return "DOCKER_HOST" not in os.environ and PIDFILE.is_file()


@functools.lru_cache(maxsize=1)
def engine():
    """A client of a running daemon: installed and started here when none answers."""
    if not daemon_answers():
        _install_missing()
        _start_daemon()
    return connect()


@functools.lru_cache(maxsize=1)
def base_image():
    """The toolkit's base image for :data:`PYTHON` (built offline once, reused by name/label)."""
    work_dir = Path(tempfile.gettempdir()) / "swt-test-docker"  # its log stays for a failure
    return ensure_base_image(engine(), PYTHON, DockerConfig(), work_dir)


def bridge_gateway(client) -> str:
    """The address of this machine on Docker's default bridge: its IPAM gateway, or the first
    host address of its subnet where the daemon names no gateway."""
    import ipaddress

    config = client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    if config.get("Gateway"):
        return config["Gateway"]
    return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))
