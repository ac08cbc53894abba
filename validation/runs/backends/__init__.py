"""Execution backends by name: where environments are built and test runs execute."""

from __future__ import annotations

from pathlib import Path

from builder.core.config import ConfigError, DockerConfig, ValidationConfig
from validation.environments.docker_engine import daemon_answers
from validation.environments.images import base_images_buildable
from validation.runs.backends.base import Backend, Session
from validation.runs.backends.docker import DockerBackend
from validation.runs.backends.local import LocalBackend

BACKENDS: dict[str, type[Backend]] = {"local": LocalBackend, "docker": DockerBackend}
"""The registry; other backends register here under their config name."""

AUTO = "auto"
"""Not a backend but a choice: docker when a daemon answers, else local."""


def resolve_backend(name: str, docker: DockerConfig | None = None) -> str:
    """The backend ``name`` stands for.

    ``auto`` is Docker when a daemon answers and base images can be had (your own in
    ``[docker] base_images``, or built here with debootstrap as root); else local.
    """
    if name != AUTO:
        return name
    if not daemon_answers():
        return "local"
    named = docker is not None and bool(docker.base_images)
    return "docker" if named or base_images_buildable() else "local"


def make_backend(
    settings: ValidationConfig, work_dir: Path, docker: DockerConfig | None = None
) -> Backend:
    """The backend ``settings.backend`` names (or ``auto`` picks), caches under ``work_dir``.

    Each backend builds itself from the sections it reads (``from_config``): ``[validation]``
    and ``[docker]`` (its defaults when ``docker`` is None).
    """
    docker = docker or DockerConfig()
    resolved = resolve_backend(settings.backend, docker)
    if resolved not in BACKENDS:
        known = ", ".join(sorted([*BACKENDS, AUTO]))
        raise ConfigError(f"unknown backend {settings.backend!r} (known: {known})")
    return BACKENDS[resolved].from_config(Path(work_dir), settings, docker)


__all__ = ["AUTO", "BACKENDS", "Backend", "Session", "make_backend", "resolve_backend"]
