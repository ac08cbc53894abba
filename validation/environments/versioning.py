"""The version of a repository at a commit (by the spec's rules) and its environment commit."""

from __future__ import annotations

import configparser
import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field

from builder.core.gitutil import git

_SETUP_PY_VERSION = re.compile(r"""\bversion\s*=\s*['"]([^'"]+)['"]""")
_SETUP_PY_NAME = re.compile(r"""\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]""")
_SETUP_PY_NAME_REF = re.compile(r"""\bname\s*=\s*([A-Za-z_]\w*)\s*[,)]""")
_RELEASE_TAG = re.compile(r"^v?(\d+(?:\.\d+)*)$")
_DUNDER_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_RELEASE = re.compile(r"(\d+(?:\.\d+)*)")


class VersionRule(BaseModel):
    """One way to read the version: a file + regex, the package metadata, or the git tags."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["file", "metadata", "git-tag"] = Field(
        description="file: a regex over a file; metadata: the package metadata; "
        "git-tag: nearest tag"
    )
    path: str = Field(
        default="",
        description="kind = file: the file; kind = metadata: the project dir (empty: the root)",
    )
    pattern: str = Field(
        default="", description="regex with one group (file: the version; git-tag: tag filter)"
    )


DEFAULT_RULES = (VersionRule(kind="metadata"), VersionRule(kind="git-tag"))
"""Used when a spec names no rules: the package metadata, then the nearest tag."""


def show(mirror: Path, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit``, or None when it does not exist there."""
    text = git("show", f"{commit}:{path}", cwd=mirror, check=False)
    if not text and not _exists(mirror, commit, path):
        return None
    return text


def _exists(mirror: Path, commit: str, path: str) -> bool:
    return bool(git("ls-tree", "--name-only", commit, "--", path, cwd=mirror, check=False).strip())


def commit_date(mirror: Path, commit: str) -> dt.datetime:
    """The committer date of ``commit`` (UTC)."""
    stamp = git("show", "-s", "--format=%ct", commit, cwd=mirror).strip()
    return dt.datetime.fromtimestamp(int(stamp), tz=dt.timezone.utc)


def truncate(version: str, digits: int) -> str | None:
    """``"0.8.1.dev3"`` → ``"0.8"`` for digits=2; None when no release number is in the text."""
    found = _RELEASE.search(version)
    if found is None:
        return None
    parts = found.group(1).split(".")
    parts += ["0"] * (digits - len(parts))
    return ".".join(parts[:digits])


def package_version(mirror: Path, commit: str, root: str = "") -> str | None:
    """The version the package metadata declares at ``commit`` (pyproject, setup.cfg, setup.py).

    Follows ``attr: pkg.__version__`` (setup.cfg) and a ``version`` read from a module's
    ``__version__``; dynamic versions from git (setuptools_scm, versioneer) give None.
    """
    prefix = f"{root.rstrip('/')}/" if root else ""
    declared = _pyproject_field(mirror, commit, prefix, "version")
    if declared:
        return declared
    value = _cfg_metadata(mirror, commit, f"{prefix}setup.cfg", "version")
    if value.startswith("attr:"):
        found = _attr_version(mirror, commit, prefix, value[5:].strip())
        if found:
            return found
    elif value and not value.startswith("file:"):
        return value
    setup_py = show(mirror, commit, f"{prefix}setup.py")
    if setup_py:
        found = _SETUP_PY_VERSION.search(setup_py)
        if found:
            return found.group(1)
        for module in _candidate_modules(mirror, commit, prefix):
            text = show(mirror, commit, module)
            if text and (dunder := _DUNDER_VERSION.search(text)):
                return dunder.group(1)
    return None


def package_name(mirror: Path, commit: str, root: str = "") -> str | None:
    """The distribution name the package metadata declares at ``commit``, if written literally
    (pyproject's ``[project]``/poetry, setup.cfg's ``[metadata]``, ``name="…"`` in setup.py)."""
    prefix = f"{root.rstrip('/')}/" if root else ""
    value = _pyproject_field(mirror, commit, prefix, "name") or _cfg_metadata(
        mirror, commit, f"{prefix}setup.cfg", "name"
    )
    if value:
        return value
    setup_py = show(mirror, commit, f"{prefix}setup.py") or ""
    found = _SETUP_PY_NAME.search(setup_py)
    if found:
        return found.group(1)
    reference = _SETUP_PY_NAME_REF.search(setup_py)  # setup(name=DISTNAME) + DISTNAME = '…'
    if reference:
        assigned = re.search(
            rf"""^{reference.group(1)}\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]""",
            setup_py,
            re.MULTILINE,
        )
        return assigned.group(1) if assigned else None
    return None


def git_versioning(mirror: Path, commit: str, root: str = "") -> str | None:
    """``"setuptools_scm"`` or ``"versioneer"`` when the project's build computes its version
    from git at ``commit`` (named in pyproject.toml, setup.cfg or setup.py); else None."""
    prefix = f"{root.rstrip('/')}/" if root else ""
    texts = "\n".join(
        show(mirror, commit, f"{prefix}{name}") or ""
        for name in ("pyproject.toml", "setup.cfg", "setup.py")
    )
    if "setuptools_scm" in texts or "use_scm_version" in texts:
        return "setuptools_scm"
    if "versioneer" in texts:
        return "versioneer"
    return None


