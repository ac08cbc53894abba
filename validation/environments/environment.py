"""Environments: what defines one (EnvironmentSpec), its install steps, and local uv-made venvs."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from builder.core.errors import SwtError
from builder.core.faults import InfrastructureError
from builder.core.files import atomic_write_text, canonical_json
from builder.core.repos import file_lock, worktree
from validation.environments import index_proxy, sandbox_root, sandbox_user
from validation.environments import sandbox as sandboxes
from validation.environments.egg_info_tags import SETUP_CFG, drop_tags
from validation.environments.interpreters import PYTHON_RELEASES, Interpreters, find_uv
from validation.environments.refusal import SandboxRefused, refused_run
from validation.environments.url_sources import Unreachable, UrlSource, extract

COMPLETE = "swt-environment.json"
"""Written last, atomically: an environment without it is unfinished and is rebuilt."""

KEY_VERSION = 9
"""Bump when the meaning of the install steps changes: every environment is rebuilt.
6: test tools undated, pins in the one resolution, build tools of the environment's era.
7: pytest of its era's major series. 8: ``py`` in environments of before pytest 7.2."""

TEST_TOOLS = (
    "pytest", "pluggy", "py", "iniconfig", "exceptiongroup", "tomli", "atomicwrites",
    "more-itertools", "wcwidth", "colorama", "funcsigs", "pathlib2", "coverage",
    "pytest-asyncio", "pytest-benchmark", "pytest-cov", "pytest-django", "pytest-env",
    "pytest-forked", "pytest-httpbin", "pytest-localserver", "pytest-mock", "pytest-randomly",
    "pytest-rerunfailures", "pytest-subtests", "pytest-timeout", "pytest-xdist",
    "pytest-doctestplus", "pytest-remotedata", "pytest-openfiles", "pytest-astropy",
    "pytest-astropy-header", "pytest-arraydiff", "pytest-filter-subpackage", "pytest-mpl",
)  # fmt: skip
"""The test runner and what runs with it: tools, not the code under test. In a dated
environment they resolve undated (the newest releases that support its Python) in the same
resolution, so bounds the project or the spec put on them (``pytest<5``) still hold and plugins
stay compatible with the pytest chosen. The small libraries that only serve pytest (pluggy,
py, iniconfig, …) are tools too: dated, they would pull pytest back to their era. Libraries the
code under test uses as well (attrs, six, importlib-metadata) keep the date, so an environment
of before 2019 gets the newest pytest they allow (pytest 3.x needs no attrs): still one with
every option the runner asks for (see ``validation/runs/pytest_launcher.py`` for older ones).
Any ``pytest-*`` package a spec names joins them. pytest itself, unless pinned, stays within
the major series of the environment's era (:data:`PYTEST_MAJORS`)."""

TOOL_DEPENDENCIES = (
    "pluggy", "py", "iniconfig", "exceptiongroup", "tomli", "atomicwrites", "more-itertools",
    "wcwidth", "colorama", "funcsigs", "pathlib2",
)  # fmt: skip
"""The test tools that are a test tool's own dependencies (pytest's). Undated beside an undated
pytest, they are dated with the environment when the project under test declares them among
its install requirements (``EnvironmentSpec.dated_tools``): pytest's own repository does, and
installs pytest from its checkout, of its date — pluggy 1.7 beside a pytest of 2023 breaks
its tests."""

BUILD_TOOLS = (
    "setuptools", "setuptools-scm", "wheel", "pip", "packaging", "cython", "extension-helpers",
    "flit-core", "hatchling", "hatch-vcs", "poetry-core", "pbr", "pyparsing",
)  # fmt: skip
"""Build tooling and what it needs (pyparsing: packaging before 22), dated together (isolated
PEP 517 builds included: uv dates build dependencies too) to the environment's date — never
before its Python (:func:`python_floor`, as everything) nor before
:data:`LEGACY_BUILD_SETUPTOOLS`: setuptools of 2019 cannot even import on Python 3.9, today's
one (no ``setuptools.dep_util``, ``packaging`` of its own time) cannot build a project of
2018."""

PYTEST_MAJORS = {
    "4": "2018-11-14T17:09:39Z", "5": "2019-06-29T01:02:19Z", "6": "2020-07-28T19:58:49Z",
    "7": "2022-02-04T10:21:26Z", "8": "2024-01-27T21:47:54Z", "9": "2025-11-08T17:25:31Z",
}  # fmt: skip
"""When each pytest major release came out (its x.0.0 upload to PyPI). A dated environment's
pytest is the newest release before the next major after its date (:func:`pytest_date`): a
major removes what the plugins of earlier eras use (pytest 8 the ``path`` argument of
collection hooks), and not every plugin is a test tool that resolves undated — libraries ship
their own (asdf's schema tester), dated with the code under test. Before 4.0: pytest 3.10, which
has every option the runner passes."""
PY_DROPPED = "2022-10-24"
"""The release of pytest 7.2.0, the first that no longer installs the ``py`` library (it
keeps a shim of ``py.path`` and ``py.error`` alone). An environment dated before it gets
``py`` as the pytest of its date did: the plugins and tests of that era import the rest
(pytest-benchmark 3.4 writes through ``py.io``), while the pytest of its major series, chosen
by :func:`pytest_date`, can be 7.2 or later."""
LEGACY_BUILD_SETUPTOOLS = "2019-02-05"
"""The other floor of the build tools' date: the release of setuptools 40.8.0 (PyPI), which uv
(as pip) requires to build a project that has no ``pyproject.toml`` (an old sdist such as
atomicwrites 1.4.1, or the project itself); older build tools cannot build those at all."""

LEGACY_SETUPTOOLS_VERSION = "40.8.0"
"""The setuptools released on :data:`LEGACY_BUILD_SETUPTOOLS`."""

WHEELS_LAG_DAYS = 182
"""A dated resolution is never older than its Python's release plus this many days. A spec may
run an old commit on a newer Python (SWE-bench's xarray environments are all 3.10); as of a
date before that Python, no package has wheels for it, and the sdists of the time do not build
on it (numpy 1.17 on 3.10). Half a year after a release the compiled libraries have wheels
for it (numba, among the slowest, took three and a half months for 3.10; bottleneck's first
3.10 wheels came after four)."""

