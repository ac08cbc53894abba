"""A repository's requirement files for tests at a commit, read with their ``-r``/``-c``
includes, never outside the repository."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from builder.core.gitutil import git
from validation.environments.ci_installs import url_name
from validation.environments.versioning import show

_REQ_FILE = re.compile(r"(^|/)(requirements|reqs)[^/]*\.txt$|(^|/)[^/]*requirements[^/]*\.txt$")
_REQ_DIR = re.compile(r"(^|/)requirements/[^/]+\.txt$")
_FOR_TESTS = re.compile(r"test|dev|ci\b|ci[-_.]", re.IGNORECASE)
_GENERAL = re.compile(r"^(py\d*|base|common|default|requirements)\.txt$", re.IGNORECASE)
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)[\s=]*(\S.*)$")


def requirement_files_for_tests(mirror: Path, commit: str) -> list[str]:
    """Requirement files for tests: ``requirements*test*.txt``-style names at the root or one
    folder down, and the files of a ``requirements/`` folder (up to two folders down) named for
    tests, development or CI; in a tests' folder (``tests/requirements/``) naming none of
    these, its general files (``py3.txt``, ``base.txt``), not those of optional backends."""
    listing = git("ls-tree", "-r", "--name-only", commit, cwd=mirror, check=False).splitlines()
    files = [p for p in listing if _REQ_FILE.search(p) and p.count("/") <= 1]
    folders: dict[str, list[str]] = {}
    for path in listing:
        if _REQ_DIR.search(path) and path.count("/") <= 2:
            folders.setdefault(posixpath.dirname(path), []).append(path)
    chosen = [p for p in files if _FOR_TESTS.search(posixpath.basename(p))]
    for folder, paths in folders.items():
        named = [p for p in paths if _FOR_TESTS.search(posixpath.basename(p))]
        if not named and re.search(r"test", folder, re.IGNORECASE):
            named = [p for p in paths if _GENERAL.match(posixpath.basename(p))]
        chosen += named
    return sorted(set(chosen))


def logical_lines(text: str) -> list[str]:
    """The lines of a requirements text that say something: comments, blanks and line
    continuations resolved."""
    out = []
    for raw in text.replace("\\\n", " ").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


@dataclasses.dataclass
class Requirements:
    """Requirements read from files, following ``-r``/``-c`` includes inside the repository."""

    mirror: Path
    commit: str
    packages: list[str] = dataclasses.field(default_factory=list)
    constraints: dict[str, str] = dataclasses.field(default_factory=dict)
    files: list[str] = dataclasses.field(default_factory=list)
    # what a file installs from a VCS URL or ``NAME @ URL`` (``-e`` or not): canonical name →
    # the line, taken as an optional package by inference (see ``ci_installs.url_name``)
    from_urls: dict[str, str] = dataclasses.field(default_factory=dict)

    def read(self, path: str, constraint: bool = False) -> bool:
        """Add the file's requirements (or constraints); False when it is not there or not
        inside the repository. A file is read once."""
        path = inside_repo(path)
        if path is None or path in self.files:
            return path is not None
        text = show(self.mirror, self.commit, path)
        if text is None:
            return False
        self.files.append(path)
        self.lines(logical_lines(text), posixpath.dirname(path), constraint)
        return True

    def lines(self, lines: list[str], folder: str, constraint: bool = False) -> None:
        for line in lines:
            include = _INCLUDE.match(line)
            if include:
                target = posixpath.join(folder, include.group(2).strip())
                self.read(target, constraint or include.group(1) in ("-c", "--constraint"))
            elif _from_url(line) is not None and not constraint:
                self.from_urls.setdefault(_from_url(line) or "", line)
            elif line.startswith("-"):
                continue
            elif constraint:
                try:
                    pinned = Requirement(line)
                except InvalidRequirement:
                    continue
                self.constraints.setdefault(canonicalize_name(pinned.name), str(pinned))
            else:
                self.packages.append(line)


def _from_url(line: str) -> str | None:
    """The distribution a requirement line installs from a URL (``-e git+…#egg=NAME``,
    ``git+https://…/NAME``, ``NAME @ URL``), or None for any other line."""
    target = line.split(None, 1)[1] if line.startswith(("-e ", "--editable ")) else line
    return url_name(target.strip())


def inside_repo(path: str) -> str | None:
    """``path`` normalised, or None when it leaves the repository (absolute, ``..``, a URL)."""
    if "://" in path or path.startswith(("/", "~")):
        return None
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../") or normal == ".":
        return None
    return normal
