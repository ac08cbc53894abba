"""A reference's own environments: SWE-bench's per-instance ``environment.yml`` (a conda export)
read as a Python, exact PyPI pins, Debian packages, and what none of these can stand for."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from builder.core.errors import SwtError

FILE_NAME = "environment.yml"
CHECKOUT_DIR = "swebench/resources/swebench-og"
"""Where the files are in a SWE-bench checkout: ``<owner>__<name>/<number>/environment.yml``."""
READER_VERSION = 1
"""Bump when a file is read into other pins or packages: the results of the instances that
have one are recomputed (it is part of their keys, see ``EnvironmentResolver.spec_digest``)."""
LABEL = "reference"
"""The prefix of ``run_metadata.environment_spec`` for an environment read from such a file."""

PYPI_NAMES = {
    "antlr-python-runtime": "antlr4-python3-runtime",
    "brotli-python": "brotli",
    "iris": "scitools-iris",
    "matplotlib-base": "matplotlib",
    "msgpack-python": "msgpack",
    "nbconvert-core": "nbconvert",
    "numpy-base": "numpy",
    "pyarrow-core": "pyarrow",
    "pyqt": "pyqt5",
    "pytables": "tables",
    "python-eccodes": "eccodes",
    "python-fastjsonschema": "fastjsonschema",
    "python-graphviz": "graphviz",
    "python-tzdata": "tzdata",
    "python-xxhash": "xxhash",
    "pytorch": "torch",
    "seaborn-base": "seaborn",
}
"""conda-forge/defaults package → PyPI distribution, where the names differ (beyond the
spelling PEP 503 normalises: ``typing_extensions`` is ``typing-extensions``)."""

NOT_ON_PYPI = {
    "cdat-info": "a conda-only package (CDAT)",
    "cdms2": "a conda-only package (CDAT)",
    "cdtime": "a conda-only package (CDAT)",
    "distarray": "a conda-only package (CDAT)",
    "esmpy": "a conda-only package (ESMF's Python bindings)",
    "libcf": "a conda-only package (CDAT)",
    "pycairo": "PyPI has an sdist only, built against the system's cairo",
    "pygobject": "PyPI has an sdist only, built against the system's GObject",
    "wxpython": "PyPI has no Linux wheels; its sdist builds wxWidgets",
}
"""Python packages of the files that PyPI cannot stand in for, and why: listed, not installed."""

BACKPORTS = {
    "backports-zoneinfo": (3, 9),
    "dataclasses": (3, 7),
    "contextvars": (3, 7),
    "typing": (3, 5),
}
"""Backports of a standard library module and the Python that has it: conda installs them on
any Python (an empty package there), PyPI's do not install on it (backports.zoneinfo's C
extension does not build on 3.10). On that Python or later: listed, not installed."""

INTERPRETER_OWN = frozenset(
    {
        "_libgcc_mutex", "_openmp_mutex", "bzip2", "ca-certificates", "expat", "ld_impl_linux-64",
        "libedit", "libexpat", "libffi", "libgcc", "libgcc-ng", "libgomp", "liblzma", "libmpdec",
        "libnsl", "libsqlite", "libstdcxx", "libstdcxx-ng", "libuuid", "libxcrypt", "libzlib",
        "ncurses", "openssl", "python", "python_abi", "readline", "sqlite", "tk", "tzdata", "xz",
        "zlib",
    }
)  # fmt: skip
"""conda packages that make up the interpreter itself: the environment's Python stands for
them (and pip and the wheel/setuptools it seeds are Python packages, mapped as others)."""

DEBIAN_PACKAGES = {
    "c-compiler": ("gcc",),
    "cairo": ("libcairo2-dev",),
    "cmake": ("cmake",),
    "cxx-compiler": ("g++",),
    "eccodes": ("libeccodes-dev",),
    "fontconfig": ("fontconfig",),
    "freetype": ("libfreetype-dev",),
    "gcc": ("gcc",),
    "gcc_linux-64": ("gcc",),
    "geos": ("libgeos-dev",),
    "gfortran": ("gfortran",),
    "gfortran_linux-64": ("gfortran",),
    "git": ("git",),
    "graphviz": ("graphviz",),
    "gxx": ("g++",),
    "gxx_linux-64": ("g++",),
    "hdf5": ("libhdf5-dev",),
    "jpeg": ("libjpeg-dev",),
    "lcms2": ("liblcms2-dev",),
    "libgdal": ("libgdal-dev",),
    "libgdal-core": ("libgdal-dev",),
    "libjpeg-turbo": ("libjpeg-dev",),
    "libnetcdf": ("libnetcdf-dev",),
    "libopenblas": ("libopenblas-dev",),
    "libpng": ("libpng-dev",),
    "libsndfile": ("libsndfile1",),
    "libtiff": ("libtiff-dev",),
    "libwebp": ("libwebp-dev",),
    "libwebp-base": ("libwebp-dev",),
    "libxml2": ("libxml2-dev",),
    "libxslt": ("libxslt1-dev",),
    "make": ("make",),
    "openblas": ("libopenblas-dev",),
    "openjpeg": ("libopenjp2-7-dev",),
    "pandoc": ("pandoc",),
    "pkg-config": ("pkg-config",),
    "proj": ("libproj-dev",),
    "qhull": ("libqhull-dev",),
    "udunits2": ("libudunits2-dev",),
    "zeromq": ("libzmq3-dev",),
}
"""conda system packages (compilers, C libraries, tools) → the Debian packages providing them,
which the Docker backend installs in the image (the local backend installs no system package:
the PyPI wheels bring their own copies of the libraries, as a rule)."""


class ReferenceFileError(SwtError, ValueError):
    """A reference environment file cannot be read (the message names the file)."""


@dataclasses.dataclass(frozen=True)
class ReferenceEnvironment:
    """What one reference file says, as this toolkit can build it.

    ``pins`` are exact PyPI pins (the ``pip:`` section's as they are, then the conda packages
    that are Python distributions, by PyPI name; a name in both: the ``pip:`` one, as it was
    installed last). ``debian`` are the apt packages standing for conda system packages,
    ``system`` every conda package that is neither a Python distribution nor part of the
    interpreter (``name=version``), ``unmapped`` what is not installed, with the reason."""

    file: str  # relative to the directory of files: owner__name/number/environment.yml
    digest: str  # sha256 of the file's bytes (short)
    python: str  # X.Y: the interpreter the environment is built on
    python_full: str  # as the file has it: X.Y.Z
    pins: tuple[str, ...]
    debian: tuple[str, ...]
    system: tuple[str, ...]
    unmapped: tuple[tuple[str, str], ...]  # (name=version, why)

    @property
    def label(self) -> str:
        return f"{LABEL}:{self.file}"

    def metadata(self) -> dict[str, str]:
        """What an instance's run_metadata records about its reference environment."""
        return {
            "reference_python": self.python_full,
            "reference_pins": str(len(self.pins)),
            "reference_system_packages": json.dumps(list(self.system)),
            "reference_debian_packages": json.dumps(list(self.debian)),
            "reference_unmapped": json.dumps(dict(self.unmapped), sort_keys=True),
        }