RUNTIME_SETUPTOOLS = "setuptools<81"
"""Installed unless a spec names setuptools: what ``python -m venv`` seeded for years, and
older projects import ``pkg_resources`` (removed in setuptools 81) without declaring it."""
TYPEGUARD_SETUPTOOLS = ("2024-07-17", "setuptools<71")
"""A dated environment of before setuptools 71 (released 2024-07-17) gets a setuptools older than
it, even when its Python's release moves the build tools' date past it (:data:`BUILD_TOOLS`):
71 vendors typeguard, whose pytest plugin (found once ``pkg_resources`` puts the vendored
packages on the path) crashes the pytest of earlier eras (pytest 5: ``addini(type="string")``),
which a project's own bound on pytest may still ask for."""
OVERRIDES = "swt-overrides.txt"
"""In the venv: the spec's exact pins as uv overrides (a pin wins over any requirement)."""
BUILD_CONSTRAINTS = "swt-build-constraints.txt"
"""In the venv: the spec's pins of build tools, as uv build constraints. A pinned build tool is
visible whatever its date (it is a pin), but uv's overrides reach only the environment's own
resolution: without the constraint an isolated (PEP 517) build would take the tool's newest
release beside the era's other build tools (today's setuptools with a 2021 ``packaging``
fails to build)."""
LEFT_OUT = "swt-left-out.txt"
"""In the venv: what of ``EnvironmentSpec.optional`` (the optional additions, the spec's
``optional_packages``) could not be installed beside the pinned stack, one name a line (empty
when none was left out)."""
STACK = "swt-stack.txt"
"""In the venv: what the pinned stack installed (``name==version``), the optional additions'
constraints."""
_FAR_FUTURE = "2100-01-01T00:00:00Z"
INSTALL_REPAIRS = 2
"""The version of the repairs a uv install makes for itself (:data:`RETRY`), kept in a stored
``environment_failed``'s evidence: a failure stored under an older one is validated again (the
environment's key, which does not carry it, stays). 2: legacy metadata read leniently."""
DEPENDENCY_METADATA = "swt-dependency-metadata.toml"
"""In the venv: the uv configuration holding the metadata of releases uv refused, read
leniently (see :mod:`legacy_metadata`), when any was."""
_LENIENT = Path(__file__).with_name("legacy_metadata.py").read_text()
RETRY = (
    f"lenient={shlex.quote(_LENIENT)}; "
    'swt_python() { while [ "$#" -gt 1 ]; do [ "$1" = --python ] && '
    '{ printf "%s\\n" "$2"; return 0; }; shift; done; return 1; }; '
    'out=$(mktemp -d) && tries=0 && repaired="" && configured="" && '
    'while :; do rm -f "$out/pipe"; mkfifo "$out/pipe" && { tee "$out/err" < "$out/pipe" >&2 & } '
    '&& "$@" 2> "$out/pipe"; code=$?; wait; '
    '[ "$code" -eq 0 ] && rm -rf "$out" && exit 0; '
    "names=$(sed -n 's/.*`\\([^`]*\\)` was filtered by `exclude-newer`.*/\\1/p' \"$out/err\" "
    "| sort -u); "
    "legacy=$(sed -n 's/.*Metadata for `\\([^`]*\\)` (v\\([^)]*\\)) could not be parsed.*/"
    '\\1==\\2/p\' "$out/err" | sort -u); '
    '{ [ -n "$names" ] || [ -n "$legacy" ]; } && [ "$tries" -lt 10 ] || '
    '{ rm -rf "$out"; exit "$code"; }; '
    "for name in $names; do "
    'echo "# undated: $name (no release of it uploaded before the date)" >&2; '
    f'set -- "$@" --exclude-newer-package "$name={_FAR_FUTURE}"; done; '
    'if [ -n "$legacy" ]; then python=$(swt_python "$@") || { rm -rf "$out"; exit "$code"; }; '
    f'config="${{python%/bin/python}}/{DEPENDENCY_METADATA}"; '
    "for release in $legacy; do "
    'case " $repaired " in *" $release "*) rm -rf "$out"; exit "$code";; esac; '
    'echo "# legacy metadata: $release (uv cannot parse its metadata: read leniently)" >&2; '
    "folder=$(mktemp -d); "
    '"$1" pip install --quiet --no-deps --python "$python" --target "$folder" "$release" >&2 '
    '&& "$python" -c "$lenient" "$folder" "$config" "$release" >&2; made=$?; rm -rf "$folder"; '
    '[ "$made" -eq 0 ] || { rm -rf "$out"; exit "$code"; }; repaired="$repaired $release"; done; '
    '[ -n "$configured" ] || set -- "$@" --config-file "$config"; configured=1; fi; '
    "tries=$((tries + 1)); done"
)
"""``sh -c`` wrapper of a uv install (``sh -c RETRY swt-install UV pip install …``) that repairs
what uv refuses and runs the install again, each repair said in the log:

- a package none of whose releases was uploaded before the date (uv: "`X` was filtered by
  `exclude-newer`") is taken undated. An index's upload times are not always release dates:
  atomicwrites' releases up to 1.4.0 were deleted and 1.4.1 uploaded in July 2022, so a dated
  resolution of before then that needs it (pytest's own environments, which date pytest's
  dependencies with it) finds no version at all;
- a release whose metadata uv cannot parse (uv: "Metadata for `X` (vV) could not be parsed")
  is installed alone (``--no-deps``) into a folder of its own, its metadata read leniently
  into :data:`DEPENDENCY_METADATA` (:mod:`legacy_metadata`: pandas ≤ 0.24.2's ``pytz
  (>=2011k)`` as ``pytz>=2011``), and the install given that file (``--config-file``). A
  release named again after its repair ends the install with uv's error.

Any other failure is the install's own: it ends with uv's exit code. uv's output reaches the log
as it is written (through ``tee``), so a build stopped at its time limit still shows it."""


RETRY_NAME = "SWT_RETRY"
"""What a build log or script calls :data:`RETRY`: it is written out once (a build script sets
the variable), never in every step that runs it."""


def shown(argv: tuple[str, ...] | list[str], quote: Callable[[str], str] = str) -> str:
    """A step's command as a build log (``quote``: a build script) shows it, :data:`RETRY` by
    its name (a script sets it once)."""
    return " ".join(f'"${RETRY_NAME}"' if arg == RETRY else quote(arg) for arg in argv)


class EnvironmentBuildError(SwtError, RuntimeError):
    """Building an environment failed; ``log_path`` holds the installer's output."""

    def __init__(self, message: str, log_path: Path) -> None:
        super().__init__(f"{message} (log: {log_path})")
        self.log_path = log_path


def _lacking(message: str, fault: str, log_path: Path) -> InfrastructureError:
    """What this machine lacks to build an environment (uv, the Python, a system package the
    local backend does not install): a fault of the machine, never a verdict on the instance
    (``infra_error``, not stored: a machine that has it tries the instance again)."""
    return InfrastructureError(f"{message} (log: {log_path})", fault=fault, log=str(log_path))