def git_version(mirror: Path, commit: str, root: str = "") -> str | None:
    """The version a git-computing build gives ``commit``, from the nearest release tag (``v1.2``
    or ``1.2.3``) and the commits since: on the tag, its version; past it, setuptools_scm's
    default ``1.2.4.dev7+gHASH`` (next patch, dev distance) or versioneer's ``1.2.3+7.gHASH``.
    None when the project does not version from git or no release tag is reachable."""
    scheme = git_versioning(mirror, commit, root)
    if scheme is None:
        return None
    described, _ = _nearest_tag(mirror, commit, _RELEASE_TAG, "--long")
    parts = described.rsplit("-", 2)
    found = _RELEASE_TAG.match(parts[0]) if len(parts) == 3 else None
    if found is None:
        return None
    version, distance, node = found.group(1), int(parts[1]), parts[2]
    if distance == 0:
        return version
    if scheme == "versioneer":
        return f"{version}+{distance}.{node}"
    release = version.split(".")
    release[-1] = str(int(release[-1]) + 1)
    return f"{'.'.join(release)}.dev{distance}+{node}"


def _pyproject_field(mirror: Path, commit: str, prefix: str, key: str) -> str | None:
    """``key`` of pyproject.toml's ``[project]`` (else ``[tool.poetry]``) when written literally."""
    text = show(mirror, commit, f"{prefix}pyproject.toml")
    try:
        data = tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return None
    for table in (data.get("project", {}), data.get("tool", {}).get("poetry", {})):
        if isinstance(table.get(key), str):
            return table[key]
    return None


def _cfg_metadata(mirror: Path, commit: str, path: str, key: str) -> str:
    """``[metadata] key`` of a setup.cfg at ``commit``; "" when missing or unparseable."""
    text = show(mirror, commit, path)
    if not text:
        return ""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        return parser.get("metadata", key, fallback="").strip()
    except configparser.Error:
        return ""


def _attr_version(mirror: Path, commit: str, prefix: str, dotted: str) -> str | None:
    module = dotted.rsplit(".", 1)[0].replace(".", "/")
    for candidate in (f"{module}/__init__.py", f"{module}.py"):
        for base in (prefix, f"{prefix}src/"):
            text = show(mirror, commit, base + candidate)
            if text and (found := _DUNDER_VERSION.search(text)):
                return found.group(1)
    return None


def _candidate_modules(mirror: Path, commit: str, prefix: str) -> list[str]:
    """Top-level ``__init__.py``/``__version__.py``/``_version.py`` files (src layout too)."""
    listing = git("ls-tree", "-r", "--name-only", commit, cwd=mirror, check=False).splitlines()
    wanted = ("__init__.py", "__version__.py", "_version.py", "version.py")
    hits = []
    for path in listing:
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        if parts[0] == "src":
            parts = parts[1:]
        if len(parts) == 2 and parts[1] in wanted and "test" not in parts[0]:
            hits.append(path)
    return sorted(hits)


def _nearest_tag(
    mirror: Path, commit: str, regex: re.Pattern[str], *options: str
) -> tuple[str, list[str]]:
    """``git describe --tags OPTIONS`` of ``commit`` among the tags reachable from it that
    ``regex`` matches ("" when none), and those tags, newest first."""
    tags = git("tag", "--merged", commit, "--sort=-creatordate", cwd=mirror, check=False)
    reachable = [tag for tag in tags.splitlines() if regex.search(tag)]
    if not reachable:
        return "", []
    described = git(
        "describe", "--tags", *options, *(f"--match={tag}" for tag in reachable[:200]), commit,
        cwd=mirror, check=False,
    ).strip()  # fmt: skip
    return described, reachable


def tag_version(mirror: Path, commit: str, pattern: str = "") -> str | None:
    """The version of the nearest tag reachable from ``commit`` (tags filtered by ``pattern``)."""
    regex = re.compile(pattern or r"^v?(\d+\.\d+(?:\.\d+)?)$")
    described, reachable = _nearest_tag(mirror, commit, regex, "--abbrev=0")
    if not reachable:
        return None
    found = regex.search(described or reachable[0])
    return found.group(1) if found and found.groups() else (described or reachable[0])


def detect_version(
    mirror: Path, commit: str, rules: Iterable[VersionRule] = DEFAULT_RULES, digits: int = 2
) -> tuple[str, str] | None:
    """``(version, rule kind)`` by the first rule that yields one, truncated to ``digits``."""
    for rule in rules:
        raw: str | None
        if rule.kind == "file":
            text = show(mirror, commit, rule.path)
            found = re.search(rule.pattern, text or "", re.MULTILINE) if text else None
            raw = found.group(1) if found else None
        elif rule.kind == "metadata":
            raw = package_version(mirror, commit, rule.path)
        else:
            raw = tag_version(mirror, commit, rule.pattern)
        version = truncate(raw, digits) if raw else None
        if version:
            return version, rule.kind
    return None


def version_tag_commit(mirror: Path, base_commit: str, version: str) -> str | None:
    """The commit of the oldest release tag of ``version`` (e.g. v0.8.0 for 0.8) in the base's
    history: instances of one version after its first release share it as environment commit."""
    regex = re.compile(r"^v?(\d+(?:\.\d+)*)$")
    tags = git("tag", "--merged", base_commit, "--sort=creatordate", cwd=mirror, check=False)
    for tag in tags.splitlines():
        found = regex.match(tag)
        if found and truncate(found.group(1), version.count(".") + 1) == version:
            return git("rev-list", "-n", "1", tag, cwd=mirror).strip()
    return None
