"""The distribution names a project has declared anywhere in its history up to a commit.

A name counts as declared when a line that some commit up to ``commit`` added to one of the
files where projects name what they install (requirement files, setup.py, setup.cfg,
pyproject.toml, Pipfile, conda environment files, tox.ini, noxfile.py and the CI
configurations: GitHub workflows, Travis, Azure Pipelines, AppVeyor, CircleCI, ``ci/``) holds
it as a requirement (:func:`line_names`): the whole line, a quoted string, the value of a
``key = value`` line or a ``- item`` bullet, a tox factor's (``py37: mock``), or an argument
of an install command (``pip install a b``), read as a PEP 508 requirement or a conda
``name=version``. A word elsewhere on a line is no declaration: tox's
``{py37}-{xdist,numpy}`` environment names, ``-p no:xdist``, a key (``xdist:``), prose. A
commented-out requirement (``# mock>=2``) is still one the project wrote.

This is a filter on what an import may bring into an environment (see ``test_imports``): a
name merely mentioned could be anybody's registration on the index.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import subprocess
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from builder.core.gitutil import git_env

DECLARING_FILES = (
    ":(glob)**/*requirements*.txt",
    ":(glob)**/requirements/**",
    ":(glob)**/reqs*.txt",
    ":(glob)**/setup.py",
    ":(glob)**/setup.cfg",
    ":(glob)**/pyproject.toml",
    ":(glob)**/Pipfile",
    ":(glob)**/environment*.yml",
    ":(glob)**/environment*.yaml",
    ":(glob)**/tox.ini",
    ":(glob)**/noxfile.py",
    ":(glob).github/workflows/**",
    ":(glob).travis.yml",
    ":(glob)azure-pipelines.yml",
    ":(glob).azure-pipelines/**",
    ":(glob)appveyor.yml",
    ":(glob).appveyor.yml",
    ":(glob).circleci/**",
    ":(glob)ci/**",
    ":(glob).ci/**",
)
"""Git pathspecs of the files whose added lines declare names."""

_QUOTED = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'")
_FACTORS = re.compile(r"^[A-Za-z0-9_.,{}!-]+:\s+")
"""A tox factor condition (``py37,py38: ``) or a YAML key (``run: ``) before a value."""
_ASSIGNED = re.compile(r"[A-Za-z_][\w.-]*\s*=(?!=)\s*(.*)")
"""A ``key = value`` line (setup.cfg's ``install_requires = numpy``): its value."""
_INSTALL = re.compile(r"\binstall\b(.*)")
"""An install command's arguments (pip, uv pip, conda, mamba, ``session.install(``)."""
_CONDA = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:=[^=\s]+){0,2}")
"""A conda requirement: ``name``, ``name=version`` or ``name=version=build``."""


def line_names(line: str) -> set[str]:
    """Canonical names of the requirements ``line`` (of a declaring file) holds."""
    text = line.strip()
    pieces = [text, *(a or b for a, b in _QUOTED.findall(text))]
    if text.startswith("#"):
        pieces.append(text.lstrip("#"))
    uncommented = text.split(" #")[0].strip()
    bullet = uncommented.removeprefix("- ").strip()
    pieces += [uncommented, bullet, _FACTORS.sub("", bullet)]
    assigned = _ASSIGNED.match(uncommented)
    if assigned:
        pieces.append(assigned.group(1))
    found = _INSTALL.search(uncommented)
    if found:
        pieces += [
            word.strip("\"',()[]")
            for word in found.group(1).split()
            if not word.startswith(("-", "$", "."))
        ]
    return {name for piece in set(pieces) if (name := _requirement_name(piece)) is not None}


@functools.lru_cache(maxsize=65536)
def _requirement_name(text: str) -> str | None:
    """The distribution ``text`` (all of it) requires, canonical; None when it is no
    requirement."""
    text = text.strip().rstrip(",")
    if not text or len(text) > 500:
        return None
    try:
        name = Requirement(text).name
    except InvalidRequirement:
        found = _CONDA.fullmatch(text)
        if found is None:
            return None
        name = found.group(1)
    return canonicalize_name(name) if any(c.isalpha() for c in name) else None  # not 1.13


@functools.lru_cache(maxsize=64)
def declared_names(mirror: Path, commit: str) -> frozenset[str]:
    """Canonical names (``canonicalize_name``) of the words the declaring files' added lines
    hold, over every commit reachable from ``commit``."""
    command = ["git", "log", "-p", "--no-renames", "--no-color", "--format=", commit, "--"]
    listed = subprocess.run(
        [*command, *DECLARING_FILES], cwd=mirror, capture_output=True, env=git_env(), check=False
    )  # a commit the mirror lacks declares nothing
    diff = listed.stdout.decode("utf-8", "replace")
    names: set[str] = set()
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            names.update(line_names(line[1:]))
    return frozenset(names)


def is_declared(name: str, mirror: Path, commit: str) -> bool:
    """Whether distribution ``name`` is among :func:`declared_names`."""
    return canonicalize_name(name) in declared_names(mirror, commit)


_DECLARING_NAMES = (
    "*requirements*.txt", "reqs*.txt", "setup.py", "setup.cfg", "pyproject.toml", "Pipfile",
    "environment*.yml", "environment*.yaml", "tox.ini", "noxfile.py", ".travis.yml",
    "azure-pipelines.yml", "appveyor.yml", ".appveyor.yml",
)  # fmt: skip
_DECLARING_FOLDERS = (
    "requirements", ".github/workflows", ".azure-pipelines", ".circleci", "ci", ".ci",
)  # fmt: skip


def patch_names(patch: str) -> frozenset[str]:
    """Canonical names of the words a patch's added lines hold in the files of
    :data:`DECLARING_FILES` (e.g. a golden patch that adds a dependency to setup.cfg, which the
    environment commit installs)."""
    names: set[str] = set()
    declaring = False
    for line in patch.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
            declaring = _is_declaring(path)
        elif declaring and line.startswith("+"):
            names.update(line_names(line[1:]))
    return frozenset(names)


def _is_declaring(path: str) -> bool:
    pure = PurePosixPath(path)
    if any(fnmatch.fnmatch(pure.name, pattern) for pattern in _DECLARING_NAMES):
        return True
    folders = str(pure.parent)
    return any(folders == f or folders.startswith(f"{f}/") or f"/{f}/" in f"/{folders}/"
               for f in _DECLARING_FOLDERS)  # fmt: skip