_NOT_BUILT = ("label", "runner", "test_command", "services")
"""EnvironmentSpec fields that do not define what is built (left out of its key)."""


@dataclasses.dataclass(frozen=True)
class EnvironmentSpec:
    """Everything that defines an environment; :meth:`key` hashes it and names the environment.

    ``packages`` are requirement strings installed by name; an exact pin (``name==x``) wins over
    every other requirement on its package, whatever its release date. ``requirements`` are
    requirement files and ``extras`` the project's extras, both read from the project at
    ``project_commit``. ``exclude_newer`` (ISO date) makes the code under test and its
    dependencies resolve as of that date (test and build tools: see :func:`install_steps`).
    ``runner``/``test_command`` say how tests run: they are carried here but are not part of the
    key (they do not change what is installed).
    """

    python: str
    packages: tuple[str, ...] = ()
    project: Path | None = None  # a git dir (mirror) holding project_commit; None: no project
    project_commit: str = ""
    requirements: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    install: str = "project"  # "project": install it (with extras); "none": dependencies only
    install_command: str = ""  # replaces the project install: a shell command in the project dir
    pre_install: tuple[str, ...] = ()  # shell commands in the project dir before installing
    system_packages: tuple[str, ...] = ()
    exclude_newer: str = ""
    env: tuple[tuple[str, str], ...] = ()
    runner: str = "pytest"
    test_command: tuple[str, ...] = ()
    label: str = ""  # e.g. "owner/name@1.2"; not part of the key
    # a project without [build-system]: its setup_requires, installed before it is built in
    # the environment (no isolation), as pip did; see validation/environments/setup_requires
    setup_requires: tuple[str, ...] = ()
    # the project's CI ran ``python`` as a stable Python by ``exclude_newer``: its dependencies
    # of that date installed on it then, so the resolution keeps its date (no python_floor)
    python_tested: bool = False
    # the exact pins win over every other requirement on their package (uv overrides): a spec's
    # author's choice; False: they are the project's own requirements (an inferred spec), which
    # the rest resolves around (an undated test tool takes a release that accepts them)
    pins_override: bool = True
    # test tools (:data:`TOOL_DEPENDENCIES`) the project under test declares: dated with the
    # environment instead of undated, as the project's own dependencies are
    dated_tools: tuple[str, ...] = ()
    # local stand-ins for network services the runs start (``services``); their packages are
    # among ``packages``, so this is no part of the key
    services: tuple[str, ...] = ()
    # apt packages the Docker backend installs in the image beside ``system_packages``, which
    # the local backend neither installs nor requires: a reference environment's conda
    # libraries (see validation/environments/reference.py), which PyPI's wheels bring their own
    # copies of as a rule
    image_packages: tuple[str, ...] = ()
    # pinned build tools kept out of the build constraints: the project's own
    # ``[build-system] requires`` excludes the pinned version (a reference's setuptools 41.6
    # beside pylint's ``setuptools>=66.1``), and its isolated build takes what it declares, as
    # pip's did when the reference installed the project (see ``resolution.free_build_tools``)
    free_build_tools: tuple[str, ...] = ()
    # installed after the stack when they can be, left out and named otherwise (never failing
    # the build): a spec's ``optional_packages`` (an inferred one's: what the project's CI
    # installs from a VCS URL, by name), a plugin the touched tests' fixtures need
    optional_packages: tuple[str, ...] = ()
    # packages the project installs from a git URL, fetched at their commit of the
    # environment's date (``url_sources``): installed from their trees in the optional step,
    # in place of the index's release of the name
    url_sources: tuple[UrlSource, ...] = ()

    def __post_init__(self) -> None:
        if self.install not in ("project", "none"):
            raise ValueError(f"install must be 'project' or 'none', not {self.install!r}")

    def key(self) -> str:
        """Content hash of everything that defines the environment (not where things live)."""
        return hashlib.sha256(canonical_json(self.key_material()).encode()).hexdigest()[:24]

    def key_material(self) -> dict[str, Any]:
        """What :meth:`key` hashes."""
        material = dataclasses.asdict(self)
        for field in _NOT_BUILT:
            material.pop(field)
        for field, unset in (
            ("setup_requires", ()),
            ("python_tested", False),
            ("pins_override", True),
            ("dated_tools", ()),
            ("image_packages", ()),
            ("optional_packages", ()),
            ("free_build_tools", ()),
            ("url_sources", ()),
        ):
            if material[field] == unset:  # unset: the keys of other environments stay as they were
                material.pop(field)
        material["project"] = self.project is not None
        if self.url_sources:  # what was fetched, not where its clone lives
            material["url_sources"] = _url_sources(self)
        material["key_version"] = KEY_VERSION
        if self.optional:  # resolved after the pinned stack (the keys of others stay); 2: the
            material["optional_after_stack"] = 2  # pinned build tools override their bounds
        if (
            self.pins
            and self.pins_override
            and _names(tuple(_bare(self.unpinned))) & set(BUILD_TOOLS)
        ):  # a build tool named bare is installed with the stack (before, optional after it)
            material["bare_build_tools_in_stack"] = True
        return material

    @property
    def pins(self) -> tuple[str, ...]:
        """Packages pinned exactly (``==``/``===``): undated, and they win (uv overrides)."""
        return tuple(p for p in self.packages if _is_pin(p))

    @property
    def unpinned(self) -> tuple[str, ...]:
        return tuple(p for p in self.packages if not _is_pin(p))

    @property
    def optional(self) -> tuple[str, ...]:
        """What is installed after the stack when it can be: the optional additions
        (:func:`optional_additions`), then the ``optional_packages`` the stack's packages do
        not name, each name once."""
        chosen = list(optional_additions(self))
        seen = _names(tuple(self.packages))
        for text in self.optional_packages:
            names = _names((text,))
            if names and not names & seen:
                chosen.append(text)
                seen |= names
        return tuple(chosen)

    def describe(self) -> dict[str, object]:
        """A JSON-able description (what run metadata and the environment's marker record)."""
        material = dataclasses.asdict(self)
        material["project"] = str(self.project) if self.project else None
        material["url_sources"] = _url_sources(self)
        material["env"] = dict(self.env)
        material["key"] = self.key()
        return material


def _url_sources(spec: EnvironmentSpec) -> list[list[str]]:
    return [[s.name, s.url, s.commit, s.subdirectory] for s in spec.url_sources]


URL_SOURCES = "url-sources"
"""Where a build finds the trees of ``url_sources``, under the build's own folder (the local
backend's home, the Docker backend's ``/swt``): ``URL_SOURCES/NAME``."""


