"""Which environment each candidate gets: its repository's spec (or an inferred one), resolved
to one EnvironmentSpec by version, environment commit, Python and date."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import tomllib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from builder.core.config import PythonChoice, ValidationConfig
from builder.core.records import Candidate
from validation.environments import (
    base_requirements,
    generated,
    services,
    stdlib_needs,
    version_skips,
)
from validation.environments.environment import (
    BUILD_TOOLS,
    KEY_VERSION,
    TOOL_DEPENDENCIES,
    EnvironmentSpec,
    resolution_date,
)
from validation.environments.inference import (
    INFERENCE_VERSION,
    infer_spec,
    install_requirements,
    requires_python_at,
)
from validation.environments.interpreters import FIRST_MAINTENANCE_RELEASES, era_python
from validation.environments.project_pythons import (
    TESTED,
    project_python,
    project_pythons,
)
from validation.environments.reference import (
    LABEL,
    READER_VERSION,
    ReferenceEnvironment,
    ReferenceFileError,
    file_digest,
    files_root,
    read_reference,
    reference_file,
)
from validation.environments.setup_requires import legacy_setup_requires
from validation.environments.specs import (
    Entry,
    RepoSpec,
    SpecError,
    SpecLibrary,
    VersionSection,
    write_spec,
)
from validation.environments.versioning import (
    commit_date,
    detect_version,
    show,
    version_tag_commit,
)

RESOLUTION_VERSION = 10
"""Bump when :func:`resolve` chooses differently (a Python, a date): validation results are
recomputed, and only the environments whose spec changed are rebuilt (their keys change).
2: a Python the project's CI tested keeps the environment's own date. 3: an inferred spec's
pins are requirements, not overrides. 4: only once its first maintenance release is out.
5: the median tested Python by default; an inferred spec's exact pins are floors on a Python
its CI did not test. 6: a pinned build tool the project's own build excludes is no build
constraint (``free_build_tools``); what the machine lacks to build is its fault, not a
verdict (results stored as ``environment_failed`` for it are recomputed). 7: a reference
environment gets no optional package its file lacks. 8: a ``requires-python`` bound on a patch
release (``>=3.7.2``) admits that minor (``interpreters.minor_allowed``). 9: only a Python that
has the standard-library modules the golden tests start to import (``stdlib_needs``). 10: when
the one chosen skips a golden test with a skip on the Python version that another runs, the
same rule among those that run the most of them (``version_skips``)."""
INFERRED = "inferred"
"""The ``spec_source`` of a spec inferred from the project's files."""


@dataclasses.dataclass(frozen=True)
class Resolution:
    """The environment chosen for one candidate and why."""

    spec: EnvironmentSpec
    version: str
    version_source: str  # "record", or the rule kind that detected it
    detected_version: str | None
    environment_commit: str
    spec_source: str  # the spec file's label (see ``spec_label``), or INFERRED
    python_source: str = "spec"  # "spec", a source of project_pythons (e.g. "tox envlist"), "era"
    base_requirements: tuple[str, ...] = ()  # the base commit's, added to the spec's packages
    relaxed_pins: tuple[str, ...] = ()  # the project's exact pins made floors (``relax_pins``)
    services_source: str = ""  # "spec" or "inferred" when the runs start services
    # optional plugins added for the fixtures the touched tests use, with the files using them
    fixture_plugins: tuple[tuple[str, tuple[str, ...]], ...] = ()
    reference: ReferenceEnvironment | None = None  # the reference's own environment, if used
    # packages the project installs from a URL, for which the index's release stands in
    url_packages: tuple[tuple[str, str], ...] = ()

    def metadata(self) -> dict[str, str]:
        """What the instance's run_metadata records about its environment."""
        added = {"base_requirements": json.dumps(list(self.base_requirements))}
        relaxed = {"relaxed_pins": json.dumps(list(self.relaxed_pins))}
        started = {"services": ",".join(self.spec.services), "services_from": self.services_source}
        plugins = {"fixture_plugins": json.dumps({p: list(f) for p, f in self.fixture_plugins})}
        freed = {"free_build_tools": json.dumps(list(self.spec.free_build_tools))}
        return {
            **(added if self.base_requirements else {}),
            **(plugins if self.fixture_plugins else {}),
            **(freed if self.spec.free_build_tools else {}),
            **(relaxed if self.relaxed_pins else {}),
            **(started if self.spec.services else {}),
            **(self.reference.metadata() if self.reference else {}),
            "version": self.version,
            "version_source": self.version_source,
            "detected_version": self.detected_version or "",
            "environment": self.spec.key(),
            "environment_commit": self.environment_commit,
            "environment_spec": self.spec_source,
            "python": self.spec.python,
            "python_source": self.python_source,
            "exclude_newer": self.spec.exclude_newer,
            "resolved_as_of": resolution_date(self.spec),
            "runner": self.spec.runner,
        }


