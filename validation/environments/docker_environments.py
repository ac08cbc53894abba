"""Docker environment images: one per spec and base image, tagged by the hash that defines it."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import shlex
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docker.errors import ImageNotFound, NotFound
from docker.types import Mount

from builder.core.config import DockerConfig
from builder.core.faults import InfrastructureError
from builder.core.files import canonical_json
from builder.core.repos import file_lock, submodules
from validation.environments.docker_engine import (
    PYTHON,
    SPEC_HASH,
    SUITE,
    labels,
    remove,
    run_to_end,
    tar_files,
    with_retries,
)
from validation.environments.egg_info_tags import SETUP_CFG, without_tags
from validation.environments.environment import (
    LEFT_OUT,
    RETRY,
    RETRY_NAME,
    URL_SOURCES,
    EnvironmentBuildError,
    EnvironmentSpec,
    InstallStep,
    install_steps,
    shown,
)
from validation.environments.images import ENV_REPOSITORY, BaseImageError, ensure_base_image
from validation.environments.index_proxy import ANY, IndexProxy, allowed_hosts, through_forwarder
from validation.environments.interpreters import find_uv
from validation.environments.sandbox import PROXY_DIR, PROXY_PORT, forwarded
from validation.environments.url_sources import Unreachable
from validation.environments.url_sources import archive as url_archive

ENV_SCHEMA = "2"
"""Bump when how an environment image is made changes: every environment image is rebuilt.
2: the project is installed with its VCS metadata (``.git``), as the local backend's worktree."""

VENV = "/opt/swt-env"
WORKDIR = "/testbed"
PROJECT_DIR = "/swt/project"
_UV = "/swt/bin/uv"
_CA_BUNDLE = "/swt/ca-bundle.crt"
_VCS = "/swt/vcs.git"
"""In a build container: the project's repository, refs only (its objects are the mirror's,
mounted read-only at :data:`_VCS_OBJECTS`)."""
_VCS_OBJECTS = "/mnt/swt-mirror-objects"
"""Outside ``/swt``, which the build removes (a mount point cannot be): an empty folder in the
image, as the uv cache's mount point is."""
_UV_CACHE = "/var/cache/swt-uv"
_DEBIAN_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO")
"""The variables that name the CA bundle to a build's clients (uv, pip, requests, git)."""
HOST_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
"""The only variables of this machine's environment a build container sees, and only with
``[docker] proxy_passthrough``: every other value it gets is set here (no token, ever)."""
LEFT_OUT_LABEL = "org.swt-builder.left-out"
"""The image's label naming (JSON) the optional additions its build left out."""
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclasses.dataclass(frozen=True)
class DockerEnvironment:
    """A built environment image: what test-run containers start from."""

    image_id: str
    tag: str
    spec: EnvironmentSpec
    left_out: tuple[str, ...] = ()  # optional additions the build left out (``LEFT_OUT``)


def environment_steps(spec: EnvironmentSpec) -> list[InstallStep]:
    """The install steps of ``spec`` in an image: the shared ``install_steps``, our paths."""
    return install_steps(
        spec,
        base_python=f"python{spec.python}",
        venv=VENV,
        project_dir=PROJECT_DIR if spec.project is not None else None,
        installer="uv",
        uv=_UV,
        sources_dir=f"/swt/{URL_SOURCES}",
    )


def image_env(spec: EnvironmentSpec) -> dict[str, str]:
    """The environment variables baked into the image (no build-time settings among them)."""
    return {
        "PATH": f"{VENV}/bin:{_SYSTEM_PATH}",
        "VIRTUAL_ENV": VENV,
        "LANG": "C.UTF-8",
        **dict(spec.env),
    }


