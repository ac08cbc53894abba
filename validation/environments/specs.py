"""Environment spec files (TOML, schema-validated): per repository, entries per version range."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import tomli_w
import tomllib
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from builder.core.config import ValidationConfig
from builder.core.records import Candidate
from builder.core.store import atomic_write_text
from validation.environments.environment import KEY_VERSION, EnvironmentSpec
from validation.environments.interpreters import era_python
from validation.environments.versioning import (
    DEFAULT_RULES,
    VersionRule,
    commit_date,
    detect_version,
    version_tag_commit,
)

SPEC_SCHEMA_VERSION = 1
RUNNER_KINDS = ("pytest", "unittest", "django", "sympy")
"""Runner kinds a spec may name; the runner registry (validation/runners.py) executes them."""


class SpecError(ValueError):
    """A spec file is invalid (the message names the file and the field) or matches nothing."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Settings(_Model):
    """Fields an entry sets; unset (None) fields fall back to ``[defaults]``, then built-ins."""

    python: str | None = Field(default=None, pattern=r"^3\.\d+(\.\d+)?$")
    system_packages: list[str] | None = None
    pre_install: list[str] | None = None
    packages: list[str] | None = Field(default=None, description="requirement strings; == pins")
    requirements: list[str] | None = Field(default=None, description="files at the env commit")
    extras: list[str] | None = None
    install: Literal["project", "none"] | None = None
    install_command: str | None = None
    runner: Literal["pytest", "unittest", "django", "sympy"] | None = None
    test_command: list[str] | None = Field(
        default=None,
        min_length=1,
        description="argv that starts the runner (replaces e.g. python -m pytest); the runner "
        "appends its report options and the test files",
    )
    env: dict[str, str] | None = None
    dated: bool | None = Field(default=None, description="resolve unpinned deps as of the date")

    @field_validator("test_command")
    @classmethod
    def _starts_with_python(cls, value: list[str] | None) -> list[str] | None:
        if value and value[0] != "python":
            raise ValueError(
                f"test_command must start with python (the environment's), not {value[0]!r}: "
                'e.g. ["python", "-m", "pytest"]'
            )
        return value


class Entry(Settings):
    """Settings for the versions matching ``versions`` (a PEP 440 specifier; "" = all)."""

    versions: str = ""

    @field_validator("versions")
    @classmethod
    def _specifier(cls, value: str) -> str:
        try:
            SpecifierSet(value)
        except InvalidSpecifier as error:
            raise ValueError(f"not a version specifier: {value!r} ({error})") from error
        return value

    def matches(self, version: str) -> bool:
        if not self.versions:
            return True
        try:
            return SpecifierSet(self.versions).contains(Version(version), prereleases=True)
        except InvalidVersion:
            return False


class VersionSection(_Model):
    rules: list[VersionRule] = Field(default_factory=lambda: list(DEFAULT_RULES))
    digits: int = Field(default=2, ge=1, le=3)
    setup_commits: dict[str, str] = Field(
        default_factory=dict, description="version → environment_setup_commit"
    )


class RepoSpec(_Model):
    """One repository's environment spec file."""

    schema_version: int = SPEC_SCHEMA_VERSION
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    note: str = ""
    version: VersionSection = Field(default_factory=VersionSection)
    defaults: Settings = Field(default_factory=Settings)
    environments: list[Entry] = Field(default_factory=lambda: [Entry()])

    @field_validator("schema_version")
    @classmethod
    def _known(cls, value: int) -> int:
        if value != SPEC_SCHEMA_VERSION:
            raise ValueError(f"schema_version {value} is not {SPEC_SCHEMA_VERSION}")
        return value

    def entry(self, version: str) -> Entry:
        """The first entry whose range holds ``version``."""
        for entry in self.environments:
            if entry.matches(version):
                return entry
        ranges = ", ".join(e.versions or "*" for e in self.environments)
        raise SpecError(f"{self.repo}: no environment entry for version {version} ({ranges})")

    def settings(self, version: str) -> dict[str, Any]:
        """The entry for ``version`` merged over the defaults (entry fields win)."""
        merged = self.defaults.model_dump(exclude_none=True)
        entry = self.entry(version).model_dump(exclude_none=True)
        entry.pop("versions", None)
        merged.update(entry)
        return merged

    def to_toml(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True)
        return tomli_w.dumps(data)