@dataclasses.dataclass(frozen=True)
class InstallStep:
    """One command of an environment build; ``in_project`` runs it in the project checkout."""

    label: str
    argv: tuple[str, ...]
    in_project: bool = False


def _is_pin(text: str) -> bool:
    """An exact pin; a text that is no requirement is left to the installer to reject."""
    try:
        specifiers = list(Requirement(text).specifier)
    except InvalidRequirement:
        return False
    return len(specifiers) == 1 and specifiers[0].operator in ("==", "===")


def optional_additions(spec: EnvironmentSpec) -> tuple[str, ...]:
    """The packages a spec with pins that override (``pins_override``) names bare, without a
    version bound: the optional packages it adds (xarray's backends: sparse, zarr, …), those
    the test files import, which resolve *after* the pinned stack, constrained by it. An
    override makes every other requirement on a pinned package void, theirs too: numba 0.55
    (``numpy<1.22``) resolved beside a pinned numpy 1.23 and could not be imported. A package
    the spec bounds (``werkzeug<2.1``, ``pytest<5``) steers the stack's own resolution and
    stays in it; an inferred spec's pins are requirements (nothing overrides them). A build
    tool named bare (:data:`BUILD_TOOLS`: astropy's ``pip``, which its ``install_command``
    runs) is the stack's too: the project's install needs it, and the optional step comes
    after that install."""
    if not (spec.pins and spec.pins_override):
        return ()
    return tuple(text for text in _bare(spec.unpinned) if not _names((text,)) & set(BUILD_TOOLS))


def _bare(packages: tuple[str, ...]) -> list[str]:
    """The requirements among ``packages`` without a version bound, URL or marker."""
    bare = []
    for text in packages:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue  # the installer's to reject, in the stack's resolution
        if not requirement.specifier and not requirement.url and requirement.marker is None:
            bare.append(text)
    return bare