def declared_tools(mirror: Path, commit: str) -> tuple[str, ...]:
    """The test tools' own dependencies (:data:`TOOL_DEPENDENCIES`) the project declares among
    its install requirements at ``commit``: the project is that tool (pytest declares pluggy),
    or uses them itself, and they take its date."""
    declared = set()
    for requirement in install_requirements(mirror, commit):
        try:
            declared.add(canonicalize_name(Requirement(requirement).name))
        except InvalidRequirement:
            continue
    return tuple(name for name in TOOL_DEPENDENCIES if name in declared)


def resolve(
    repo_spec: RepoSpec,
    *,
    mirror: Path,
    base_commit: str,
    record_version: str = "",
    record_setup_commit: str = "",
    available_pythons: Iterable[str] = (),
    dated_default: bool = True,
    resolve_as_of: str = "",
    era_lag_days: int = 365,
    python_choice: PythonChoice = "median",
    spec_source: str = "",
    requires_python: str | None = None,
    python: str | None = None,
    stdlib_modules: Iterable[str] = (),
    golden_skips: Callable[[], Sequence[version_skips.VersionSkip]] = tuple,
) -> Resolution:
    """The EnvironmentSpec of one candidate: its version, entry, environment commit, Python, date.

    The record's own version wins (SWE-bench records carry one); otherwise the spec's rules
    detect it at the base commit. The environment commit is the spec's commit for the version,
    else the record's, else the version's first release tag, else the base commit: instances of
    one repo@version then share it. Unset Python: the newest one the project's CI tested at
    the environment commit, else one its classifiers name (see ``project_python``), else the
    era's (see ``era_python``), among the available Pythons that have ``stdlib_modules`` (the
    standard-library modules the golden tests start to import: ``stdlib_needs``); when the one
    chosen so skips one of ``golden_skips()`` (golden tests with a skip on the Python version:
    ``version_skips``; read only when a Python is chosen here) that another runs, the same rule
    among those that run the most of them. ``python``:
    the caller's choice, over the spec's (a reference environment's, see
    :meth:`EnvironmentResolver.resolve`).
    """
    version, source, detected, setup_commit = environment_commit(
        repo_spec, mirror, base_commit, record_version, record_setup_commit
    )
    settings = repo_spec.settings(version)
    date = commit_date(mirror, setup_commit)
    tested: set[str] = set()
    if python is not None:
        python_source = "reference"
    else:
        python, python_source = settings.python, "spec"
    if python is None:
        if requires_python is None:
            requires_python = requires_python_at(mirror, setup_commit)
        available = stdlib_needs.able(available_pythons, stdlib_modules)
        named_pythons = project_pythons(mirror, setup_commit)
        tested = {p.version for p in named_pythons if p.source in TESTED}

        def choose(pythons: list[str]) -> tuple[str | None, str]:
            named = project_python(
                named_pythons,
                pythons,
                date=date.date(),
                requires_python=requires_python,
                choice=python_choice,
            )
            if named is not None:
                return named.version, named.source
            era = era_python(
                date.date(), pythons, requires_python=requires_python, lag_days=era_lag_days
            )
            return era, "era"

        python, python_source = choose(available)
        runs = version_skips.runnable(available, golden_skips()) if python else available
        if python and python not in runs:  # it skips a golden test another Python runs
            moved, moved_source = choose(runs)
            if moved is not None:
                python, python_source = moved, moved_source
        if python is None:
            raise SpecError(
                f"{repo_spec.repo}@{version}: no Python available for the era of {date:%Y-%m-%d}"
            )
    dated = dated_default if settings.dated is None else settings.dated
    packages, relaxed = tuple(settings.packages), ()
    if settings.pins_override is False and tested and python not in tested:
        # the project's own pins were made for Pythons its CI ran, none of which runs here
        packages, relaxed = relax_pins(packages)
    spec = EnvironmentSpec(
        python=python,
        packages=packages,
        project=Path(mirror),
        project_commit=setup_commit,
        requirements=tuple(settings.requirements),
        extras=tuple(settings.extras),
        install=settings.install,
        install_command=settings.install_command,
        pre_install=tuple(settings.pre_install),
        system_packages=tuple(settings.system_packages),
        exclude_newer=(f"{resolve_as_of}T00:00:00Z" if resolve_as_of else _iso(date))
        if dated
        else "",
        python_tested=dated
        and not resolve_as_of
        and _tested_as_stable(python_source, python, date),
        # unset: a spec author's pins win (an inferred spec says false: the project's own)
        pins_override=settings.pins_override is not False,
        env=tuple(sorted(settings.env.items())),
        runner=settings.runner,
        test_command=tuple(settings.test_command or ()),
        label=f"{repo_spec.repo}@{version}",
        setup_requires=(
            legacy_setup_requires(mirror, setup_commit)
            if settings.install == "project" and not settings.install_command
            else ()
        ),
        dated_tools=(
            declared_tools(mirror, setup_commit) if dated and settings.install == "project" else ()
        ),
        optional_packages=tuple(settings.optional_packages),
    )
    return Resolution(
        spec=spec,
        version=version,
        version_source=source,
        detected_version=detected[0] if detected else None,
        environment_commit=setup_commit,
        spec_source=spec_source,
        python_source=python_source,
        relaxed_pins=relaxed,
        url_packages=tuple(sorted(settings.url_packages.items())),
    )