def load_spec(path: Path) -> RepoSpec:
    """Read and validate one spec file; SpecError names the file and what is wrong."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {error}") from error
    try:
        return RepoSpec.model_validate(data)
    except ValidationError as error:
        raise SpecError(f"{path}: invalid environment spec:\n{error}") from error


def spec_file_name(repo: str) -> str:
    return repo.replace("/", "__") + ".toml"


class SpecLibrary:
    """Spec files found in directories (later directories win), then named files, by repository."""

    def __init__(self, directories: Iterable[Path], files: Iterable[Path] = ()) -> None:
        self.directories = [Path(d) for d in directories]
        self.specs: dict[str, RepoSpec] = {}
        self.files: dict[str, Path] = {}
        for directory in self.directories:
            if not directory.is_dir():
                raise SpecError(f"spec directory {directory} does not exist")
            for path in sorted(directory.glob("*.toml")):
                self._add(path)
        for path in map(Path, files):
            if not path.is_file():
                raise SpecError(f"spec file {path} does not exist")
            self._add(path)

    def _add(self, path: Path) -> None:
        spec = load_spec(path)
        self.specs[spec.repo] = spec
        self.files[spec.repo] = path

    def get(self, repo: str) -> RepoSpec | None:
        return self.specs.get(repo)

    def digest(self, repo: str) -> str:
        """Hash of ``repo``'s spec ("" when it has none): part of that repo's result keys only,
        so editing one repository's spec recomputes that repository alone."""
        spec = self.specs.get(repo)
        if spec is None:
            return ""
        return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Resolution:
    """The environment chosen for one candidate and why."""

    spec: EnvironmentSpec
    version: str
    version_source: str  # "record", or the rule kind that detected it
    detected_version: str | None
    environment_commit: str
    spec_source: str  # the spec file, or "inferred"

    def metadata(self) -> dict[str, str]:
        """What the instance's run_metadata records about its environment."""
        return {
            "version": self.version,
            "version_source": self.version_source,
            "detected_version": self.detected_version or "",
            "environment": self.spec.key(),
            "environment_commit": self.environment_commit,
            "environment_spec": self.spec_source,
            "python": self.spec.python,
            "exclude_newer": self.spec.exclude_newer,
            "runner": self.spec.runner,
        }


def resolve(
    repo_spec: RepoSpec,
    *,
    mirror: Path,
    base_commit: str,
    record_version: str = "",
    record_setup_commit: str = "",
    available_pythons: Iterable[str] = (),
    dated_default: bool = True,
    era_lag_days: int = 365,
    spec_source: str = "",
    requires_python: str | None = None,
) -> Resolution:
    """The EnvironmentSpec of one candidate: its version, entry, environment commit, Python, date.

    The record's own version wins (SWE-bench records carry one); otherwise the spec's rules
    detect it at the base commit. The environment commit is the spec's commit for the version,
    else the record's, else the version's first release tag, else the base commit: instances of
    one repo@version then share it. Unset Python: the era's (see ``era_python``).
    """
    detected = detect_version(
        mirror, base_commit, repo_spec.version.rules, repo_spec.version.digits
    )
    if record_version:
        version, source = record_version, "record"
    elif detected is not None:
        version, source = detected
    else:
        version, source = "", "none"
    settings = repo_spec.settings(version)
    setup_commit = (
        repo_spec.version.setup_commits.get(version)
        or record_setup_commit
        or (version_tag_commit(mirror, base_commit, version) if version else None)
        or base_commit
    )
    date = commit_date(mirror, setup_commit)
    python = settings.get("python")
    if python is None:
        if requires_python is None:
            from validation.environments.inference import requires_python_at

            requires_python = requires_python_at(mirror, setup_commit)
        python = era_python(
            date.date(),
            available_pythons,
            requires_python=requires_python,
            lag_days=era_lag_days,
        )
        if python is None:
            raise SpecError(
                f"{repo_spec.repo}@{version}: no Python available for the era of {date:%Y-%m-%d}"
            )
    dated = settings.get("dated", dated_default)
    spec = EnvironmentSpec(
        python=python,
        packages=tuple(settings.get("packages", ())),
        project=Path(mirror),
        project_commit=setup_commit,
        requirements=tuple(settings.get("requirements", ())),
        extras=tuple(settings.get("extras", ())),
        install=settings.get("install", "project"),
        install_command=settings.get("install_command", ""),
        pre_install=tuple(settings.get("pre_install", ())),
        system_packages=tuple(settings.get("system_packages", ())),
        exclude_newer=_iso(date) if dated else "",
        env=tuple(sorted(settings.get("env", {}).items())),
        runner=settings.get("runner", "pytest"),
        test_command=tuple(settings.get("test_command", ())),
        label=f"{repo_spec.repo}@{version}",
    )
    return Resolution(
        spec=spec,
        version=version,
        version_source=source,
        detected_version=detected[0] if detected else None,
        environment_commit=setup_commit,
        spec_source=spec_source,
    )


