"""Environment spec files (TOML, schema-validated): per repository, entries per version range."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

import tomli_w
import tomllib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from builder.core.errors import SwtError
from builder.core.files import atomic_write_text, inside
from validation.environments.versioning import DEFAULT_RULES, VersionRule

SPEC_SCHEMA_VERSION = 1
RunnerKind = Literal["pytest", "unittest", "django", "sympy"]
"""The test runners a spec may name: the one list of their names. validation/runs/runners.py
registers an implementation under each (tests/validation/runs/test_runners.py checks)."""
RUNNER_KINDS: tuple[RunnerKind, ...] = get_args(RunnerKind)


class SpecError(SwtError, ValueError):
    """A spec file is invalid (the message names the file and the field) or matches nothing."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Settings(_Model):
    """How one environment is built and its tests run: the defaults here, overlaid by a spec's
    ``[defaults]``, then by the entry of the version (see ``RepoSpec.settings``).

    A layer overrides only the fields it sets (pydantic's ``model_fields_set``), so setting a
    field to its default value still overrides the layer below."""

    python: str | None = Field(
        default=None, pattern=r"^3\.\d+(\.\d+)?$", description="unset: the era's Python"
    )
    system_packages: list[str] = Field(
        default_factory=list,
        description="apt packages (Docker installs them; local checks they are there)",
    )
    pre_install: list[str] = Field(
        default_factory=list, description="shell commands run before installing"
    )
    packages: list[str] = Field(default_factory=list, description="requirement strings; == pins")
    optional_packages: list[str] = Field(
        default_factory=list,
        description="requirements without spaces or URLs, installed after the stack when they "
        "can be (constrained by it), left out and named otherwise (never failing the "
        "environment); an inferred spec's: what its CI installs from a VCS URL, by name",
    )
    url_packages: dict[str, str] = Field(
        default_factory=dict,
        description="packages the project's CI or a requirement file installs from a URL (a "
        "VCS URL, NAME @ URL), name -> what it names: builds reach only the package index, so "
        "the index's release of the name stands in (listed in optional_packages), and every "
        "record's run_metadata.index_stand_ins names it; an inferred spec fills it",
    )
    requirements: list[str] = Field(default_factory=list, description="files at the env commit")
    extras: list[str] = Field(default_factory=list, description="the project's extras to install")
    install: Literal["project", "none"] = Field(
        default="project",
        description="project: install the project at the environment commit; none: deps only",
    )
    install_command: str = Field(
        default="", description="a shell command run in the project checkout instead"
    )
    runner: RunnerKind = Field(
        default="pytest", description="which runner and result parser run the tests"
    )
    test_command: list[str] | None = Field(
        default=None,
        min_length=1,
        description="argv that starts the runner (replaces e.g. python -m pytest); the runner "
        "appends its report options and the test files; unset: the runner's own",
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="environment variables for builds and test runs"
    )
    dated: bool | None = Field(
        default=None,
        description="resolve unpinned deps as of the date; unset: the configuration's `dated`",
    )
    test_imports: bool | None = Field(
        default=None,
        description="install what the touched test files import and the environment lacks "
        "(optional packages behind importorskip too); unset: the configuration's "
        "validation.test_imports",
    )
    pins_override: bool | None = Field(
        default=None,
        description="true: exact pins override every other requirement on their package (a "
        "spec author's choice); false: they are requirements the rest resolves around (the "
        "project's own pins, which an inferred spec says); unset: true",
    )
    services: list[Literal["httpbin"]] | None = Field(
        default=None,
        description="local stand-ins for network services each test run starts on its own "
        "loopback and stops after (httpbin: the httpbin package's app, its URL in HTTPBIN_URL); "
        "unset: those the touched test files use (HTTPBIN_URL); [] none",
    )
    network: bool = Field(
        default=False,
        description="true: test runs may use the network (less reproducible: results then "
        "depend on what is online; for repositories whose maintainers accept that)",
    )

    @field_validator("optional_packages")
    @classmethod
    def _plain_requirements(cls, value: list[str]) -> list[str]:
        for text in value:  # each one word of the optional step's shell list
            try:
                requirement = Requirement(text)
            except InvalidRequirement as error:
                raise ValueError(f"not a requirement: {text!r} ({error})") from error
            if requirement.url or any(c.isspace() or c in "'\"" for c in text):
                raise ValueError(f"{text!r}: an optional package is a name with its bounds, "
                                 "without spaces, quotes or a URL")  # fmt: skip
        return value

    @field_validator("test_command")
    @classmethod
    def _starts_with_python(cls, value: list[str] | None) -> list[str] | None:
        if value and value[0] != "python":
            raise ValueError(
                f"test_command must start with python (the environment's), not {value[0]!r}: "
                'e.g. ["python", "-m", "pytest"]'
            )
        return value

    def given(self) -> dict[str, Any]:
        """The settings this layer sets itself (what a spec file spells out)."""
        return {
            name: getattr(self, name)
            for name in Settings.model_fields
            if name in self.model_fields_set and getattr(self, name) is not None
        }


class Entry(Settings):
    """Settings for the versions matching ``versions`` (a PEP 440 specifier; "" = all)."""

    versions: str = Field(
        default="", description="PEP 440 specifier of the versions this entry is for; empty: all"
    )

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
    digits: int = Field(
        default=2,
        ge=1,
        le=3,
        description="how many release numbers the version keeps: 1.4.2 → 1.4 with 2",
    )
    setup_commits: dict[str, str] = Field(
        default_factory=dict, description="version → environment_setup_commit"
    )


class RepoSpec(_Model):
    """One repository's environment spec file."""

    schema_version: int = Field(
        default=SPEC_SCHEMA_VERSION, description="the spec format's version"
    )
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$", description="owner/name")
    note: str = Field(default="", description="free text for maintainers")
    version: VersionSection = Field(
        default_factory=VersionSection,
        description="How an instance's version is read at its base commit (first rule that hits).",
    )
    defaults: Settings = Field(
        default_factory=Settings, description="Settings of every entry; an entry's own fields win."
    )
    environments: list[Entry] = Field(
        default_factory=lambda: [Entry()],
        description="Entries per version range (PEP 440); the first match wins.",
    )

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

    def settings(self, version: str) -> Settings:
        """The entry for ``version`` overlaid on the defaults (fields the entry sets win)."""
        return Settings.model_validate({**self.defaults.given(), **self.entry(version).given()})

    def file_data(self) -> dict[str, Any]:
        """The spec as its file spells it: settings layers keep only the fields they set."""
        data = self.model_dump(mode="json", exclude_none=True, exclude={"defaults", "environments"})
        data["defaults"] = _layer_data(self.defaults)
        data["environments"] = [
            {**_layer_data(entry), "versions": entry.versions} for entry in self.environments
        ]
        return data

    def to_toml(self) -> str:
        return tomli_w.dumps(self.file_data())


def _layer_data(layer: Settings) -> dict[str, Any]:
    return layer.model_dump(mode="json", exclude_unset=True, exclude_none=True)


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
        canonical = json.dumps(spec.file_data(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def write_spec(spec: RepoSpec, directory: Path) -> Path:
    """Write ``spec`` as ``directory/owner__name.toml`` (for review) and return the path."""
    path = inside(Path(directory), spec_file_name(spec.repo))
    atomic_write_text(path, spec.to_toml())
    return path
