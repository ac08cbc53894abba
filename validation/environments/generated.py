"""Which of the installed project's files are generated: built at install, not in its commit.

An environment installs the project as of its environment commit; a run puts the checkout (the
base commit) first on the import path. Files the install generated (setuptools_scm's
``_version.py``, compiled extensions) exist only in the installed copy, so the checkout hides
them. A run gets those the checkout lacks (``validation/runs/generated.py``); a file the
environment commit tracks is source (one the base commit deleted, or one added after it) and
is never placed. Only that commit decides: a path some other commit tracked — years before, as
astropy's ``version.py`` in 2011 before its build wrote it, or in history fetched later — says
nothing about what this install generated, and a result must not depend on how much of the
repository's future the mirror holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from builder.core.gitutil import git
from validation.environments.installed_files import tree
from validation.environments.runtime import RuntimeFiles

VERSION = 3
"""Bump when what counts as a generated file changes (part of every result key, with the
script's digest, :data:`INSTALLED_FILES`)."""

INSTALLED_FILES = RuntimeFiles(
    "validation.environments", (("_swt_installed_files.py", "installed_files.py"),)
)
"""Runs with the environment's interpreter: writes the installed project's files the checkout
lacks (see ``installed_files.py``)."""

GENERATED_PLACER = RuntimeFiles(
    "validation.environments",
    (
        ("_swt_generated_placer.py", "generated_placer.py"),
        ("_swt_installed_files.py", "installed_files.py"),
    ),
)
"""Runs with the environment's interpreter in an image's checkout (an exported task's build):
places there the generated files a run's start places (see ``generated_placer.py``)."""

_CHUNK = 200


def tracked_at(mirror: Path, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """Of ``paths``, those the tree of ``commit`` (the environment commit) has → their object
    ids; a path not among them is generated."""
    paths = sorted(set(paths))
    tracked: dict[str, str] = {}
    for start in range(0, len(paths), _CHUNK):
        chunk = paths[start : start + _CHUNK]
        listing = git(
            "--literal-pathspecs", "ls-tree", "-r", "-z", commit, "--", *chunk,
            cwd=mirror, check=False,
        )  # fmt: skip
        tracked.update(tree(listing))
    return tracked