def files_root(directory: Path) -> Path:
    """The directory holding ``<owner>__<name>/``: ``directory`` itself, or its
    :data:`CHECKOUT_DIR` when it is a SWE-bench checkout."""
    nested = Path(directory) / CHECKOUT_DIR
    return nested if nested.is_dir() else Path(directory)


def reference_file(directory: Path, repo: str, instance_id: str) -> Path | None:
    """The file of ``instance_id`` (``owner__name-<number>``) under ``directory``, if it has one."""
    owner, _, name = repo.partition("/")
    prefix = f"{owner}__{name}-"
    if not instance_id.startswith(prefix):
        return None
    number = instance_id[len(prefix) :]
    if not number or "/" in number or number in (".", ".."):
        return None
    path = files_root(directory) / f"{owner}__{name}" / number / FILE_NAME
    return path if path.is_file() else None


def file_digest(path: Path) -> str:
    """A short sha256 of the file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def read_reference(path: Path, root: Path, project: str = "") -> ReferenceEnvironment:
    """Read one file (``root``: the directory of files, for its label). ``project``: the
    project's own distribution name, left out of the pins (it is installed from its checkout)."""
    data = Path(path).read_bytes()
    try:
        document = yaml.safe_load(data)
    except yaml.YAMLError as error:
        raise ReferenceFileError(f"{path}: not valid YAML: {error}") from error
    dependencies = document.get("dependencies") if isinstance(document, dict) else None
    if not isinstance(dependencies, list):
        raise ReferenceFileError(f"{path}: no dependencies list (not a conda environment export)")
    conda: list[tuple[str, str, str]] = []
    pip: list[str] = []
    for entry in dependencies:
        if isinstance(entry, dict) and list(entry) == ["pip"]:
            pip += [str(item) for item in entry["pip"] or ()]  # an empty section reads as None
        elif isinstance(entry, str):
            name, _, rest = entry.partition("=")
            version, _, build = rest.partition("=")
            conda.append((name.strip(), version.strip(), build.strip()))
        else:
            raise ReferenceFileError(f"{path}: unexpected dependency entry {entry!r}")
    pythons = [version for name, version, _ in conda if name == "python"]
    if not pythons:
        raise ReferenceFileError(f"{path}: no python package: its interpreter is unknown")
    full = pythons[0]
    release = full.split(".")
    if len(release) < 2 or not all(part.isdigit() for part in release[:2]):
        raise ReferenceFileError(f"{path}: python={full} is not a Python version")
    pins: dict[str, str] = {}
    unmapped: dict[str, str] = {}
    own = canonicalize_name(project) if project else ""
    for text in pip:
        _pip_pin(text, pins, unmapped, own)
    python_names = {_pypi_name(name) for name, _, build in conda if _is_python_build(build)}
    system, debian = [], []
    for name, version, build in conda:
        item = f"{name}={version}"
        if name in INTERPRETER_OWN:
            continue
        if not _CONDA_NAME.fullmatch(name):  # a name to no package; never a pin or a command
            unmapped[item] = "conda entry whose name is not a package name"
            continue
        pypi = _pypi_name(name)
        if _is_python_build(build):
            _conda_pin(pypi, version, item, pins, unmapped, own)
        elif pypi in python_names:
            continue  # a metapackage of a Python package listed itself (seaborn: seaborn-base)
        else:
            system.append(item)
            provided = DEBIAN_PACKAGES.get(name)
            if provided:
                debian += [package for package in provided if package not in debian]
            else:
                unmapped[item] = "conda system package without a Debian package here"
    interpreter = (int(release[0]), int(release[1]))
    for name in [name for name in pins if interpreter >= BACKPORTS.get(name, (99, 0))]:
        unmapped[f"{name}=={pins.pop(name)}"] = f"a backport of what Python {full} has itself"
    return ReferenceEnvironment(
        file=Path(path).resolve().relative_to(Path(root).resolve()).as_posix(),
        digest=file_digest(path),
        python=".".join(release[:2]),
        python_full=full,
        pins=tuple(f"{name}=={version}" for name, version in sorted(pins.items())),
        debian=tuple(sorted(debian)),
        system=tuple(sorted(system)),
        unmapped=tuple(sorted(unmapped.items())),
    )


