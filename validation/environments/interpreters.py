"""Find Python interpreters on this machine (uv's discovery plus search paths) and pick by era."""

from __future__ import annotations

import datetime as dt
import functools
import glob
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

PYTHON_RELEASES: dict[str, dt.date] = {
    "3.6": dt.date(2016, 12, 23),
    "3.7": dt.date(2018, 6, 27),
    "3.8": dt.date(2019, 10, 14),
    "3.9": dt.date(2020, 10, 5),
    "3.10": dt.date(2021, 10, 4),
    "3.11": dt.date(2022, 10, 24),
    "3.12": dt.date(2023, 10, 2),
    "3.13": dt.date(2024, 10, 7),
    "3.14": dt.date(2025, 10, 7),
}
"""Release date of each CPython minor version's x.y.0 (python.org's release pages, the PEP
release schedules): the era rule picks among these, and a dated resolution for a Python is
never older than its date plus half a year (``environment.python_floor``): a package released
before a Python does not know it (no wheels for it; setuptools of 2019 does not import on 3.9,
3.12 removed ``distutils``)."""
FIRST_MAINTENANCE_RELEASES: dict[str, dt.date] = {
    "3.6": dt.date(2017, 3, 21),
    "3.7": dt.date(2018, 10, 20),
    "3.8": dt.date(2019, 12, 18),
    "3.9": dt.date(2020, 12, 7),
    "3.10": dt.date(2021, 12, 6),
    "3.11": dt.date(2022, 12, 6),
    "3.12": dt.date(2023, 12, 7),
    "3.13": dt.date(2024, 12, 3),
}
"""Release date of each minor version's first maintenance release, x.y.1 (python.org), some
two months after x.y.0: by then a project's CI runs it as a stable Python, with wheels of what
it installs. A version not listed here counts as not yet out."""

_PROBE = (
    "import os, sys; sys.stdout.write('%d.%d.%d %s' % (tuple(sys.version_info[:3]) "
    "+ (os.path.realpath(sys.executable),)))"
)


def find_uv() -> str | None:
    """The uv binary: the one installed with this package, else on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def default_search_paths() -> list[str]:
    """Where pyenv keeps its interpreters ($PYENV_ROOT, else ~/.pyenv): globs, discovered."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    return [f"{root}/versions/*/bin/python"]


@functools.lru_cache(maxsize=256)
def _probe(path: str) -> tuple[str, str] | None:
    try:
        completed = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0 or " " not in completed.stdout:
        return None
    version, executable = completed.stdout.split(" ", 1)
    return version, executable


_UV_INPUTS = ("PATH", "HOME", "PYENV_ROOT", "UV_PYTHON_INSTALL_DIR", "UV_PYTHON_PREFERENCE")
"""What ``uv python list`` finds interpreters by: its answer is kept per these variables."""


def _uv_candidates() -> tuple[str, ...]:
    """The interpreters uv knows (asked once per process and environment: it takes a second)."""
    return _uv_listed(find_uv(), tuple(os.environ.get(name, "") for name in _UV_INPUTS))


@functools.lru_cache(maxsize=8)
def _uv_listed(uv: str | None, inputs: tuple[str, ...]) -> tuple[str, ...]:
    if uv is None:
        return ()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    completed = subprocess.run(
        [uv, "python", "list", "--only-installed", "--output-format", "json"],
        capture_output=True,
        text=True,
        env=env,
    )
    if completed.returncode != 0:
        return ()
    return tuple(entry["path"] for entry in json.loads(completed.stdout) if entry.get("path"))


class Interpreters:
    """Interpreters by minor version ("3.9" → newest 3.9.x found); found once, then cached."""

    def __init__(self, search_paths: Iterable[str] | None = None, use_uv: bool = True) -> None:
        paths = default_search_paths() if search_paths is None else list(search_paths)
        self.search_paths = [os.path.expanduser(os.path.expandvars(p)) for p in paths]
        self.use_uv = use_uv
        self._found: dict[str, tuple[Version, str]] | None = None

    def available(self) -> dict[str, str]:
        """Minor version → interpreter path (the real executable, never a shim)."""
        if self._found is None:
            found: dict[str, tuple[Version, str]] = {}
            candidates = [p for pattern in self.search_paths for p in sorted(glob.glob(pattern))]
            if self.use_uv:
                candidates += list(_uv_candidates())
            for candidate in candidates:
                probed = _probe(candidate)
                if probed is None:
                    continue
                version = Version(probed[0])
                minor = f"{version.major}.{version.minor}"
                if minor not in found or version > found[minor][0]:
                    found[minor] = (version, probed[1])
            self._found = found
        return {minor: path for minor, (_, path) in self._found.items()}

    def find(self, version: str) -> str | None:
        """The interpreter for "3.9" (newest patch) or an exact "3.9.18"; None if absent."""
        available = self.available()
        parts = version.split(".")
        if len(parts) <= 2:
            return available.get(version)
        path = available.get(".".join(parts[:2]))
        if path is not None and self._found and str(self._found[".".join(parts[:2])][0]) == version:
            return path
        return None


PATCH_RELEASES = 50
"""Patch releases of a minor version looked at when asking whether a bound admits it (no
CPython minor has had 30)."""


def minor_allowed(allowed: SpecifierSet, minor: str) -> bool:
    """Whether a release of Python ``minor`` (``X.Y``) satisfies ``allowed``: a bound on a patch
    release (``>=3.7.2``, astroid's) admits 3.7, whose later releases satisfy it, where asking
    about ``3.7.0`` alone would rule the whole minor out."""
    return any(allowed.contains(f"{minor}.{patch}") for patch in range(PATCH_RELEASES))


def era_python(
    date: dt.date,
    available: Iterable[str],
    *,
    requires_python: str = "",
    lag_days: int = 365,
) -> str | None:
    """The Python of a date's era: the newest available minor released ``lag_days`` before it.

    A Python counts once the ecosystem had time to ship wheels for it (numpy of mid-2021 has
    none for 3.11). ``requires_python`` (the project's ``python_requires``) narrows the choice;
    when no version is old enough, the oldest allowed one is taken.
    """
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        allowed = SpecifierSet()
    versions = sorted(
        (v for v in available if v in PYTHON_RELEASES and minor_allowed(allowed, v)),
        key=Version,
    )
    if not versions:
        return None
    cutoff = date - dt.timedelta(days=lag_days)
    of_era = [v for v in versions if PYTHON_RELEASES[v] <= cutoff]
    return of_era[-1] if of_era else versions[0]
