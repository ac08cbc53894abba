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
from pathlib import Path

from validation.environments.versioning import git_version, package_name, package_version

VERSION = 2
"""Bump when what a run's metadata shadow holds changes (part of every result key).
2: versions computed from git are shadowed too."""

SHIM = r"""
import io, json, os, re, sys, sysconfig
name, version, dest = sys.argv[1:4]
command = sys.argv[4:]

def norm(text):
    return re.sub(r"[-_.]+", "_", text).lower()

def installed():
    paths = sysconfig.get_paths()
    for root in (paths["purelib"], paths["platlib"]):
        if not os.path.isdir(root):
            continue
        for entry in sorted(os.listdir(root)):
            if entry.endswith(".dist-info") and norm(entry[:-10].split("-")[0]) == norm(name):
                return os.path.join(root, entry)
    return None

def local_install(found):
    try:
        with io.open(os.path.join(found, "direct_url.json"), encoding="utf-8") as handle:
            return json.load(handle).get("url", "").startswith("file:")
    except (OSError, ValueError):
        return False

def shadow(found):
    with io.open(os.path.join(found, "METADATA"), encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    header = [i for i, line in enumerate(lines) if line.startswith("Version:")]
    if not header or lines[header[0]][8:].strip() == version:
        return
    was = lines[header[0]][8:].strip()
    lines[header[0]] = "Version: " + version
    target = os.path.join(dest, norm(name) + "-" + version.replace("-", "_") + ".dist-info")
    if not os.path.isdir(target):
        part = target + ".part%d" % os.getpid()
        os.makedirs(part)
        with io.open(os.path.join(part, "METADATA"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        for extra in ("entry_points.txt", "top_level.txt"):
            if os.path.isfile(os.path.join(found, extra)):
                with io.open(os.path.join(found, extra), encoding="utf-8") as source:
                    text = source.read()
                with io.open(os.path.join(part, extra), "w", encoding="utf-8") as out:
                    out.write(text)
        os.rename(part, target)
    sys.stderr.write(
        "swt: package metadata of %s as of the base commit: version %s (installed: %s)\n"
        % (name, version, was)
    )

found = installed()
if found and local_install(found):
    shadow(found)
if command:
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(command[0], command)
"""
"""Runs with the environment's interpreter (any Python 3): ``python -c SHIM name version dest
[command…]`` writes the shadow into ``dest`` (if the installed version differs), then execs the
command. Kept to the standard library and Python 3.6 syntax: environments of old eras run it."""


@dataclasses.dataclass(frozen=True)
class Identity:
    """The project's distribution name and version as the base commit declares them."""

    name: str
    version: str

    def shim(self, dest: str, command: list[str] | None = None) -> list[str]:
        """``command`` behind the shim (``python`` is the environment's, first on PATH)."""
        return ["python", "-c", SHIM, self.name, self.version, dest, *(command or [])]


def identity(mirror: Path, commit: str) -> Identity | None:
    """The base commit's declared name and its declared (else git-computed) version; None when
    the name is not written literally or no version can be told."""
    name = package_name(mirror, commit)
    if not name:
        return None
    version = package_version(mirror, commit) or git_version(mirror, commit)
    return Identity(name, version) if version else None