def relax_pins(packages: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``packages`` with each exact pin (``name==1.2``, no wildcard) made a floor
    (``name>=1.2``), and the pins that were relaxed.

    A project's pins hold on the Pythons its CI ran. On another one (none of those is available
    here) an exact pin of its era may not run at all: requests 1.1 pins ``pytest==2.3.4``,
    tested on Python 3.3, and on 3.6 that pytest's assertion rewriting fails on every test file
    (``ast.Call`` changed in 3.5). As a floor it resolves, dated, to a version of the
    environment's date that runs on its Python."""
    out, relaxed = [], []
    for text in packages:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            out.append(text)
            continue
        clauses = list(requirement.specifier)
        if len(clauses) == 1 and clauses[0].operator == "==" and "*" not in clauses[0].version:
            requirement.specifier = SpecifierSet(f">={clauses[0].version}")
            out.append(str(requirement))
            relaxed.append(text)
        else:
            out.append(text)
    return tuple(out), tuple(relaxed)


def environment_commit(
    repo_spec: RepoSpec,
    mirror: Path,
    base_commit: str,
    record_version: str = "",
    record_setup_commit: str = "",
) -> tuple[str, str, tuple[str, str] | None, str]:
    """(version, how it was found, what the spec's rules detect, environment commit) of a
    candidate: see :func:`resolve`."""
    detected = detect_version(
        mirror, base_commit, repo_spec.version.rules, repo_spec.version.digits
    )
    if record_version:
        version, source = record_version, "record"
    elif detected is not None:
        version, source = detected
    else:
        version, source = "", "none"
    setup_commit = (
        repo_spec.version.setup_commits.get(version)
        or record_setup_commit
        or (version_tag_commit(mirror, base_commit, version) if version else None)
        or base_commit
    )
    return version, source, detected, setup_commit


def _tested_as_stable(python_source: str, python: str, date: dt.datetime) -> bool:
    """Whether the project's CI ran ``python`` as a stable Python at ``date``: a Python its CI
    tested whose first maintenance release was out by then. Its dependencies of that date then
    installed and ran on it, and the environment keeps its date (no
    :func:`~validation.environments.environment.python_floor`). Weeks after x.y.0 a CI on it
    built what had no wheels yet from sdists: astropy 5.0's environment (2022-10-25, the day
    after 3.11.0) built pyerfa 2.0.0.1, whose structured dtypes failed at run time."""
    released = FIRST_MAINTENANCE_RELEASES.get(python)
    return python_source in TESTED and released is not None and released <= date.date()


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def spec_label(path: Path, bundled: Path | None = None, spec_dirs: Iterable[Path] = ()) -> str:
    """How outputs name a spec file, the same on every machine (never an absolute path):
    ``bundled:<file>`` for one in the ``bundled`` directory, the path relative to its spec dir
    for one found in ``spec_dirs``, else the file's name."""
    resolved = Path(path).resolve()
    roots = [*([(bundled, "bundled:")] if bundled else []), *((Path(d), "") for d in spec_dirs)]
    for directory, prefix in roots:
        try:
            return prefix + resolved.relative_to(Path(directory).resolve()).as_posix()
        except ValueError:
            continue
    return resolved.name