def _inference_version() -> int:
    from validation.environments.inference import INFERENCE_VERSION

    return INFERENCE_VERSION


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_spec(spec: RepoSpec, directory: Path) -> Path:
    """Write ``spec`` as ``directory/owner__name.toml`` (for review) and return the path."""
    path = Path(directory) / spec_file_name(spec.repo)
    atomic_write_text(path, spec.to_toml())
    return path


BUNDLED_SPECS = Path(__file__).resolve().parents[2] / "recipes" / "environments"
"""The environment specs shipped with the toolkit (one TOML per repository)."""


class EnvironmentResolver:
    """Chooses each candidate's environment: its repository's spec file, else an inferred spec.

    An inferred spec is written to ``inferred_dir/owner__name.toml`` so a maintainer can review
    it, pin it and move it into a spec directory.
    """

    def __init__(
        self,
        settings: ValidationConfig,
        inferred_dir: Path,
        available_pythons: Callable[[], Iterable[str]],
    ) -> None:
        self.settings = settings
        directories = [BUNDLED_SPECS] if settings.bundled_specs and BUNDLED_SPECS.is_dir() else []
        self.library = SpecLibrary(
            [*directories, *(Path(d) for d in settings.spec_dirs)], settings.spec_files
        )
        self.inferred_dir = Path(inferred_dir)
        self.available_pythons = available_pythons
        self._inferred: dict[tuple[str, str], RepoSpec] = {}
        self._lock = threading.Lock()

    def fingerprint(self) -> dict[str, Any]:
        """Settings every repository's environments depend on (see ``spec_digest`` for the rest)."""
        return {
            "install_steps_version": KEY_VERSION,
            "inference_version": _inference_version(),
            "dated": self.settings.dated,
            "era_lag_days": self.settings.era_lag_days,
            "inferred_extra_packages": list(self.settings.packages),
        }

    def spec_digest(self, repo: str) -> str:
        """What of the spec files a result of ``repo`` depends on: its own spec, if any."""
        return self.library.digest(repo)

    def resolve(self, record: Candidate, mirror: Path) -> Resolution:
        """The candidate's environment; SpecError when its spec has no entry for its version."""
        repo_spec = self.library.get(record.repo)
        source = str(self.library.files.get(record.repo, ""))
        if repo_spec is None:
            commit = record.environment_setup_commit or record.base_commit
            repo_spec = self._infer(record.repo, mirror, commit)
            source = "inferred"
        return resolve(
            repo_spec,
            mirror=mirror,
            base_commit=record.base_commit,
            record_version=record.version,
            record_setup_commit=record.environment_setup_commit,
            available_pythons=list(self.available_pythons()),
            dated_default=self.settings.dated,
            era_lag_days=self.settings.era_lag_days,
            spec_source=source,
        )

    def _infer(self, repo: str, mirror: Path, commit: str) -> RepoSpec:
        from validation.environments.inference import infer_spec

        with self._lock:
            cached = self._inferred.get((repo, commit))
            if cached is not None:
                return cached
            spec = infer_spec(repo, mirror, commit, extra_packages=self.settings.packages)
            if not spec.defaults.python and not self.settings.dated:
                spec = spec.model_copy(
                    update={
                        "defaults": spec.defaults.model_copy(
                            update={"python": self.settings.python}
                        )
                    }
                )
            self._inferred[(repo, commit)] = spec
            self.inferred_dir.mkdir(parents=True, exist_ok=True)
            write_spec(spec, self.inferred_dir)
            return spec