_CONDA_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
"""What a conda package's name is made of (``libstdcxx-ng``, ``_libgcc_mutex``)."""
_PYPI_NAME = re.compile(r"[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9]")
"""A distribution's name as PEP 508 has it, canonicalized (lower case)."""


def _is_python_build(build: str) -> bool:
    """Whether a conda build string marks a Python package: ``py310h…``, ``pyhd8ed1ab_0``,
    ``py_0``, ``unix_pyh…``, ``nompi_py310…`` (its Python or noarch-python tag)."""
    return any(part.startswith("py") for part in build.split("_"))


def _pypi_name(conda_name: str) -> str:
    return canonicalize_name(PYPI_NAMES.get(conda_name, conda_name))


def _pip_pin(text: str, pins: dict[str, str], unmapped: dict[str, str], own: str) -> None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        unmapped[text] = "pip entry that is not a requirement (a URL or a path)"
        return
    specifiers = list(requirement.specifier)
    name = canonicalize_name(requirement.name)
    if requirement.url or len(specifiers) != 1 or specifiers[0].operator != "==":
        unmapped[text] = "pip entry that is not an exact pin"
    elif name == own:
        unmapped[text] = "the project itself: installed from its checkout"
    else:
        pins[name] = specifiers[0].version


def _conda_pin(
    name: str, version: str, item: str, pins: dict[str, str], unmapped: dict[str, str], own: str
) -> None:
    if name in pins:  # the pip: section's pin (installed after conda's) or a duplicate
        return
    if name == own:
        unmapped[item] = "the project itself: installed from its checkout"
    elif not _PYPI_NAME.fullmatch(name):
        unmapped[item] = "conda name that is not a PyPI distribution's name"
    elif name in NOT_ON_PYPI:
        unmapped[item] = NOT_ON_PYPI[name]
    else:
        try:
            Version(version)
        except InvalidVersion:
            unmapped[item] = "conda version that is not a PEP 440 version"
            return
        pins[name] = version
