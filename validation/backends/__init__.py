"""Execution backends by name: where environments are built and test runs execute."""

from __future__ import annotations

from pathlib import Path

from validation.backends.base import Backend, Session
from validation.backends.local import LocalBackend

BACKENDS: dict[str, type[Backend]] = {"local": LocalBackend}
"""The registry; other backends (docker) register here under their config name."""


def make_backend(name: str, work_dir: Path) -> Backend:
    """The backend called ``name``, with its caches under ``work_dir``."""
    try:
        return BACKENDS[name](Path(work_dir))
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown backend {name!r} (known: {known})") from None


__all__ = ["BACKENDS", "Backend", "Session", "make_backend"]
