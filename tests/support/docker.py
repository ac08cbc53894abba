"""The Docker engine for the tests: install it, start dockerd, build the base image once."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
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


def _start_daemon() -> None:
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    log = _LOG.open("ab")
    process = subprocess.Popen(
        [dockerd], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
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
