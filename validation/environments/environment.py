"""Environments: what defines one (EnvironmentSpec), its install steps, and local uv-made venvs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from builder.core.errors import SwtError
from builder.core.files import atomic_write_text, canonical_json
from builder.core.repos import file_lock, worktree
from validation.environments.interpreters import Interpreters, find_uv

COMPLETE = "swt-environment.json"
"""Written last, atomically: an environment without it is unfinished and is rebuilt."""

KEY_VERSION = 5
"""Bump when the meaning of the install steps changes: every environment is rebuilt."""

UNDATED_BUILD_TOOLS = ("setuptools", "wheel", "pip")
"""Build tooling is never dated: setuptools of 2019 cannot even import on Python 3.9."""
RUNTIME_SETUPTOOLS = "setuptools<81"
"""Installed unless a spec names setuptools: what ``python -m venv`` seeded for years, and
older projects import ``pkg_resources`` (removed in setuptools 81) without declaring it."""
TYPEGUARD_SETUPTOOLS = ("2024-07-17", "setuptools<71")
"""A dated environment of before setuptools 71 (released 2024-07-17) gets a setuptools older than
it: 71 vendors typeguard, whose pytest plugin (found once ``pkg_resources`` puts the vendored
packages on the path) crashes the pytest of earlier eras (pytest 5: ``addini(type="string")``)."""
_FAR_FUTURE = "2100-01-01T00:00:00Z"


class EnvironmentBuildError(SwtError, RuntimeError):
    """Building an environment failed; ``log_path`` holds the installer's output."""

    def __init__(self, message: str, log_path: Path) -> None:
        super().__init__(f"{message} (log: {log_path})")
        self.log_path = log_path


_NOT_BUILT = ("label", "runner", "test_command")
"""EnvironmentSpec fields that do not define what is built (left out of its key)."""