def image_hash(spec: EnvironmentSpec, base_image_id: str) -> str:
    """Content hash of everything that defines the image: base, spec, steps, schema."""
    material = {
        "schema": ENV_SCHEMA,
        "base_image": base_image_id,
        "spec": spec.key(),
        "steps": [dataclasses.asdict(step) for step in environment_steps(spec)],
        "env": image_env(spec),
    }
    return hashlib.sha256(canonical_json(material).encode()).hexdigest()[:24]


def ca_bundle(settings: DockerConfig) -> Path | None:
    """The CA bundle passed into builds: the configured one, else Debian's if present."""
    if settings.ca_bundle is not None:
        return Path(settings.ca_bundle)
    return _DEBIAN_CA_BUNDLE if _DEBIAN_CA_BUNDLE.is_file() else None


def build_exports(
    spec: EnvironmentSpec, settings: DockerConfig, with_ca: bool, *, forwarder: bool = False
) -> dict[str, str]:
    """The variables the build script exports: fixed ones, the spec's, the CA bundle's, and of
    this machine's environment only :data:`HOST_VARIABLES` (an allow-list, as test runs have).
    With ``forwarder`` every proxy setting names the build's forwarder to the index proxy (the
    builder's own proxy is the index proxy's way out)."""
    exports = {
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CACHE_DIR": _UV_CACHE,
        "UV_NO_PROGRESS": "1",
        "DEBIAN_FRONTEND": "noninteractive",
        **dict(spec.env),
    }
    if with_ca:
        for variable in CA_VARIABLES:
            exports[variable] = _CA_BUNDLE
    if settings.proxy_passthrough:
        exports.update({name: os.environ[name] for name in HOST_VARIABLES if name in os.environ})
    return through_forwarder(exports, PROXY_PORT) if forwarder else exports


def build_hosts(
    spec: EnvironmentSpec, settings: DockerConfig, extra: tuple[str, ...] = ()
) -> frozenset[str]:
    """The hosts an image build may reach: the package index hosts of its settings
    (``index_proxy.allowed_hosts``), ``extra`` (``validation.build_hosts``), and the Debian
    mirror's host when it installs system packages; ``"*"`` among them: any host."""
    hosts = allowed_hosts(build_exports(spec, settings, with_ca=False), extra)
    mirror = urlsplit(settings.debian_mirror).hostname
    if (spec.system_packages or spec.image_packages) and mirror:
        hosts |= {mirror.lower()}
    return hosts


def vcs_metadata(source: str, commit: str, project_dir: str = PROJECT_DIR) -> str:
    """The shell command giving ``project_dir`` (the project's files at ``commit``, exported
    without ``.git``) the repository ``source`` as its ``.git``: HEAD detached at ``commit``,
    every branch and tag, the index of ``commit``. setuptools-scm, hatch-vcs and versioneer then
    compute the version the local backend's build computes from its worktree of the mirror (the
    nearest tag, the distance, the node; dirty where the install edits a file), instead of
    failing without ``.git``. The objects stay ``source``'s (``--shared``)."""
    clone = f"{project_dir}.vcs"
    return (
        f"git clone --quiet --shared --no-checkout {source} {clone}"
        f" && mv {clone}/.git {project_dir}/.git && rmdir {clone}"
        f" && git -C {project_dir} update-ref --no-deref HEAD {commit}"
        f" && git -C {project_dir} reset --quiet"
    )


def install_lines(spec: EnvironmentSpec) -> list[str]:
    """The shell lines running :func:`environment_steps`, each echoed first (a build script's
    body: the Docker backend's and an exported task's ``build.sh``)."""
    lines = []
    steps = environment_steps(spec)
    if any(RETRY in step.argv for step in steps):  # written once, run by name
        lines.append(f"{RETRY_NAME}={shlex.quote(RETRY)}")
    for step in steps:
        command = shown(step.argv, shlex.quote)
        if step.argv[0] == "apt-get":
            command = f"apt-get update -q && {command}"
        if step.in_project:
            command = f"cd {PROJECT_DIR} && {command}"
        lines += [f"echo {shlex.quote(f'$ [{step.label}] {command}')}", f"( {command} )"]
    return lines