class EnvironmentResolver:
    """Chooses each candidate's environment: its repository's spec file, else an inferred spec;
    with ``reference_environments`` set, an instance that has a reference file there gets that
    environment instead (see :func:`with_reference`).

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
        bundled = settings.bundled_spec_path()
        directories = [*([bundled] if bundled else []), *(Path(d) for d in settings.spec_dirs)]
        self.library = SpecLibrary(directories, settings.spec_files)
        self.bundled = bundled
        self.spec_dirs = [Path(d) for d in settings.spec_dirs]
        self.inferred_dir = Path(inferred_dir)
        self.available_pythons = available_pythons
        self._inferred: dict[tuple[str, str], RepoSpec] = {}  # by (repo, environment commit)
        self._versions: dict[str, dict[str, str]] = {}  # repo → version → environment commit
        self._lock = threading.Lock()
        self.references = (
            Path(settings.reference_environments) if settings.reference_environments else None
        )
        if self.references is not None and not self.references.is_dir():
            raise SpecError(f"reference environments directory {self.references} does not exist")
        self._read: dict[Path, ReferenceEnvironment] = {}

    def fingerprint(self) -> dict[str, Any]:
        """Settings every repository's environments depend on (see ``spec_digest`` for the rest)."""
        return {
            "install_steps_version": KEY_VERSION,
            "inference_version": INFERENCE_VERSION,
            "resolution_version": RESOLUTION_VERSION,
            "base_requirements": base_requirements.VERSION,
            "services": [services.VERSION, services.SHIM.digest],
            "generated_files": [generated.VERSION, generated.INSTALLED_FILES.digest],
            "dated": self.settings.dated,
            "resolve_as_of": self.settings.resolve_as_of,
            "era_lag_days": self.settings.era_lag_days,
            "inferred_extra_packages": list(self.settings.packages),
        }

    def spec_digest(self, repo: str, instance_id: str = "") -> str:
        """What of the spec files a result of ``repo`` depends on: its own spec, if any, and
        the label its run metadata records; for ``instance_id``, its reference file too."""
        digest = self.library.digest(repo)
        own = f"{self._source(repo)}@{digest}" if digest else ""
        if self.references is None or not instance_id:
            return own
        path = reference_file(self.references, repo, instance_id)
        if path is None:
            return own
        # the file's bytes, unread: one that cannot be read is its instance's drop, not here
        label = path.relative_to(files_root(self.references)).as_posix()
        return f"{own}|{LABEL}:{label}@{file_digest(path)}/{READER_VERSION}"

    def reference(self, repo: str, instance_id: str) -> ReferenceEnvironment | None:
        """The instance's reference environment, when ``reference_environments`` holds its
        file; a file that cannot be read is a SpecError naming it."""
        if self.references is None:
            return None
        path = reference_file(self.references, repo, instance_id)
        if path is None:
            return None
        with self._lock:
            found = self._read.get(path)
            if found is None:
                try:
                    found = read_reference(
                        path, files_root(self.references), project=repo.partition("/")[2]
                    )
                except ReferenceFileError as error:
                    raise SpecError(str(error)) from error
                self._read[path] = found
        return found

    def _source(self, repo: str) -> str:
        path = self.library.files.get(repo)
        return "" if path is None else spec_label(path, self.bundled, self.spec_dirs)

    def resolve(self, record: Candidate, mirror: Path) -> Resolution:
        """The candidate's environment; SpecError when its spec has no entry for its version.

        A repository without a spec gets one inferred from its files at the environment commit
        the default rules give the candidate (see :func:`environment_commit`). A candidate with
        a reference file gets its reference environment on that spec (:func:`with_reference`)."""
        reference = self.reference(record.repo, record.instance_id)
        repo_spec = self.library.get(record.repo)
        source = self._source(record.repo)
        if repo_spec is None:
            version, _, _, commit = environment_commit(
                RepoSpec(repo=record.repo),
                mirror,
                record.base_commit,
                record.version,
                record.environment_setup_commit,
            )
            repo_spec = self._infer(record.repo, mirror, commit, version)
            source = INFERRED
        resolution = resolve(
            repo_spec,
            mirror=mirror,
            base_commit=record.base_commit,
            record_version=record.version,
            record_setup_commit=record.environment_setup_commit,
            available_pythons=list(self.available_pythons()),
            dated_default=self.settings.dated,
            resolve_as_of=self.settings.resolve_as_of,
            era_lag_days=self.settings.era_lag_days,
            python_choice=self.settings.python_choice,
            spec_source=source,
            python=reference.python if reference else None,
            stdlib_modules=stdlib_needs.needed_modules(record.test_patch),
            golden_skips=lambda: version_skips.golden_skips(
                record.test_patch, lambda path: show(mirror, record.base_commit, path)
            ),
        )
        resolution = self._with_services(resolution, repo_spec, record, mirror)
        resolution = _with_fixture_plugins(resolution, record, mirror)
        if reference is not None:
            return free_build_tools(with_reference(resolution, reference), mirror)
        added = base_requirements.unmet(resolution.spec, mirror, record.base_commit)
        if added:  # the base commit's own requirements hold in its runs (see base_requirements)
            packages = (*resolution.spec.packages, *added)
            spec = dataclasses.replace(resolution.spec, packages=packages)
            resolution = dataclasses.replace(resolution, spec=spec, base_requirements=added)
        return free_build_tools(resolution, mirror)

    def _with_services(
        self, resolution: Resolution, repo_spec: RepoSpec, record: Candidate, mirror: Path
    ) -> Resolution:
        """The resolution with the services its runs start (the spec's ``services``, else those
        the touched test files use: ``services.inferred``) and their packages."""
        chosen = repo_spec.settings(resolution.version).services
        source = "spec"
        if chosen is None:
            files = services.patched_files(record.test_patch)
            chosen = list(services.inferred(mirror, record.base_commit, record.test_patch, files))
            source = "inferred"
        if not chosen:
            return resolution
        named = {requirement_name(package) for package in resolution.spec.packages}
        wanted = [p for p in services.packages(chosen) if requirement_name(p) not in named]
        spec = dataclasses.replace(
            resolution.spec,
            packages=(*resolution.spec.packages, *wanted),
            services=tuple(chosen),
        )
        return dataclasses.replace(resolution, spec=spec, services_source=source)

    def _infer(self, repo: str, mirror: Path, commit: str, version: str) -> RepoSpec:
        with self._lock:
            spec = self._inferred.get((repo, commit))
            if spec is None:
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
            if self._versions.setdefault(repo, {}).get(version) != commit:
                self._versions[repo][version] = commit
                self.inferred_dir.mkdir(parents=True, exist_ok=True)
                write_spec(self._for_review(repo), self.inferred_dir)
            return spec

    def _for_review(self, repo: str) -> RepoSpec:
        """The repository's inferred specs as one spec file: an entry per version (its
        environment commit in ``[version] setup_commits``), the one without a version last."""
        versions = self._versions[repo]
        ordered = sorted((v for v in versions if v), key=_version_order)
        entries, notes = [], []
        for version in [*ordered, *([""] if "" in versions else [])]:
            inferred = self._inferred[(repo, versions[version])]
            given = inferred.defaults.given()
            entries.append(Entry(**given, versions=_exactly(version) if version else ""))
            notes.append(f"{version or 'any other version'}: {inferred.note}")
        return RepoSpec(
            repo=repo,
            note="\n".join(notes),
            version=VersionSection(setup_commits={v: versions[v] for v in ordered}),
            environments=entries,
        )


