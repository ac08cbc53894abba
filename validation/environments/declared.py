"""The distribution names a project has declared anywhere in its history up to a commit.

A name counts as declared when a line that some commit up to ``commit`` added to one of the
files where projects name what they install holds it as a word: requirement files, setup.py,
setup.cfg, pyproject.toml, Pipfile, conda environment files, tox.ini, noxfile.py and the CI
configurations (GitHub workflows, Travis, Azure Pipelines, AppVeyor, CircleCI, ``ci/``). A
word is cut at anything that cannot be in a distribution name; one that follows ``:``, ``/``
or ``.`` (``-p no:xdist``, a path, a module attribute) is not a name. Comment lines count:
a commented-out requirement is still one the project wrote.

This is a filter on what an import may bring into an environment (see ``test_imports``), not
a parser: it may count a word that was never a requirement, never miss one that was.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import subprocess
from pathlib import Path, PurePosixPath

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

_WORD = re.compile(r"(?<![A-Za-z0-9._:/-])[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


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
            names.update(canonicalize_name(word) for word in _WORD.findall(line[1:]))
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
            names.update(canonicalize_name(word) for word in _WORD.findall(line[1:]))
    return frozenset(names)


def _is_declaring(path: str) -> bool:
    pure = PurePosixPath(path)
    if any(fnmatch.fnmatch(pure.name, pattern) for pattern in _DECLARING_NAMES):
        return True
    folders = str(pure.parent)
    return any(folders == f or folders.startswith(f"{f}/") or f"/{f}/" in f"/{folders}/"
               for f in _DECLARING_FOLDERS)  # fmt: skip