def build_script(
    spec: EnvironmentSpec, settings: DockerConfig, with_ca: bool, *, forwarder: bool = False
) -> str:
    """The shell script run in the build container; build-time settings live only in it. The
    project, when there is one, gets its ``.git`` first (:func:`vcs_metadata`, from the refs
    at ``/swt/vcs.git`` whose objects are the mirror's)."""
    exports = build_exports(spec, settings, with_ca, forwarder=forwarder)
    lines = ["#!/bin/sh", "set -eu"]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in exports.items()]
    if spec.project is not None:
        lines.append(vcs_metadata(_VCS, spec.project_commit))
    lines += install_lines(spec)
    lines += ["cd /", "rm -rf /swt /root/.cache", ""]
    return "\n".join(lines)


def limits(settings: DockerConfig) -> dict[str, Any]:
    """The resource limits of every container that runs untrusted code, builds and test runs:
    ``docker.memory`` (swap included), ``pids_limit``, ``cpus`` (0: none), no new privileges.
    They bound what a build may use, not what it makes: no part of the image hash."""
    return {
        "mem_limit": settings.memory,
        "memswap_limit": settings.memory,
        "pids_limit": settings.pids_limit,
        "nano_cpus": int(settings.cpus * 1e9),
        "security_opt": ["no-new-privileges"],
    }