def _with_fixture_plugins(resolution: Resolution, record: Candidate, mirror: Path) -> Resolution:
    """The resolution with the pytest plugins whose fixtures the touched tests use
    (``services.fixture_plugins``: pytest-httpbin's ``httpbin``) among its optional packages,
    those its packages do not name already: installed when they can be, left out and named
    otherwise (never failing the environment), recorded in run metadata with the files."""
    files = services.patched_files(record.test_patch)
    found = services.fixture_plugins(mirror, record.base_commit, record.test_patch, files)
    spec = resolution.spec
    named = {requirement_name(package) for package in (*spec.packages, *spec.optional_packages)}
    wanted = tuple((plugin, where) for plugin, where in found.items() if plugin not in named)
    if not wanted:
        return resolution
    optional = (*spec.optional_packages, *(plugin for plugin, _ in wanted))
    spec = dataclasses.replace(spec, optional_packages=optional)
    return dataclasses.replace(resolution, spec=spec, fixture_plugins=wanted)


def free_build_tools(resolution: Resolution, mirror: Path) -> Resolution:
    """The resolution with the pinned build tools (``BUILD_TOOLS``) whose pinned version the
    project's own ``[build-system] requires`` excludes, at the environment commit, kept out of
    the build constraints (``EnvironmentSpec.free_build_tools``): a pinned tool reaches every
    isolated build as a constraint, and the project's own build, which asks for another
    version, then cannot be made at all (pylint 2.15 requires ``setuptools>=66.1``, its
    reference environment pins setuptools 41.6.0; SWE-bench's pip built it in isolation with
    what it declared). The other builds take the tool as of the environment's date."""
    spec = resolution.spec
    if spec.project is None or not spec.project_commit or not spec.pins:
        return resolution
    declared = _build_requires(show(mirror, spec.project_commit, "pyproject.toml"))
    freed = []
    for pin in spec.pins:
        requirement = Requirement(pin)
        name = canonicalize_name(requirement.name)
        wanted = declared.get(name)
        version = next(iter(requirement.specifier)).version
        if name in BUILD_TOOLS and wanted is not None and not wanted.contains(version, True):
            freed.append(name)
    if not freed:
        return resolution
    spec = dataclasses.replace(spec, free_build_tools=tuple(sorted(freed)))
    return dataclasses.replace(resolution, spec=spec)


