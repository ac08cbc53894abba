"""The Pythons a project says, at a commit, that its CI tests or that it supports, by source."""

from __future__ import annotations

import configparser
import dataclasses
import datetime as dt
import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from builder.core.config import PythonChoice
from builder.core.gitutil import git
from validation.environments.interpreters import PYTHON_RELEASES, minor_allowed
from validation.environments.versioning import show

TESTED = ("tox envlist", "github actions", "travis", "azure pipelines", "appveyor")
"""Sources naming the Pythons the project's CI ran its tests on, in the order they are cited."""
SUPPORTED = "classifiers"
"""The trove classifiers: Pythons the project says it supports (weaker than a tested one)."""

_VERSION = re.compile(r"^3\.(\d+)(\.\d+)?$")
_TOX_FACTOR = re.compile(r"^py(?:thon)?3\.?(\d+)$")
_WINDOWS_PYTHON = re.compile(r"python3(\d+)", re.IGNORECASE)
_CLASSIFIER = re.compile(r"Programming Language :: Python :: 3\.(\d+)\b")
_CI_FILES = {
    "travis": (".travis.yml",),
    "azure pipelines": ("azure-pipelines.yml", ".azure-pipelines.yml"),
    "appveyor": ("appveyor.yml", ".appveyor.yml"),
}


@dataclasses.dataclass(frozen=True)
class ProjectPython:
    """One Python minor version ("3.10") a project names, and where it names it."""

    version: str
    source: str  # one of TESTED, or SUPPORTED


def project_pythons(mirror: Path, commit: str) -> list[ProjectPython]:
    """Every Python 3 minor version the project's files at ``commit`` name: its tox envlist,
    GitHub Actions workflows, Travis, Azure Pipelines and AppVeyor files (tested) and its trove
    classifiers (supported); each version once per source, sources in :data:`TESTED` order."""
    found: dict[tuple[str, str], None] = {}
    for version in _tox_envlist(mirror, commit):
        found[(version, "tox envlist")] = None
    for path in _workflows(mirror, commit):
        for version in _yaml_versions(show(mirror, commit, path)):
            found[(version, "github actions")] = None
    for source, paths in _CI_FILES.items():
        for path in paths:
            for version in _yaml_versions(show(mirror, commit, path)):
                found[(version, source)] = None
    for path in ("setup.py", "setup.cfg", "pyproject.toml"):
        for minor in _CLASSIFIER.findall(show(mirror, commit, path) or ""):
            found[(f"3.{int(minor)}", SUPPORTED)] = None
    return [ProjectPython(version, source) for version, source in found]


def project_python(
    pythons: Iterable[ProjectPython],
    available: Iterable[str],
    *,
    date: dt.date,
    requires_python: str = "",
    choice: PythonChoice = "median",
) -> ProjectPython | None:
    """The Python the project's CI tested that ``choice`` names among those available here,
    allowed by its ``requires_python`` and released by ``date`` (a CI job on a pre-release has
    no wheels of its date); with none tested, the supported ones (classifiers) by the same
    rules."""
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        allowed = SpecifierSet()
    usable = set(available)
    candidates = [
        p
        for p in pythons
        if p.version in usable
        and p.version in PYTHON_RELEASES
        and PYTHON_RELEASES[p.version] <= date
        and minor_allowed(allowed, p.version)
    ]
    for group in (TESTED, (SUPPORTED,)):
        named = [p for p in candidates if p.source in group]
        if named:
            versions = sorted({Version(p.version) for p in named})
            chosen = {
                "newest": versions[-1],
                "median": versions[len(versions) // 2],
                "oldest": versions[0],
            }[choice]
            return min(
                (p for p in named if Version(p.version) == chosen),
                key=lambda p: group.index(p.source),
            )
    return None


def _tox_envlist(mirror: Path, commit: str) -> list[str]:
    """Pythons of tox's envlist (tox.ini ``[tox]``, setup.cfg ``[tox:tox]``), generative
    forms (``py{36,37}-django{2,3}``, ``py3{8,9}``) expanded."""
    for path, section in (("tox.ini", "tox"), ("setup.cfg", "tox:tox")):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(show(mirror, commit, path) or "")
        except configparser.Error:
            continue
        envlist = parser.get(section, "envlist", fallback="")
        if envlist:
            return _dedupe(
                version
                for env in _expand(envlist)
                for factor in env.split("-")
                if (version := _tox_factor(factor))
            )
    return []


def _tox_factor(factor: str) -> str | None:
    found = _TOX_FACTOR.match(factor.strip())
    return f"3.{int(found.group(1))}" if found else None


def _expand(envlist: str) -> list[str]:
    """tox's envlist: comma- or line-separated names, each ``{a,b}`` group expanded."""
    names: list[str] = []
    for item in _split_outside_braces(envlist):
        parts = re.split(r"(\{[^{}]*\})", item)
        choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
        names += ["".join(c.strip() for c in combo) for combo in itertools.product(*choices)]
    return [name for name in names if name]


def _split_outside_braces(text: str) -> list[str]:
    items, depth, current = [], 0, []
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        if depth == 0 and char in ",\n":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item and not item.startswith("#")]


def _workflows(mirror: Path, commit: str) -> list[str]:
    listing = git(
        "ls-tree", "--name-only", commit, "--", ".github/workflows/", cwd=mirror, check=False
    )
    return sorted(p for p in listing.splitlines() if p.endswith((".yml", ".yaml")))


def _yaml_versions(text: str | None) -> list[str]:
    """Python versions under any key naming python (``python-version``, ``python``,
    ``python.version``, ``PYTHON_VERSION``), and AppVeyor's ``C:\\Python37`` paths."""
    if not text:
        return []
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    return _dedupe(v for document in documents for v in _walk(document, python_key=False))


def _walk(node: object, python_key: bool) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, python_key="python" in str(key).lower())
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, python_key)
    elif python_key and isinstance(node, str | int | float) and not isinstance(node, bool):
        text = str(node).strip()
        found = _VERSION.match(text)
        if found:
            yield f"3.{int(found.group(1))}"
        else:
            windows = _WINDOWS_PYTHON.search(text)
            if windows:
                yield f"3.{int(windows.group(1))}"


def _dedupe(versions: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(versions))
