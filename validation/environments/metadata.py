"""The project's package metadata as of the base commit, in runs against a shared environment.

An environment is built once per repo@version, installing the project as of the environment
commit; a run puts the checkout at the base commit first on the import path, so the code is the
base commit's but the installed *metadata* (``importlib.metadata.version``, ``pkg_resources``)
is still the environment commit's. SWE-bench installs the project at each base commit, and some
tests compare the two (sqlfluff's ``test__cli__command_versioning``: 1.4.2 installed vs 1.4.1 in
setup.cfg). So each run gets a *shadow* of the installed distribution's metadata, with the
version the base commit declares, in a directory on the import path ahead of site-packages:
version lookups see the base commit's version, and entry points (plugins, scripts) stay those
of the installed project.

Only a distribution installed from a local directory (PEP 610 ``direct_url.json`` with a
``file:`` URL, what pip and uv write for the project install) is shadowed, and only when the
base commit declares its name literally (see ``versioning.package_name``). The version is the
one it declares (``versioning.package_version``) or, for a project whose build computes it from
git (setuptools_scm, versioneer), the one that build would give the base commit
(``versioning.git_version``: nearest release tag and distance; pvlib's tests compare it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from pathlib import Path

from builder.core.gitutil import git
from validation.environments.runtime import RuntimeFiles
from validation.environments.versioning import git_version, package_name, package_version

VERSION = 2
"""Bump when what the builder decides a run's metadata shadow holds changes (part of every
result key; the shim's own code is keyed by its digest, :data:`SHIM`).
2: versions computed from git are shadowed too."""

SHIM = RuntimeFiles("validation.environments", (("_swt_metadata_shim.py", "metadata_shim.py"),))
"""Runs with the environment's interpreter (standard library, Python 3.6 syntax): writes the
shadow (if the installed version differs), then execs the command. Its content digest is part of
every result key beside :data:`VERSION`."""


@dataclasses.dataclass(frozen=True)
class Identity:
    """The project's distribution name and version as the base commit declares them."""

    name: str
    version: str

    def shim(self, folder: str, dest: str, command: list[str] | None = None) -> list[str]:
        """``command`` behind the shim, which the run has in ``folder`` (``Session.provide``);
        ``python`` is the environment's, first on PATH."""
        script = f"{folder}/{SHIM.script}"
        return ["python", script, self.name, self.version, dest, *(command or [])]


_MEMO: dict[tuple[str, str, str], Identity | None] = {}
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 64


def identity(mirror: Path, commit: str) -> Identity | None:
    """The base commit's declared name and its declared (else git-computed) version; None when
    the name is not written literally or no version can be told.

    Every checkout of a validation asks for the same commit's: found once per process for the
    mirror's tags as they are now (a git-computed version depends on them; the rest is the
    commit's own content), about a second each on a long history such as astropy's."""
    tags = git("for-each-ref", "--format=%(objectname) %(refname)", "refs/tags", cwd=mirror,
               check=False)  # fmt: skip
    key = (str(mirror), commit, hashlib.sha256(tags.encode()).hexdigest())
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
    found = _identity(mirror, commit)
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = found
    return found


def _identity(mirror: Path, commit: str) -> Identity | None:
    name = package_name(mirror, commit)
    if not name:
        return None
    version = package_version(mirror, commit) or git_version(mirror, commit)
    return Identity(name, version) if version else None