def _build_requires(text: str | None) -> dict[str, SpecifierSet]:
    """Name → specifier of a ``pyproject.toml``'s ``[build-system] requires`` (none: {})."""
    try:
        requires = tomllib.loads(text or "").get("build-system", {}).get("requires", [])
    except tomllib.TOMLDecodeError:
        return {}
    found: dict[str, SpecifierSet] = {}
    for text_requirement in requires if isinstance(requires, list) else []:
        try:
            requirement = Requirement(str(text_requirement))
        except InvalidRequirement:
            continue
        found[canonicalize_name(requirement.name)] = requirement.specifier
    return found


def with_reference(resolution: Resolution, reference: ReferenceEnvironment) -> Resolution:
    """``resolution`` in the reference's environment: its Python (already chosen), its exact
    pins winning over every other requirement, its Debian packages in a Docker image. The
    reference lists what its environment held, so the spec's requirement files and extras are
    left out, and of the spec's packages only those the reference does not name are kept; the
    rest of the spec (runner, commands, variables, the project's install) stays. What would be
    optional beside it (the spec's or an inferred ``optional_packages``, a plugin the touched
    tests' fixtures want) is left out too: the reference says what its runs had, and a plugin
    it lacked changes their outcomes (pytest-httpbin's fixtures error without it, as in
    SWE-bench's requests-5414, whose lists leave those 156 tests out)."""
    pinned = {canonicalize_name(Requirement(pin).name) for pin in reference.pins}
    kept = tuple(p for p in resolution.spec.packages if requirement_name(p) not in pinned)
    spec = dataclasses.replace(
        resolution.spec,
        packages=(*reference.pins, *kept),
        requirements=(),
        extras=(),
        pins_override=True,
        python_tested=False,
        image_packages=reference.debian,
        optional_packages=(),
    )
    return dataclasses.replace(
        resolution, spec=spec, spec_source=reference.label, reference=reference, fixture_plugins=()
    )


def requirement_name(requirement: str) -> str:
    """The normalized project name of ``requirement``, or the text itself when it is none."""
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return requirement


def _exactly(version: str) -> str:
    """The specifier matching ``version`` alone (``===`` for one that is not PEP 440)."""
    try:
        Version(version)
    except InvalidVersion:
        return f"==={version}"
    return f"=={version}"


def _version_order(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)
