"""``swt-builder doctor``: what this machine can do: each tool's status and, if missing, its fix."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from builder.cli import options
from builder.core.config import Config

HELP = "check this machine: Docker, base images, sandbox, Pythons, uv, disk"

OK, MISSING, WARN, SKIPPED = "ok", "missing", "warn", "skipped"
LOW_DISK_GIB = 10.0
"""Below this much free space in the work dir, environments and images will not fit for long."""
SANDBOX_PROBE = ("--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true")
"""What a sandboxed run needs of bubblewrap: new namespaces, a read-only host."""


@dataclasses.dataclass(frozen=True)
class Check:
    """One line of the report: a tool, its status, what was found, and the fix when missing."""

    name: str
    status: str
    detail: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    def line(self) -> str:
        fix = f" — fix: {self.fix}" if self.fix else ""
        return f"{self.status:<8} {self.name:<12} {self.detail}{fix}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "work_dir")


def run(args: argparse.Namespace) -> int:
    """Print one line per check and the verdict; 0 when a build can run here, else 1."""
    return report(options.load(args))


def report(config: Config, echo: Callable[[str], None] = print) -> int:
    git = check_git()
    docker, client = check_docker()
    images = check_base_images(client, config)
    pythons = check_pythons(config)
    sandbox = check_sandbox(config)
    checks = [git, docker, images, sandbox, check_limits(config), pythons, check_uv()]
    checks.append(check_disk(config))
    for item in checks:
        echo(item.line())
    backends = []
    if git.ok and pythons.ok and sandbox.status in (OK, SKIPPED):
        backends.append("local")
    if git.ok and docker.ok and images.ok:
        backends.append("docker")
    if backends:
        echo(f"can build: yes, with the {' and the '.join(backends)} backend")
        return 0
    echo(
        "can build: no — fix the missing git, or for the local backend the Python interpreters "
        'and the sandbox (bubblewrap; or opt out: validation.sandbox = "none")'
    )
    return 1


def _version(command: list[str]) -> str:
    completed = subprocess.run(command, capture_output=True, text=True, timeout=30)
    return (completed.stdout or completed.stderr).strip().splitlines()[0]


def check_git() -> Check:
    git = shutil.which("git")
    if git is None:
        return Check("git", MISSING, "git is not on PATH", "apt-get install git")
    return Check("git", OK, _version([git, "--version"]))


def check_docker() -> tuple[Check, object | None]:
    """The daemon's answer, and a client to ask it more (None when it does not answer)."""
    from validation.environments.docker_engine import DockerUnavailable, connect

    try:
        client = connect(timeout_s=5)
    except DockerUnavailable as error:
        detail = str(error).splitlines()[0]
        fix = "start the Docker daemon (systemctl start docker) or set DOCKER_HOST; "
        fix += "without it builds use the local backend"
        return Check("docker", MISSING, detail, fix), None
    version = client.version().get("Version", "?")
    return Check("docker", OK, f"daemon answers (Docker {version})"), client


def check_base_images(client: object | None, config: Config) -> Check:
    """Base images present (the toolkit's, or those named in ``[docker] base_images``)."""
    from validation.environments.images import base_images_buildable, toolkit_images

    if client is None:
        return Check("base images", SKIPPED, "no Docker daemon")
    present = sorted(tag for image in toolkit_images(client, "base") for tag in image.tags)
    named = sorted(config.docker.base_images.values())
    found = [name for name in named if _image_exists(client, name)]
    absent = sorted(set(named) - set(found))
    if present or found:
        detail = "present: " + ", ".join(present + found)
        if absent:
            return Check("base images", WARN, detail, f"docker pull {' '.join(absent)}")
        return Check("base images", OK, detail)
    if base_images_buildable():
        return Check("base images", OK, "none yet; built on first use (debootstrap, as root)")
    fix = "swt-builder images base --python 3.11 (as root, apt-get install debootstrap), or "
    fix += 'name your own: [docker] base_images = {"3.11" = "python:3.11-slim"}'
    return Check("base images", MISSING, "none present and none can be built here", fix)