class DockerEnvironments:
    """Builds environment images once per hash and reuses them; safe across threads/processes.

    A build container has no network but its loopback, where a forwarder passes connections to
    the builder's index proxy (``index_proxy``) through a Unix socket bound into it: it reaches
    the hosts of :func:`build_hosts` and nothing else, neither this machine nor its neighbours.
    With ``"*"`` in ``build_hosts`` it is on ``[docker] build_network`` instead.
    """

    def __init__(
        self,
        client: Any,
        work_dir: Path,
        settings: DockerConfig,
        build_hosts: tuple[str, ...] = (),
    ) -> None:
        self.client = client
        self.work_dir = Path(work_dir)
        self.settings = settings
        self.build_hosts = tuple(build_hosts)
        self.root = self.work_dir / "docker"

    def get(self, spec: EnvironmentSpec) -> DockerEnvironment:
        """The environment image of ``spec``, building it (and its base image) if needed."""
        try:
            base = ensure_base_image(self.client, spec.python, self.settings, self.work_dir)
        except BaseImageError as error:
            log_path = error.log_path or self._log(f"base-python{spec.python}")
            if not log_path.exists():
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text(f"{error}\n")
            raise EnvironmentBuildError(str(error), log_path) from error
        digest = image_hash(spec, base.id)
        tag = f"{ENV_REPOSITORY}:{digest}"
        with file_lock(self.root / "locks" / f"env-{digest}.lock"):
            image = self._existing(tag, digest)
            if image is None:
                image = with_retries(
                    lambda: self._build(spec, base, digest, tag), f"environment image {digest}"
                )
        self.mark_used(digest)
        left_out = tuple(json.loads(image.labels.get(LEFT_OUT_LABEL, "[]")))
        return DockerEnvironment(image.id, tag, spec, left_out)

    def mark_used(self, digest: str) -> None:
        """Record a use (prune removes least recently used images first)."""
        marker = self.root / "used" / digest
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os.utime(marker, (time.time(), time.time()))

    def last_used(self) -> dict[str, float]:
        folder = self.root / "used"
        if not folder.is_dir():
            return {}
        return {marker.name: marker.stat().st_mtime for marker in folder.iterdir()}

    def _existing(self, tag: str, digest: str) -> Any:
        try:
            image = self.client.images.get(tag)
        except ImageNotFound:
            return None
        return image if image.labels.get(SPEC_HASH) == digest else None

    def _log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def _build(self, spec: EnvironmentSpec, base: Any, digest: str, tag: str) -> Any:
        log_path = self._log(f"env-{digest}")
        bundle = ca_bundle(self.settings)
        uv = find_uv()
        if uv is None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text("uv not found on this machine\n")
            raise EnvironmentBuildError("uv is needed to build Docker environments", log_path)
        final_labels = labels(
            "environment",
            python=spec.python,
            suite=base.labels.get(SUITE, ""),
            schema=ENV_SCHEMA,
            spec_hash=digest,
            spec_key=spec.key(),
            spec_label=spec.label or f"python{spec.python} {' '.join(spec.packages)}".strip(),
            base_image=base.id,
            user_base="false" if base.labels.get(PYTHON) else "true",
        )
        env = image_env(spec)
        cache = self.root / "uv-cache"
        cache.mkdir(parents=True, exist_ok=True)
        hosts = build_hosts(spec, self.settings, self.build_hosts)
        limited = ANY not in hosts
        command = ["/bin/sh", "/swt/build.sh"]
        # bind mounts as ``mounts``, not ``volumes``: docker-py also writes ``volumes`` into the
        # container's config, which the commit makes the image's VOLUMEs, and every run
        # container of the image would then leave two anonymous volumes behind
        mounts = [Mount(_UV_CACHE, str(cache), type="bind", read_only=False)]
        if spec.project is not None:  # the objects of the project's refs (vcs_refs), read-only
            objects = Path(spec.project) / "objects"
            mounts.append(Mount(_VCS_OBJECTS, str(objects), type="bind", read_only=True))
        with tempfile.TemporaryDirectory(prefix="swt-net-") as net:  # the daemon's host sees it
            proxy = IndexProxy(Path(net) / "s", hosts)
            if limited:
                command = forwarded(f"python{spec.python}", f"{PROXY_DIR}/s", PROXY_PORT, command)
                mounts.append(Mount(PROXY_DIR, net, type="bind", read_only=True))
            container = self.client.containers.create(
                base.id,
                command=command,
                environment=env,
                labels={**final_labels, **labels("build")},
                network_mode="none" if limited else self.settings.build_network,
                mounts=mounts,
                working_dir="/",
                **limits(self.settings),
                detach=True,
            )
            try:
                script = build_script(spec, self.settings, bundle is not None, forwarder=limited)
                files: dict[str, bytes | None] = {
                    "swt": None,
                    "swt/bin": None,
                    "swt/build.sh": script.encode(),
                    "swt/bin/uv": Path(uv).read_bytes(),
                }
                if bundle is not None:
                    files["swt/ca-bundle.crt"] = bundle.read_bytes()
                container.put_archive("/", tar_files(files, {"swt/bin/uv": 0o755}))
                if spec.project is not None:
                    container.put_archive("/", project_archive(spec, log_path))
                    container.put_archive("/", vcs_refs(spec.project, log_path))
                for source in spec.url_sources:  # fetched on this machine (url_sources)
                    try:
                        tree = url_archive(source, f"swt/{URL_SOURCES}/{source.name}")
                    except Unreachable as error:  # the builder's own clone cannot give it now
                        log_path.parent.mkdir(parents=True, exist_ok=True)
                        log_path.write_text(f"{error}\n")
                        raise InfrastructureError(
                            str(error), fault="url_source", log=str(log_path)
                        ) from error
                    container.put_archive("/", tree)
                with proxy if limited else contextlib.nullcontext():
                    run = run_to_end(container, log_path, self.settings.build_timeout_s)
                with log_path.open("a") as log:
                    log.write(proxy.refusals())
                if run.timed_out or run.exit_code != 0:
                    what = f"failed with exit code {run.exit_code}"
                    if run.oom_killed:  # the kernel's kill: the log shows only the end
                        what = f"ran out of memory (limit {self.settings.memory})"
                    what = "timed out" if run.timed_out else what
                    raise EnvironmentBuildError(f"environment image build {what}", log_path)
                if spec.optional:  # what it left out, on the image (an environment's record)
                    final_labels[LEFT_OUT_LABEL] = json.dumps(_left_out(container))
                repository, _, name = tag.partition(":")
                conf = {"Labels": final_labels, "Env": [f"{k}={v}" for k, v in env.items()],
                        "WorkingDir": WORKDIR, "Cmd": ["python"]}  # fmt: skip
                return container.commit(repository=repository, tag=name, conf=conf)
            finally:
                remove(container)