@dataclasses.dataclass(frozen=True)
class EnvironmentSpec:
    """Everything that defines an environment; :meth:`key` hashes it and names the environment.

    ``packages`` are requirement strings installed by name; an exact pin (``name==x``) wins over
    the dated resolution. ``requirements`` are requirement files and ``extras`` the project's
    extras, both read from the project at ``project_commit``. ``exclude_newer`` (ISO date) makes
    everything not pinned resolve as of that date. ``runner``/``test_command`` say how tests run:
    they are carried here but are not part of the key (they do not change what is installed).
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

    def __post_init__(self) -> None:
        if self.install not in ("project", "none"):
            raise ValueError(f"install must be 'project' or 'none', not {self.install!r}")

    def key(self) -> str:
        """Content hash of everything that defines the environment (not where things live)."""
        material = dataclasses.asdict(self)
        for field in _NOT_BUILT:
            material.pop(field)
        material["project"] = self.project is not None
        material["key_version"] = KEY_VERSION
        return hashlib.sha256(canonical_json(material).encode()).hexdigest()[:24]

    @property
    def pins(self) -> tuple[str, ...]:
        """Packages pinned exactly (``==``/``===``): they are installed undated, and win."""
        return tuple(p for p in self.packages if _is_pin(p))

    @property
    def unpinned(self) -> tuple[str, ...]:
        return tuple(p for p in self.packages if not _is_pin(p))

    def describe(self) -> dict[str, object]:
        """A JSON-able description (what run metadata and the environment's marker record)."""
        material = dataclasses.asdict(self)
        material["project"] = str(self.project) if self.project else None
        material["env"] = dict(self.env)
        material["key"] = self.key()
        return material


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


def _names_setuptools(packages: tuple[str, ...]) -> bool:
    for text in packages:
        try:
            if Requirement(text).name.lower() == "setuptools":
                return True
        except InvalidRequirement:
            continue
    return False


def install_steps(
    spec: EnvironmentSpec,
    *,
    base_python: str,
    venv: str,
    project_dir: str | None,
    installer: str = "uv",
    uv: str = "uv",
) -> list[InstallStep]:
    """The commands that build ``spec`` into ``venv`` (paths as the executing side sees them).

    The one place a spec becomes install commands: the local backend runs them on this machine,
    the Docker backend in image layers. System packages come first (``apt-get``), then the venv,
    the pre-install commands, the dated resolution of the project and everything not pinned, and
    last the exact pins (undated, so a pin newer than the environment's date still wins).
    """
    steps: list[InstallStep] = []
    if spec.system_packages:
        steps.append(
            InstallStep(
                "system packages",
                ("apt-get", "install", "-y", "--no-install-recommends", *spec.system_packages),
            )
        )
    python = f"{venv}/bin/python"
    if installer == "uv":
        steps.append(InstallStep("venv", (uv, "venv", "--quiet", "--python", base_python, venv)))
        pip = (uv, "pip", "install", "--python", python, "--link-mode", "hardlink")
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
    if project_dir is not None and spec.install == "project" and not spec.install_command:
        extras = f"[{','.join(spec.extras)}]" if spec.extras else ""
        targets.append(f"{project_dir}{extras}")
    dated = bool(spec.exclude_newer) and installer == "uv"
    seed = [] if _names_setuptools(spec.packages) else [_runtime_setuptools(spec, dated)]
    first = [*seed, *spec.unpinned, *targets] if dated else [*seed, *spec.packages, *targets]
    if first:
        date: tuple[str, ...] = ()
        if dated:
            date = ("--exclude-newer", spec.exclude_newer)
            for tool in UNDATED_BUILD_TOOLS:
                date += ("--exclude-newer-package", f"{tool}={_FAR_FUTURE}")
        steps.append(InstallStep("dependencies", (*pip, *date, *first)))
    if dated and spec.pins:
        steps.append(InstallStep("pins", (*pip, *spec.pins)))
    if spec.install_command:
        steps.append(
            InstallStep("install command", ("sh", "-c", spec.install_command), in_project=True)
        )
    return steps


def _runtime_setuptools(spec: EnvironmentSpec, dated: bool) -> str:
    """The setuptools installed with a spec that names none (see TYPEGUARD_SETUPTOOLS)."""
    released, older = TYPEGUARD_SETUPTOOLS
    return older if dated and spec.exclude_newer[:10] < released else RUNTIME_SETUPTOOLS


class LocalEnvironments:
    """Builds and reuses venvs under ``root/<key>``; safe across threads and processes.

    Packages come from uv's cache as hardlinks (same filesystem), so environments that share
    packages share their files; an environment is built once per key and reused by every run.
    """

    def __init__(
        self,
        root: Path,
        interpreters: Interpreters | None = None,
        installer: str = "auto",
    ) -> None:
        self.root = Path(root)
        self.interpreters = interpreters or Interpreters()
        self.installer = installer

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
            atomic_write_text(directory / COMPLETE, json.dumps(record, sort_keys=True))
        return interpreter

    def _build(self, spec: EnvironmentSpec, directory: Path, log_path: Path) -> str:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        uv = find_uv()
        installer = self.installer if self.installer != "auto" else ("uv" if uv else "pip")
        if installer == "uv" and uv is None:
            raise EnvironmentBuildError("installer uv requested but uv is not installed", log_path)
        base = self.interpreters.find(spec.python)
        if base is None:
            known = ", ".join(sorted(self.interpreters.available())) or "none"
            log_path.write_text(f"no Python {spec.python} found (found: {known})\n")
            raise EnvironmentBuildError(f"no Python {spec.python} interpreter found", log_path)
        missing = _missing_system_packages(spec.system_packages)
        if missing:
            log_path.write_text(f"missing system packages: {' '.join(missing)}\n")
            raise EnvironmentBuildError(
                f"system packages not installed (the local backend does not install them): "
                f"{', '.join(missing)}",
                log_path,
            )
        checkout = self.root / f"{spec.key()}.project"
        with log_path.open("w") as log:
            if spec.project is None:
                self._run_steps(spec, directory, None, str(base), installer, uv, log, log_path)
            else:
                with worktree(spec.project, spec.project_commit, checkout) as tree:
                    self._run_steps(spec, directory, tree, str(base), installer, uv, log, log_path)
        return installer

    def _run_steps(self, spec, directory, tree, base, installer, uv, log, log_path) -> None:
        steps = install_steps(
            spec,
            base_python=base,
            venv=str(directory),
            project_dir=str(tree) if tree else None,
            installer=installer,
            uv=uv or "uv",
        )
        env = _build_env(spec, directory)
        for step in steps:
            if step.label == "system packages":
                continue  # checked above; the local backend never runs apt-get
            log.write(f"$ {' '.join(step.argv)}\n")
            log.flush()
            completed = subprocess.run(
                step.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=tree if step.in_project else None,
                env=env,
            )
            if completed.returncode != 0:
                raise EnvironmentBuildError(
                    f"environment step '{step.label}' failed with exit code {completed.returncode}",
                    log_path,
                )


def _build_env(spec: EnvironmentSpec, venv: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.update(dict(spec.env))
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv}/bin{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.pop("PYTHONPATH", None)
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