def _image_exists(client: object, name: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(name)  # type: ignore[attr-defined]
    except ImageNotFound:
        return False
    return True


def check_sandbox(config: Config) -> Check:
    """bubblewrap on PATH and able to make the namespaces a sandboxed run needs: required by
    the local backend unless ``validation.sandbox = "none"``."""
    if config.validation.sandbox == "none":
        detail = 'validation.sandbox = "none": local builds and runs are not sandboxed'
        return Check("sandbox", SKIPPED, detail)
    required = "required by the local backend"
    opt_out = ', or opt out: validation.sandbox = "none"'
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        detail = f"bwrap is not on PATH ({required})"
        return Check("sandbox", MISSING, detail, "apt-get install bubblewrap" + opt_out)
    completed = subprocess.run([bwrap, *SANDBOX_PROBE], capture_output=True, text=True, timeout=30)
    if completed.returncode != 0:
        why = (completed.stderr.strip() or f"exit {completed.returncode}").splitlines()[0]
        fix = "allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1"
        fix += " (Ubuntu: kernel.apparmor_restrict_unprivileged_userns=0), or run as root"
        detail = f"{bwrap} cannot make namespaces ({required}): {why}"
        return Check("sandbox", MISSING, detail, fix + opt_out)
    return Check("sandbox", OK, f"{bwrap} makes namespaces (the local backend's sandbox)")


def check_limits(config: Config) -> Check:
    """Which limits hold for a local run here: rlimits per process (the process count only
    for a uid other than 0: as root, sandboxes run as unprivileged uids of their own), and
    per-run cgroups where cgroup v2 is delegated."""
    import os

    from validation.environments import sandbox_cgroup

    limits = config.validation.limits
    held = [f"memory_mb {limits.memory_mb} per process", f"cpu_s {limits.cpu_s}"]
    sandboxed = config.validation.sandbox != "none"
    if os.geteuid() != 0:
        held.append(f"processes {limits.processes} (this user's)")
    elif sandboxed:
        held.append(f"processes {limits.processes} (an unprivileged uid per sandbox)")
    folder, why = sandbox_cgroup.preview()  # a check changes no cgroup
    detail = "rlimits: " + ", ".join(held)
    if not sandboxed:
        detail += '; validation.sandbox = "none": no per-run cgroup'
        if os.geteuid() == 0:  # uid 0 is exempt from the process limit
            return Check("limits", WARN, detail, 'validation.sandbox = "bwrap"')
        return Check("limits", OK, detail)
    if folder is None:
        fix = "delegate cgroup v2 with the pids and memory controllers (systemd: Delegate=yes)"
        return Check("limits", WARN, f"{detail}; no per-run cgroup: {why}", fix)
    return Check("limits", OK, f"{detail}; {why}")


def check_pythons(config: Config) -> Check:
    """The interpreters local environments can be built from (uv's and the search paths')."""
    from packaging.version import Version

    from validation.environments.interpreters import Interpreters

    found = Interpreters(config.validation.python_search_paths).available()
    if not found:
        fix = "uv python install 3.11 (or pyenv install 3.11; see validation.python_search_paths)"
        return Check("python", MISSING, "no Python interpreter found", fix)
    versions = " ".join(sorted(found, key=Version))
    return Check("python", OK, f"{versions} ({len(found)} interpreters)")


def check_uv() -> Check:
    from validation.environments.interpreters import find_uv

    uv = find_uv()
    if uv is None:
        fix = "pip install uv (without it environments use pip and are not dated)"
        return Check("uv", MISSING, "uv not found", fix)
    return Check("uv", OK, f"{_version([uv, '--version'])} ({uv})")


def check_disk(config: Config) -> Check:
    """Free space where the work dir is (or would be created)."""
    where = Path(config.work_dir)
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free / 2**30
    detail = f"{free:.1f} GiB free at {where}"
    if free < LOW_DISK_GIB:
        fix = f"free space, or set work_dir on a disk with {LOW_DISK_GIB:.0f}+ GiB free"
        return Check("disk", WARN, detail, fix)
    return Check("disk", OK, detail)