def _left_out(container: Any) -> list[str]:
    """The names in the build container's ``LEFT_OUT`` file (none when it has none)."""
    try:
        chunks, _ = container.get_archive(f"{VENV}/{LEFT_OUT}")
    except NotFound:
        return []
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        member = archive.next()
        handle = archive.extractfile(member) if member is not None else None
        text = handle.read().decode("utf-8", "replace") if handle is not None else ""
    return [line.strip() for line in text.splitlines() if line.strip()]


def vcs_refs(mirror: Path, log_path: Path) -> bytes:
    """A tar of ``swt/vcs.git``: a bare clone of ``mirror`` holding its branches and tags and
    none of its objects, which it borrows from :data:`_VCS_OBJECTS` (the mirror's, mounted
    read-only); nothing of the mirror's own configuration (its remote's URL) comes along."""
    with tempfile.TemporaryDirectory(prefix="swt-vcs-") as scratch:
        bare = Path(scratch) / "vcs.git"
        completed = subprocess.run(
            ["git", "clone", "--quiet", "--bare", "--shared", str(mirror), str(bare)],
            capture_output=True,
        )
        if completed.returncode != 0:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_bytes(completed.stderr)
            raise EnvironmentBuildError("cannot read the project's refs", log_path)
        subprocess.run(["git", "remote", "remove", "origin"], cwd=bare, capture_output=True)
        (bare / "objects" / "info" / "alternates").write_text(f"{_VCS_OBJECTS}\n")
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as archive:
            archive.add(bare, arcname=_VCS.strip("/"), filter=_rooted)
        return out.getvalue()


def _rooted(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """``member`` owned by root, the build's user (git refuses a repository another owns)."""
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    return member


def project_archive(spec: EnvironmentSpec, log_path: Path) -> bytes:
    """The project at the environment commit, its submodules (nested too) at the commits it
    records (the mirror holds them: ``RepoCache.mirror``), as one tar rooted at
    ``swt/project/``."""
    combined = io.BytesIO()
    with tarfile.open(fileobj=combined, mode="w") as out:
        pending = [("", spec.project_commit)]
        while pending:
            prefix, commit = pending.pop(0)
            completed = subprocess.run(
                ["git", "archive", "--format=tar", f"--prefix=swt/project/{prefix}", commit],
                cwd=spec.project,
                capture_output=True,
            )
            if completed.returncode != 0:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_bytes(completed.stderr)
                what = f"submodule {prefix.rstrip('/')}" if prefix else "the project"
                raise EnvironmentBuildError(f"cannot export {what} at {commit[:12]}", log_path)
            with tarfile.open(fileobj=io.BytesIO(completed.stdout)) as part:
                for member in part.getmembers():
                    content = part.extractfile(member) if member.isfile() else None
                    if not prefix and member.name == f"swt/project/{SETUP_CFG}" and content:
                        text = content.read().decode("utf-8", "surrogateescape")
                        undated = without_tags(text)
                        data = (text if undated is None else undated).encode(
                            "utf-8", "surrogateescape"
                        )
                        member.size, content = len(data), io.BytesIO(data)
                    out.addfile(member, content)
            pending += [
                (f"{prefix}{sub.path}/", sub.commit) for sub in submodules(spec.project, commit)
            ]
    return combined.getvalue()