def _names(packages: tuple[str, ...]) -> set[str]:
    """The canonical names of the requirements among ``packages`` (others are the installer's
    to reject)."""
    names = set()
    for text in packages:
        try:
            names.add(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return names


def install_steps(
    spec: EnvironmentSpec,
    *,
    base_python: str,
    venv: str,
    project_dir: str | None,
    installer: str = "uv",
    uv: str = "uv",
    sources_dir: str | None = None,
) -> list[InstallStep]:
    """The commands that build ``spec`` into ``venv`` (paths as the executing side sees them).

    The one place a spec becomes install commands: the local backend runs them on this machine,
    the Docker backend in image layers. System packages (``image_packages`` too) come first
    (``apt-get``), then the venv, the pre-install commands, and one resolution of the project,
    its requirement files and the spec's packages. With uv the spec's exact pins are also
    overrides (a pin wins over any requirement on its package; not with ``pins_override`` off),
    and a dated spec resolves as of its date except the test tools (:data:`TEST_TOOLS`, undated)
    and the build tools (:data:`BUILD_TOOLS`, never older than the Python); a pinned package's
    release is visible whatever its date. A project built without ``[build-system]`` that has
    ``setup_requires`` is installed in a second step, built in the environment (no isolation)
    once the first has installed them with everything else. What is optional
    (``EnvironmentSpec.optional``) comes last, in a step that never fails
    (:func:`_optional_step`); with pip only the spec's ``optional_packages`` get it (the
    optional additions stay in the stack's resolution, as pip has no overrides to escape). A
    package of ``url_sources`` is installed there from its tree in ``sources_dir`` (``NAME``),
    in place of its name.
    """
    if spec.url_sources and sources_dir is None:
        raise ValueError(f"{spec.label or 'spec'}: url_sources need a sources_dir")
    steps: list[InstallStep] = []
    image = (p for p in spec.image_packages if p not in spec.system_packages)
    system = (*spec.system_packages, *image)
    if system:
        steps.append(
            InstallStep(
                "system packages",
                ("apt-get", "install", "-y", "--no-install-recommends", *system),
            )
        )
    python = f"{venv}/bin/python"
    if installer == "uv":
        steps.append(InstallStep("venv", (uv, "venv", "--quiet", "--python", base_python, venv)))
        pip = (uv, "pip", "install", "--python", python, "--link-mode", "hardlink")
        if _uv_compiles(spec.python):  # byte-compiled as pip does (see _uv_compiles)
            pip += ("--compile-bytecode",)
    elif installer == "pip":
        steps.append(InstallStep("venv", (base_python, "-m", "venv", venv)))
        pip = (python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check")
    else:
        raise ValueError(f"unknown installer {installer!r} (uv or pip)")
    steps.extend(
        InstallStep("pre-install", ("sh", "-c", command), in_project=True)
        for command in spec.pre_install
    )
    if project_dir is None and (spec.requirements or spec.install_command or spec.extras):
        raise ValueError(f"{spec.label or 'spec'}: requirements/extras/install need a project")
    targets: list[str] = []
    for requirement_file in spec.requirements:
        targets += ["-r", f"{project_dir}/{requirement_file}"]
    project: list[str] = []
    if project_dir is not None and spec.install == "project" and not spec.install_command:
        extras = f"[{','.join(spec.extras)}]" if spec.extras else ""
        project.append(f"{project_dir}{extras}")
    legacy = bool(project and spec.setup_requires)
    dated = bool(spec.exclude_newer) and installer == "uv"
    seed = [] if "setuptools" in _names(spec.packages) else [_runtime_setuptools(spec, dated)]
    if dated and resolution_date(spec)[:10] < PY_DROPPED and "py" not in _names(spec.packages):
        seed.append("py")
    options: tuple[str, ...] = ()
    tool_overrides: tuple[str, ...] = ()  # the optional additions' only overrides
    write = 'printf "%s\\n" "$@" > "$0"'
    if installer == "uv" and spec.pins and spec.pins_override:
        overrides = f"{venv}/{OVERRIDES}"
        steps.append(InstallStep("overrides", ("sh", "-c", write, overrides, *spec.pins)))
        options += ("--overrides", overrides)
    if installer == "uv" and spec.pins:
        tools = [pin for pin in spec.pins if _names((pin,)) & set(BUILD_TOOLS)]
        tools = [pin for pin in tools if not _builds_nothing(pin)]
        tools = [pin for pin in tools if not _names((pin,)) & set(spec.free_build_tools)]
        if tools:  # overrides do not reach isolated builds: the pinned tool must, as built
            constraints = f"{venv}/{BUILD_CONSTRAINTS}"
            steps.append(InstallStep("build constraints", ("sh", "-c", write, constraints, *tools)))
            options += ("--build-constraints", constraints)
            tool_overrides = ("--overrides", constraints) if spec.pins_override else ()
    if dated:
        options += date_options(spec)
    if installer == "uv":  # repairs what uv refuses (see RETRY)
        pip = ("sh", "-c", RETRY, "swt-install", *pip)
    # with pip the optional additions stay in the stack's one resolution (no constraints from
    # uv's overrides to escape); the spec's optional packages, named nowhere else, get the
    # optional step with pip too: installed when they can be, else left out and named
    optional = spec.optional if installer == "uv" else _not_in(spec.optional, spec.packages)
    packages = tuple(p for p in spec.packages if p not in optional)
    if spec.url_sources:
        optional = _from_sources(optional, spec.url_sources, str(sources_dir))
    if legacy:  # built in the environment, its setup_requires (and setuptools' wheel) there
        builders = [*spec.setup_requires, *([] if "wheel" in _names(spec.packages) else ["wheel"])]
        wanted = (*seed, *builders, *packages, *targets)
        steps.append(InstallStep("dependencies", (*pip, *options, *wanted)))
        isolation = ("--no-build-isolation",)
        steps.append(InstallStep("project", (*pip, *options, *isolation, *wanted, *project)))
    else:
        wanted = (*seed, *packages, *targets, *project)
        steps.append(InstallStep("dependencies", (*pip, *options, *wanted)))
    if spec.install_command:
        steps.append(
            InstallStep("install command", ("sh", "-c", spec.install_command), in_project=True)
        )
    if optional:
        constrained = (*_without_overrides(options), *tool_overrides)
        steps.append(_optional_step(uv, python, venv, (*pip, *constrained), optional, installer))
    if installer == "uv" and not _uv_compiles(spec.python):  # as pip: a file that does not
        compile_all = '"$0" -m compileall -q "$1" > /dev/null || true'  # compile is left as is
        steps.append(InstallStep("bytecode", ("sh", "-c", compile_all, python, f"{venv}/lib")))
    return steps


_OPTIONAL = """\
set -f
stack="$1/STACK" left="$1/LEFT_OUT" uv="$2" python="$3" packages="$4"
shift 4
: > "$left"
freeze() { FREEZE > "$stack"; }
freeze
if "$@" CONSTRAINTS "$stack" $packages; then exit 0; fi
for package in $packages; do
  if "$@" CONSTRAINTS "$stack" "$package"; then freeze; continue; fi
  echo "$package" >> "$left"
  echo "swt: left out $package: it cannot be installed beside the pinned stack"
done
"""
"""The optional additions' step: ``sh -c _OPTIONAL optional VENV UV PYTHON "PACKAGE…" PIP…``. All of
them in one resolution constrained by the stack as installed (the pins among it); failing
that, one at a time, each constrained by the stack and the additions installed before it.
What cannot be installed is left out, named in :data:`LEFT_OUT` and in the log; the step
itself never fails. The packages are bare names (``name`` or ``name[extra]``: no space, no
quote; ``set -f``: no glob). ``FREEZE`` and ``CONSTRAINTS`` are the installer's
(:data:`_FREEZE`)."""
_FREEZE = {
    "uv": ('"$uv" pip list --python "$python" --format freeze', "--constraints"),
    "pip": ('"$python" -m pip list --format freeze --disable-pip-version-check', "--constraint"),
}
"""Installer → how the optional step lists the stack (``name==version``, the project too) and
names a constraints file. uv's make the script the very one of before pip had the step: a
Docker image's hash holds its steps, and those already built stay valid."""


def _optional_step(
    uv: str,
    python: str,
    venv: str,
    pip: tuple[str, ...],
    optional: tuple[str, ...],
    installer: str = "uv",
) -> InstallStep:
    freeze, constraints = _FREEZE[installer]
    script = _OPTIONAL.replace("STACK", STACK).replace("LEFT_OUT", LEFT_OUT)
    script = script.replace("FREEZE", freeze).replace("CONSTRAINTS", constraints)
    argv = ("sh", "-c", script, "optional", venv, uv, python, " ".join(optional), *pip)
    return InstallStep("optional packages", argv)


def _from_sources(
    optional: tuple[str, ...], sources: tuple[UrlSource, ...], sources_dir: str
) -> tuple[str, ...]:
    """``optional`` with each package of ``sources`` as the path of its tree (added when it is
    not named there)."""
    paths = {canonicalize_name(s.name): f"{sources_dir}/{s.name}" for s in sources}
    chosen = []
    for text in optional:
        names = _names((text,))
        chosen.append(next((paths.pop(name) for name in names if name in paths), text))
    return (*chosen, *paths.values())


def _not_in(optional: tuple[str, ...], packages: tuple[str, ...]) -> tuple[str, ...]:
    """The requirements of ``optional`` that are not among ``packages`` (as written)."""
    return tuple(text for text in optional if text not in packages)


def _without_overrides(options: tuple[str, ...]) -> tuple[str, ...]:
    """``options`` less ``--overrides FILE``: the optional additions meet the pins as they are
    installed (constraints), never overriding their own requirements. The pinned build tools
    still override theirs (:func:`install_steps` adds the build constraints' file as their
    overrides): a bound on setuptools is about building (numba 0.56 declares ``setuptools<60``,
    and as a constraint beside xarray's pinned setuptools 68 it took numba back to 0.53, which
    has no wheels for Python 3.10)."""
    kept: list[str] = []
    skip = False
    for option in options:
        if skip:
            skip = False
        elif option == "--overrides":
            skip = True
        else:
            kept.append(option)
    return tuple(kept)


def _uv_compiles(python: str) -> bool:
    """Whether uv's ``--compile-bytecode`` works on ``python`` (3.7 and later: its compile
    script needs ``py_compile.PycInvalidationMode``); earlier ones get ``compileall`` after
    the install. Installs are byte-compiled as pip's are: a module first imported under
    ``-W error`` (flask's ``filterwarnings = error``) would otherwise compile in the test run
    and fail on a warning (blinker 1.4's invalid escape sequence)."""
    try:
        return Version(python) >= Version("3.7")
    except InvalidVersion:
        return True


def _builds_nothing(pin: str) -> bool:
    """Whether ``pin`` holds setuptools below 40.8.0 (:data:`LEGACY_BUILD_SETUPTOOLS`), with
    which uv (as pip) builds no project lacking a ``pyproject.toml``: as a build constraint it
    would make every such sdist unbuildable (astropy 1.3's spec pins SWE-bench's setuptools
    38.2.4, and MarkupSafe 1.0 is an sdist). The environment still gets the pin; isolated
    builds get the build tools of the environment's date."""
    try:
        requirement = Requirement(pin)
    except InvalidRequirement:
        return False
    if canonicalize_name(requirement.name) != "setuptools":
        return False
    legacy = Version(LEGACY_SETUPTOOLS_VERSION)
    for specifier in requirement.specifier:  # one upper bound below 40.8 excludes it all
        if specifier.operator in ("==", "===", "<", "<=", "~="):
            try:
                bound = Version(specifier.version.removesuffix(".*"))
            except InvalidVersion:
                continue
            if bound < legacy:
                return True
    return False


def date_options(spec: EnvironmentSpec) -> tuple[str, ...]:
    """uv's options dating a resolution: the environment's date (never before its Python's
    :func:`python_floor`), the build tools never before setuptools 40.8, and no date for test
    tools (but those the project declares, ``dated_tools``) and pinned packages (but a
    setuptools pinned below 40.8, see :func:`_builds_nothing`)."""
    date = resolution_date(spec)
    options = ("--exclude-newer", date)
    if date[:10] < LEGACY_BUILD_SETUPTOOLS:
        for tool in BUILD_TOOLS:
            options += ("--exclude-newer-package", f"{tool}={LEGACY_BUILD_SETUPTOOLS}T23:59:59Z")
    named = _names(spec.packages)
    plugins = {name for name in named if name.startswith("pytest-")}
    # a setuptools pin below 40.8 is of before any build tools' date here, which then holds for
    # isolated builds (undated, they would take the newest setuptools for the Python)
    pins = _names(tuple(pin for pin in spec.pins if not _builds_nothing(pin)))
    undated = (set(TEST_TOOLS) - set(_names(spec.dated_tools))) | plugins | pins
    for name in sorted(undated):
        until = pytest_date(date) if name == "pytest" and name not in pins else _FAR_FUTURE
        options += ("--exclude-newer-package", f"{name}={until}")
    return options


def resolution_date(spec: EnvironmentSpec) -> str:
    """The date a dated environment resolves as of: its own, never before its Python's
    :func:`python_floor` unless the project's CI ran that Python as a stable one by then
    (``python_tested``: it had the dependencies of the date). Empty for an undated one."""
    if spec.python_tested or not spec.exclude_newer:
        return spec.exclude_newer
    return max(spec.exclude_newer, python_floor(spec.python))


def pytest_date(date: str) -> str:
    """The date pytest resolves as of in an environment of ``date``: just before the release of
    the first major after it (:data:`PYTEST_MAJORS`), so the newest release of the major series
    of its era; none after it: no date."""
    for released in sorted(PYTEST_MAJORS.values()):
        if released > date:
            moment = dt.datetime.fromisoformat(released) - dt.timedelta(seconds=1)
            return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return _FAR_FUTURE


def python_floor(python: str) -> str:
    """The oldest date a resolution for ``python`` is taken from: its release plus
    :data:`WHEELS_LAG_DAYS` (an empty string for a Python whose release is not known)."""
    released = PYTHON_RELEASES.get(python)
    if not released:
        return ""
    moment = released + dt.timedelta(days=WHEELS_LAG_DAYS)
    return f"{moment.isoformat()}T23:59:59Z"


def _runtime_setuptools(spec: EnvironmentSpec, dated: bool) -> str:
    """The setuptools installed with a spec that names none (see TYPEGUARD_SETUPTOOLS)."""
    released, older = TYPEGUARD_SETUPTOOLS
    return older if dated and spec.exclude_newer[:10] < released else RUNTIME_SETUPTOOLS


BUILD_ADDRESS_SPACE_MB = 2048
"""The least address space a build gets, whatever the runs' ``memory_mb``: uv reserves its
threads' stacks up front (a sandboxed build under 512 MB could not start its thread pool),
and compilers need more than a test run."""


def build_rlimits(rlimits: Mapping[str, int]) -> dict[str, int]:
    """The runs' limits for a build, the address space raised to BUILD_ADDRESS_SPACE_MB."""
    limits = dict(rlimits)
    floor = BUILD_ADDRESS_SPACE_MB * 1024 * 1024
    if 0 < limits.get("RLIMIT_AS", 0) < floor:
        limits["RLIMIT_AS"] = floor
    return limits


class LocalEnvironments:
    """Builds and reuses venvs under ``root/<key>``; safe across threads and processes.

    Packages come from uv's cache (``root/.uv-cache`` unless ``UV_CACHE_DIR`` is set) as
    hardlinks, so environments that share packages share their files; an environment is built
    once per key and reused by every run. Each build step runs with an allow-listed environment
    (no credentials), the resource limits ``rlimits``, and within ``timeout_s`` for the whole
    build; with ``sandbox = "bwrap"`` in a bubblewrap sandbox that may write only ``root``
    (every other environment in it read-only) and the uv cache, and reach only the package
    index hosts and ``build_hosts`` (through ``index_proxy``; ``"*"`` in them: any host). When
    the builder is root the sandbox runs as an unprivileged uid (``sandbox_user``), which may
    write only what is lent to it there: its environment, checkout and home, and the cache.
    """

    def __init__(
        self,
        root: Path,
        interpreters: Interpreters | None = None,
        installer: str = "auto",
        *,
        sandbox: str = "bwrap",
        timeout_s: float = 1800.0,
        rlimits: Mapping[str, int] | None = None,
        build_hosts: tuple[str, ...] = (),
    ) -> None:
        self.root = Path(root).resolve()  # the sandbox binds real paths: a symlinked dir too
        self.build_hosts = tuple(build_hosts)
        self.interpreters = interpreters or Interpreters()
        self.installer = installer
        self.sandbox = sandbox
        self.timeout_s = timeout_s
        self.rlimits = build_rlimits(rlimits or {})

    def path(self, spec: EnvironmentSpec) -> Path:
        return self.root / spec.key()

    def python(self, spec: EnvironmentSpec) -> Path:
        """The environment's interpreter, building the environment first if needed."""
        directory = self.path(spec)
        interpreter = directory / "bin" / "python"
        with file_lock(self.root / f"{spec.key()}.lock"):
            if (directory / COMPLETE).is_file():
                return interpreter
            shutil.rmtree(directory, ignore_errors=True)
            log_path = self.root / f"{spec.key()}.build.log"
            installer = self._build(spec, directory, log_path)
            record = {**spec.describe(), "installer": installer}
            if spec.optional:
                record["left_out"] = list(left_out(directory))
            atomic_write_text(directory / COMPLETE, json.dumps(record, sort_keys=True))
        return interpreter

    def _build(self, spec: EnvironmentSpec, directory: Path, log_path: Path) -> str:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        bwrap = sandboxes.require(self.sandbox)
        uv = find_uv()
        installer = self.installer if self.installer != "auto" else ("uv" if uv else "pip")
        if installer == "uv" and uv is None:
            log_path.write_text("uv not found\n")
            raise _lacking("installer uv requested but uv is not installed", "installer", log_path)
        base = self.interpreters.find(spec.python)
        if base is None:
            known = ", ".join(sorted(self.interpreters.available())) or "none"
            log_path.write_text(f"no Python {spec.python} found (found: {known})\n")
            raise _lacking(f"no Python {spec.python} interpreter found", "interpreter", log_path)
        missing = _missing_system_packages(spec.system_packages)
        if missing:
            log_path.write_text(f"missing system packages: {' '.join(missing)}\n")
            raise _lacking(
                f"system packages not installed (the local backend does not install them): "
                f"{', '.join(missing)}",
                "system_packages",
                log_path,
            )
        checkout = self.root / f"{spec.key()}.project"
        build = _Build(spec, directory, installer, str(base), uv, bwrap, log_path)
        with log_path.open("w") as log:
            if spec.project is None:
                self._run_steps(build, None, log)
            else:
                with worktree(spec.project, spec.project_commit, checkout) as tree:
                    if drop_tags(tree):
                        log.write(f"# {SETUP_CFG}: [egg_info] tag_build and tag_date off (the "
                                  "project's own version)\n")  # fmt: skip
                    self._run_steps(build, tree, log)
        return installer

    def _run_steps(self, build: _Build, tree: Path | None, log: IO[str]) -> None:
        spec, directory = build.spec, build.directory
        home = self.root / f"{spec.key()}.home"
        steps = install_steps(
            spec,
            base_python=build.base,
            venv=str(directory),
            project_dir=str(tree) if tree else None,
            installer=build.installer,
            uv=build.uv or "uv",
            sources_dir=str(home / URL_SOURCES),
        )
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        for source in spec.url_sources:  # in home: lent to the build, which may write in them
            try:
                extract(source, home / URL_SOURCES / source.name)
            except Unreachable as error:  # the builder's own clone cannot give it now
                log.write(f"{error}\n")
                raise _lacking(str(error), "url_source", build.log_path) from error
            log.write(f"# {source.name}: {source.described()} ({URL_SOURCES}/{source.name})\n")
        env = _build_env(spec, directory, home, self.root / ".uv-cache")
        deadline = time.monotonic() + self.timeout_s
        hosts = index_proxy.allowed_hosts(env, self.build_hosts)
        limited_network = build.bwrap is not None and index_proxy.ANY not in hosts
        proxy_dir = Path(tempfile.mkdtemp(prefix="swt-net-"))
        proxy = index_proxy.IndexProxy(proxy_dir / "s", hosts)
        if limited_network:
            env = index_proxy.through_forwarder(env, sandboxes.PROXY_PORT)
        lent = [home, proxy_dir, *([tree] if tree else [])]
        try:
            with self._build_user(build, lent, Path(env["UV_CACHE_DIR"])) as user:
                if user is not None:  # its git reads a checkout and a mirror that root owns
                    env = {**env, **_GIT_SAFE_DIRECTORIES}
                    (home / ".gitconfig").write_text(_GIT_SAFE_CONFIG)
                for step in steps:
                    if step.label == "system packages":
                        continue  # checked above (image_packages: not required); never apt-get
                    log.write(f"$ {shown(step.argv)}\n")
                    log.flush()
                    start = log.tell()
                    proxy.unreachable.clear()  # this step's alone
                    cwd = tree if step.in_project and tree else (directory.parent)
                    argv = sandboxes.limited(self.rlimits, step.argv)
                    probe = sandboxes.limited(self.rlimits, [sandboxes.TRUE])  # for no record
                    if build.bwrap is not None:
                        mounts = self._mounts(build, tree, env)
                        if limited_network:
                            socket_path = f"{sandboxes.PROXY_DIR}/s"
                            argv = sandboxes.forwarded(
                                build.base, socket_path, sandboxes.PROXY_PORT, argv
                            )
                            mounts.append(sandboxes.Mount(proxy_dir, sandboxes.PROXY_DIR))
                        if user is not None:
                            argv = _shared_umask(argv)
                        argv = sandboxes.command(
                            build.bwrap, argv, mounts=mounts, network=not limited_network,
                            cwd=str(cwd), user=user,
                        )  # fmt: skip
                        probe = sandboxes.command(
                            build.bwrap, probe, mounts=mounts, network=False, cwd=str(cwd),
                            user=user,
                        )  # fmt: skip
                    if limited_network:
                        with proxy:
                            if user is not None:  # the socket's owner may connect to it
                                os.chown(proxy.socket_path, user.uid, user.gid)
                            code = _run_in_group(argv, cwd, env, log, deadline - time.monotonic())
                        log.write(proxy.refusals())
                    else:
                        code = _run_in_group(argv, cwd, env, log, deadline - time.monotonic())
                    if code is None:
                        raise EnvironmentBuildError(
                            f"environment step '{step.label}' timed out: the build took longer "
                            f"than validation.build_timeout_s = {self.timeout_s:g} s and was "
                            "killed",
                            build.log_path,
                        )
                    if code != 0:
                        log.flush()
                        _raise_fault(step.label, code, build.log_path, start, proxy, probe)
                        raise EnvironmentBuildError(
                            f"environment step '{step.label}' failed with exit code {code}",
                            build.log_path,
                        )
        finally:
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(proxy_dir, ignore_errors=True)

    @contextlib.contextmanager
    def _build_user(
        self, build: _Build, lent: list[Path], cache: Path
    ) -> Iterator[sandbox_user.User | None]:
        """The unprivileged uid a sandboxed build runs as when the builder is root (None: it
        runs as the builder's own uid in a user namespace, or unsandboxed), in the builds'
        group: lent what it writes (the environment, ``lent``: its checkout, home and proxy
        folder), the uv cache ``cache`` shared with every build (``sandbox_user.share``); all
        given back to root after (the environment keeps the builds' group: its files are
        hardlinks of the cache's)."""
        if build.bwrap is None:
            yield None
            return
        with sandbox_user.claimed() as claimed:
            if claimed is None:
                yield None
                return
            user = claimed.building()
            sandbox_user.traversable(self.root)  # where its folders are (made 0700, say)
            sandbox_user.share(cache)
            build.directory.mkdir(parents=True, exist_ok=True)  # root's folder: made for it
            user.lend(build.directory, *lent)
            try:
                yield user
            finally:
                sandbox_user.restore(*lent)
                sandbox_user.restore(build.directory, keep_group=True)

    def _mounts(
        self, build: _Build, tree: Path | None, env: Mapping[str, str]
    ) -> list[sandboxes.Mount | sandboxes.Link]:
        """What a sandboxed step may read besides the system directories (the interpreter, the
        mirror, uv, each through its links) and write: ``root`` with every finished environment
        in it read-only, and the uv cache. Nothing else of the host is there."""
        mounts: list[sandboxes.Mount | sandboxes.Link] = [*sandbox_root.interpreter(build.base)]
        readable = [Path(build.spec.project)] if build.spec.project is not None else []
        if build.uv is not None:  # the builder's uv (in its venv, perhaps under /tmp)
            readable.append(Path(os.path.realpath(build.uv)))
            mounts += sandbox_root.reachable(build.uv)
        mounts += [sandboxes.Mount(path, str(path)) for path in readable if path.exists()]
        mounts.append(sandboxes.Mount(self.root, str(self.root), writable=True))
        own = {build.directory, self.root / f"{build.spec.key()}.project"}
        cache = Path(env["UV_CACHE_DIR"])
        own |= {cache, Path(env["HOME"])}
        for entry in sorted(self.root.iterdir()):
            # finished environments are read-only to it; what other builds are making at the
            # same time comes and goes (a bind of a vanished path would fail the build)
            if entry not in own and (entry / COMPLETE).is_file():
                mounts.append(sandboxes.Mount(entry, str(entry)))
        if not cache.is_relative_to(self.root):
            cache.mkdir(parents=True, exist_ok=True)
            mounts.append(sandboxes.Mount(cache, str(cache), writable=True))
        return mounts


def left_out(venv: Path) -> tuple[str, ...]:
    """The optional additions a built venv's build left out (its :data:`LEFT_OUT` file)."""
    try:
        text = (venv / LEFT_OUT).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _raise_fault(
    label: str,
    code: int,
    log_path: Path,
    start: int,
    proxy: index_proxy.IndexProxy,
    probe: list[str],
) -> None:
    """Raise the infrastructure fault a failed step is, if it is one: the sandbox did not start
    it (SandboxRefused: its output looks like a launcher's refusal, which a ``setup.py`` may
    print itself, and the same launchers, mounts and user refuse ``true``, ``probe``, now),
    or the package index could not be reached (IndexUnreachable)."""
    if refused_run(code, log_path, start) is not None:
        problem = sandboxes.attempt(probe)
        if problem is not None:
            raise SandboxRefused(
                f"the sandbox did not start environment step '{label}': {problem} (it "
                "refuses `true` too)",
                log=str(log_path),
            )
    if proxy.unreachable:
        hosts = ", ".join(sorted(set(proxy.unreachable)))
        raise index_proxy.IndexUnreachable(
            f"environment step '{label}' failed with exit code {code}, and the package index "
            f"could not be reached: {hosts}",
            log=str(log_path),
        )


@dataclasses.dataclass(frozen=True)
class _Build:
    """One environment build: what it builds, where, with which installer and sandbox."""

    spec: EnvironmentSpec
    directory: Path
    installer: str
    base: str
    uv: str | None
    bwrap: str | None
    log_path: Path


_GIT_SAFE_DIRECTORIES = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "safe.directory",
    "GIT_CONFIG_VALUE_0": "*",
}
"""What a build run as an unprivileged uid needs for git (setuptools-scm's version, say) to
read its checkout, whose ``.git`` names a worktree folder of the mirror root owns: git refuses
a repository another user owns unless told it is safe (command-line scope: the environment)."""
_GIT_SAFE_CONFIG = "[safe]\n\tdirectory = *\n"
"""The same in the build's own ``$HOME/.gitconfig``: setuptools-scm runs git with every
``GIT_*`` variable removed (its ``no_git_env``), so a setuptools-scm version of a root builder's
checkout was missing and the build failed (astropy 5.0's, for one)."""


def _shared_umask(argv: list[str]) -> list[str]:
    """``argv`` with umask ``SHARED_UMASK``: what it adds to uv's cache, every build may use."""
    umask = f"umask {sandbox_user.SHARED_UMASK:03o}"
    return ["/bin/sh", "-c", f'{umask} && exec "$0" "$@"', *argv]


def _run_in_group(
    argv: list[str], cwd: Path, env: Mapping[str, str], log: IO[str], timeout_s: float
) -> int | None:
    """The exit code of ``argv`` (its output to ``log``), or None when it ran past
    ``timeout_s``; either way its process group is SIGKILLed (with bubblewrap the PID
    namespace ends with its first process, so nothing of the build outlives it)."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        return process.wait(timeout=max(timeout_s, 0.001))
    except subprocess.TimeoutExpired:
        return None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


BUILD_ENV_ALLOWED = (
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NIX_SSL_CERT_FILE",
    "GIT_SSL_CAINFO", "PIP_CERT", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
    "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT", "PIP_DISABLE_PIP_VERSION_CHECK",
    "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_FIND_LINKS",
    "UV_CACHE_DIR", "UV_NATIVE_TLS", "UV_HTTP_TIMEOUT", "UV_INSECURE_HOST",
)  # fmt: skip
"""What an environment build keeps of the builder's environment (plus ``LC_*``): the path,
locale, proxy, CA and package-index settings. Never a credential: see :func:`is_credential`."""
_CREDENTIAL_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH")
_CREDENTIAL_PREFIXES = ("HF_", "GITHUB_", "HUGGINGFACE")


def is_credential(name: str) -> bool:
    """A variable an environment build never gets, whatever the allow-list or spec says."""
    upper = name.upper()
    return upper.startswith(_CREDENTIAL_PREFIXES) or any(w in upper for w in _CREDENTIAL_WORDS)


def _build_env(spec: EnvironmentSpec, venv: Path, home: Path, cache: Path) -> dict[str, str]:
    """The allow-listed part of the builder's environment (never a credential), the spec's
    ``env``, and the build's own venv, HOME/TMPDIR (``home``) and uv cache (``cache`` unless
    UV_CACHE_DIR is set)."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if (name in BUILD_ENV_ALLOWED or name.startswith("LC_")) and not is_credential(name)
    }
    env = {"UV_CACHE_DIR": str(cache), **kept, **dict(spec.env)}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv}/bin{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["HOME"] = env["TMPDIR"] = str(home)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def _missing_system_packages(packages: tuple[str, ...]) -> list[str]:
    if not packages:
        return []
    if shutil.which("dpkg-query") is None:
        return list(packages)
    missing = []
    for package in packages:
        completed = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
        )
        if "install ok installed" not in completed.stdout:
            missing.append(package)
    return missing


def merge_env(base: Mapping[str, str], spec: EnvironmentSpec) -> dict[str, str]:
    """``base`` with the spec's environment variables on top (what a test run sees)."""
    return {**base, **dict(spec.env)}
