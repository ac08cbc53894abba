"""The validation stage: repeated runs before/after the golden patch, grading, change coverage."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from builder.core.config import DockerConfig, ValidationConfig
from builder.core.diffs import parse_patch
from builder.core.errors import SwtError
from builder.core.faults import FORGEABLE_FAULTS, InfrastructureError, as_fault
from builder.core.files import inside
from builder.core.gitutil import GitError
from builder.core.pipeline import Outcome, Stage, WorkerStage
from builder.core.records import (
    Candidate,
    DropReason,
    Instance,
    Problem,
    RunResult,
    Verdict,
    write_jsonl,
)
from builder.core.repos import ContentMissing, RepoCache
from builder.core.store import result_key
from validation import coverage, phases, test_file_facts
from validation.coverage import credit
from validation.environments import metadata, test_imports
from validation.environments.environment import (
    INSTALL_REPAIRS,
    EnvironmentBuildError,
    EnvironmentSpec,
    resolution_date,
)
from validation.environments.interpreters import PYTHON_RELEASES
from validation.environments.resolution import (
    INFERRED,
    EnvironmentResolver,
    Resolution,
    requirement_name,
)
from validation.environments.specs import Settings, SpecError
from validation.environments.url_sources import Unreachable, UrlSource, UrlSources
from validation.golden_coverage import change_coverage
from validation.golden_runs import GoldenRuns, read_file, with_runs
from validation.instance_record import instance_record
from validation.job import STAGE, Job
from validation.runs import checkout_path, test_ids
from validation.runs.backends import make_backend
from validation.runs.patches import PatchError, runnable_test_files, unsafe_patch_paths
from validation.runs.runners import PYTEST_LAUNCHER, make_runner
from validation.test_import_env import WithTestImports

GRADING_VERSION = 10
"""Bump when how runs are graded or measured changes: it is part of every result key (which
lines count for the golden tests in golden ΔC: ``credit.VERSION``). 9: a crash before the fix
with clean runs after it is graded (the failure the record is about), not a drop. 10: the
repetitions run the golden test files whole (leaving tests out changed others' verdicts)."""


_LOCATION_SETTINGS = {
    "backend", "spec_dirs", "spec_files", "bundled_specs", "bundled_spec_dir",
    "python_search_paths", "limits", "env_dir", "reference_environments", "repair_from",
}  # fmt: skip
"""``[validation]`` settings whose effect the stage fingerprint holds otherwise (see there)."""
_KEYED_WHEN_SET = ("url_packages", "url_schemes")
"""``[validation]`` settings in the fingerprint only when not at their defaults: added after
results were stored, whose keys their defaults keep (a package fetched from its URL is in its
environment's key, and named in the record's ``run_metadata``)."""


class ValidateStage(GoldenRuns, WithTestImports, Stage):
    """Candidate → Instance (graded F→P/P→P lists) or a named drop with evidence."""

    name = STAGE
    output_model = Instance

    def __init__(
        self,
        settings: ValidationConfig,
        work_dir: Path,
        repos: Mapping[str, str],
        docker: DockerConfig | None = None,
    ) -> None:
        self.settings = settings
        self.work_dir = Path(work_dir)
        self.repo_urls = dict(repos)
        self.docker = docker
        self.repos = RepoCache(self.work_dir / "repos", repos)
        self.backend = make_backend(settings, self.work_dir, docker)
        self.environments = EnvironmentResolver(
            settings, self.work_dir / "specs-inferred", self._available_pythons
        )
        self.url_sources = UrlSources(self.work_dir / "url-sources", settings.url_schemes)

    def _available_pythons(self) -> list[str]:
        """Python versions the backend can build (local: the interpreters found here)."""
        available = getattr(self.backend, "available_pythons", None)
        return list(available()) if available else list(PYTHON_RELEASES)

    def fingerprint(self) -> Any:
        """What every result depends on. Settings that only say where or how to find things are
        left out for what they find: ``backend`` (``auto`` and the backend it chose give the same
        results: the backend's own fingerprint is here), spec files and dirs (each repository's
        spec is in its key, see ``EnvironmentResolver.spec_digest``), the interpreter search
        paths (the Python versions found are here), local limits (in the local backend's
        fingerprint), where environments live, and where a mirror's missing content is
        recovered from (the commit's own bytes; a ``content_missing`` drop never holds)."""
        settings = self.settings.model_dump(mode="json", exclude=_LOCATION_SETTINGS)
        for name in _KEYED_WHEN_SET:  # at their defaults: the keys of before stay
            if settings[name] == ValidationConfig.model_fields[name].get_default(
                call_default_factory=True
            ):
                settings.pop(name)
        fingerprint = {
            "validation": settings,
            "pythons": self._available_pythons(),
            "backend": self.backend.fingerprint(),
            "environments": self.environments.fingerprint(),
            "grading": GRADING_VERSION,
            "pytest_launcher": PYTEST_LAUNCHER.digest,  # how a pytest run's outcomes are read
            "metadata": [metadata.VERSION, metadata.SHIM.digest],
            "checkout_path": checkout_path.VERSION,  # how the checkout wins over the install
            "test_ids": test_ids.VERSION,  # the canonical form of a test id (every runner)
            "test_imports": test_imports.VERSION,  # a spec may turn it on for its repository
            "test_file_facts": test_file_facts.VERSION,  # what compare reads of the test files
        }
        if self.settings.coverage:  # results without coverage do not depend on how it measures
            fingerprint["coverage_measure"] = [coverage.MEASURE_VERSION, coverage.RUNTIME.digest]
            fingerprint["coverage_credit"] = credit.VERSION
        return fingerprint

    def key(self, record: Candidate) -> str:
        """The stage's settings plus the spec of this record's repository alone (and its
        reference environment file, when it has one)."""
        digest = self.environments.spec_digest(record.repo, record.instance_id)
        fingerprint = {**self.fingerprint(), "spec": digest}
        return result_key(self.name, fingerprint, record.model_dump(mode="json"))

    def holds(self, record: Candidate, stored: Outcome) -> bool:
        """A stored ``environment_failed`` holds while the record's environment is the one that
        failed: a change of the install steps that gives only some environments new keys (so
        that the others are not rebuilt) is not in the result key, and the records whose
        environment it changes are validated again. A stored ``content_missing`` never holds
        (the mirror or a repair folder may hold the content now), and a kept record with
        stubbed files holds while the same files would be stubbed (where ``repair_from`` is, is
        no part of the key: a folder that gives one of them since makes it validated again). A
        kept record whose environment had an index release stand in for a URL that could not
        be fetched holds while none of those URLs can be (one that can is fetched and the
        record validated again). Every other stored result holds."""
        if stored.verdict.reason is DropReason.CONTENT_MISSING:
            return False
        metadata = getattr(stored.output, "run_metadata", None) or {}
        if "url_unreached" in metadata and self.settings.url_packages == "fetch":
            stand_ins = json.loads(metadata.get("index_stand_ins", "{}"))
            for name in json.loads(metadata["url_unreached"]):
                try:
                    self.url_sources.source(name, stand_ins[name], "")
                except (Unreachable, KeyError):
                    continue
                return False
        if "stubbed_files" in metadata:
            stubbed = json.loads(metadata["stubbed_files"])
            try:
                self.repos.mirror(record.repo, record.base_commit)
                return self._repair(record, sorted(stubbed)) == stubbed
            except (SwtError, GitError, OSError):
                return False
        failed = stored.verdict.evidence.get("environment")
        if stored.verdict.reason is not DropReason.ENVIRONMENT_FAILED or failed is None:
            return True
        if stored.verdict.evidence.get("install_repairs") != str(INSTALL_REPAIRS):
            return False  # the install repairs more now than when it failed
        try:
            mirror = self.repos.mirror(record.repo, record.base_commit)
            resolution = self.environments.resolve(record, mirror)
            spec = self._measurable(resolution.spec)
            fetched, _ = self._url_sources(record, resolution, spec)
        except (SwtError, GitError, OSError):  # validating it again says what holds now
            return False
        return dataclasses.replace(spec, url_sources=tuple(fetched)).key() == failed

    def confirm(self, fault: str, first: Verdict) -> str | None:
        """A fault its records' code can imitate or bring about (``FORGEABLE_FAULTS``) stops
        the build only when the backend's self-test, run for no record, fails too."""
        if fault not in FORGEABLE_FAULTS:
            return super().confirm(fault, first)
        problem = self.backend.self_test()
        return None if problem is None else f"a self-test run for no record fails: {problem}"

    def group(self, record: Candidate) -> str:
        """Instances of one repository version share an environment: one worker builds it."""
        return f"{record.repo}@{record.version or record.environment_setup_commit}"

    def for_workers(self) -> WorkerStage:
        """Rebuilt on each worker in its own work dir: its mirrors, environments and images
        are the worker's; an ``env_dir`` of this machine is not used there."""
        settings = self.settings.model_copy(update={"env_dir": ""})
        arguments = {"settings": settings, "repos": self.repo_urls, "docker": self.docker}
        digest = result_key(self.name, self.fingerprint(), arguments["repos"])
        return WorkerStage(ValidateStage, arguments, digest)

    def evidence_root(self) -> Path:
        """Its logs are under its work dir (``logs/<instance>/<key>``)."""
        return self.work_dir

    def process(self, record: Candidate) -> Outcome:
        """The record's verdict, or an ``infra_error`` when the machine failed it (a sandbox
        that does not start, a checkout or fetch that fails, a full disk, …): no verdict."""
        try:
            with phases.PhaseClock().running() as clock:
                return self._judge(record, clock)
        except (InfrastructureError, GitError, OSError) as error:
            fault = as_fault(error, record.repo)
            if fault is None:
                raise
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **fault.evidence())

    def stored(self, record: Candidate, key: str, wall_s: float, cpu_s: float) -> None:
        """The store write of a result computed here is the last phase of its clock."""
        logs = inside(self.work_dir / "logs", record.instance_id, key[:12])
        phases.add(logs / phases.FILE, "store", wall_s, cpu_s)

    def _judge(self, record: Candidate, clock: phases.PhaseClock) -> Outcome:
        """The verdict, its phases' times written beside its logs (``phases.json``: never in
        the record, whose bytes must not depend on timing)."""
        key = self.key(record)
        logs = inside(self.work_dir / "logs", record.instance_id, key[:12])
        shutil.rmtree(logs, ignore_errors=True)
        outcome = self._validate(record, key, logs)
        clock.write(logs / phases.FILE, instance_id=record.instance_id, key=key)
        return outcome

    def _validate(self, record: Candidate, key: str, logs: Path) -> Outcome:
        """The verdict of ``record`` (result ``key``, its logs in ``logs``), each part of the
        work timed as its phase of the record's clock (``validation.phases``)."""
        try:
            test_files = runnable_test_files(record.test_patch)
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
        unsafe = unsafe_patch_paths({"test patch": record.test_patch, "golden patch": record.patch})
        if unsafe:
            return Outcome.drop(STAGE, DropReason.UNSAFE_PATH, **unsafe)
        if not test_files:
            return Outcome.drop(
                STAGE, DropReason.NO_TEST_FILES, test_patch_files=_patched_files(record)
            )
        try:
            lines = coverage.patch_lines(record.patch) if self.settings.coverage else None
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
        if lines is not None and not (lines.removed or lines.added) and _patch_files(record.patch):
            # known before any run: no run could measure this patch (one naming no file at all
            # is left to git apply, below)
            return Outcome.drop(
                STAGE,
                DropReason.COVERAGE_UNMEASURABLE,
                error="the golden patch changes no Python line",
                patch_files=", ".join(_patch_files(record.patch)),
            )
        with phases.phase("mirror"):
            mirror = self.repos.mirror(record.repo, record.base_commit)  # or RepoUnavailable
            stubbed = self._repair(record, [record.base_commit])
        if isinstance(stubbed, Outcome):
            return stubbed
        try:
            with phases.phase("resolve"):
                resolution = self.environments.resolve(record, mirror)
        except SpecError as error:
            return Outcome.drop(STAGE, DropReason.ENVIRONMENT_FAILED, error=str(error))
        spec = self._measurable(resolution.spec)
        fetched, unreached = self._url_sources(record, resolution, spec)
        if fetched:
            spec = dataclasses.replace(spec, url_sources=tuple(fetched))
        if spec.project_commit and spec.project_commit != record.base_commit:
            with phases.phase("mirror"):  # the environment installs the project from it
                more = self._repair(record, [spec.project_commit])
            if isinstance(more, Outcome):
                return more
            stubbed = {**stubbed, **more}
        try:
            with phases.phase("build"):
                environment = self.backend.prepare(spec)
        except EnvironmentBuildError as error:
            return Outcome.drop(
                STAGE,
                DropReason.ENVIRONMENT_FAILED,
                error=str(error),
                log=str(error.log_path),
                environment=spec.key(),
                install_repairs=str(INSTALL_REPAIRS),
            )
        run_dir = self.work_dir / "runs" / key[:16]
        added: dict[str, str] = {}
        if self._test_imports(record, resolution):
            with phases.phase("build"):
                spec, environment, added = self._with_test_imports(
                    record, test_files, spec, environment, mirror, run_dir / "probe", logs
                )
        left_out = self.backend.left_out(environment)
        if left_out:  # optional additions that could not be installed beside the pinned stack
            added = {**added, "optional_left_out": json.dumps(list(left_out))}
        stand_ins = index_stand_ins(resolution, spec, left_out)
        if stand_ins:  # the index's release of a name the project installs from a URL
            added = {**added, "index_stand_ins": json.dumps(stand_ins, sort_keys=True)}
            reasons = {name: why for name, why in unreached.items() if name in stand_ins}
            if reasons:
                added = {**added, "url_unreached": json.dumps(reasons, sort_keys=True)}
        if spec.url_sources:  # installed from the URL's tree at the commit of its date
            added = {**added, "url_sources": json.dumps(url_sources_told(spec, left_out))}
        if stubbed:  # empty in every checkout: a test reading one fails (stub_missing)
            added = {**added, "stubbed_files": json.dumps(stubbed, sort_keys=True)}
        runner = make_runner(spec.runner, spec.test_command)
        network = self._network(record, resolution)
        job = Job(record, runner, test_files, logs, lines, spec.python, network, added,
                   environment_commit=spec.project_commit, services=spec.services)  # fmt: skip
        runs: list[RunResult] = []
        try:
            with contextlib.ExitStack() as stack:
                with phases.phase("checkout"):
                    opened = self._golden_sessions(job, environment, mirror, run_dir, stack)
                if isinstance(opened, Outcome):
                    return with_runs(opened, logs)
                sessions, changes = opened
                facts = test_file_facts.recorded(
                    lambda path: read_file(sessions["after"].tree, path), job.files, job.runner.kind
                )
                golden = self._first_pair(job, sessions, changes, runs)
                if isinstance(golden, Outcome):
                    return with_runs(golden, logs)
                made = self._rest(job, sessions, environment, mirror, run_dir, runs, golden)
                if isinstance(made, Outcome):
                    return with_runs(made, logs)
                graded, existing = made
        finally:
            with phases.phase("checkout"):
                shutil.rmtree(run_dir, ignore_errors=True)
            write_jsonl(logs / "runs.jsonl", runs)
        with phases.phase("coverage"):
            change = change_coverage(job, golden, existing)
        if isinstance(change, Outcome):
            return with_runs(change, logs)
        with phases.phase("record"):
            instance = instance_record(
                record, graded, golden, existing, change, spec, mirror, resolution, runs,
                {**job.metadata, **facts},
                backend=self.backend, repetitions=self.settings.repetitions,
                network=self._network(record, resolution),
            )  # fmt: skip
        return Outcome.keep(STAGE, instance, logs=str(logs), runs=str(logs / "runs.jsonl"))

    def mirror_as_validated(self, record: Problem, environment_commit: str = "") -> Path:
        """The mirror of a validated record (its evaluation, its export), repaired as its
        validation repaired it (``[validation] repair_from``, ``stub_missing``), so a checkout
        there is the validation's; ContentMissing when it lacks content these settings give
        no way round."""
        mirror = self.repos.mirror(record.repo, record.base_commit)
        commits = [record.base_commit, *([environment_commit] if environment_commit else [])]
        sources = [Path(p) for p in self.settings.repair_from]
        found = self.repos.repair(record.repo, commits, sources, self.settings.stub_missing)
        if not found.complete:
            raise ContentMissing(
                f"{record.repo}: the history lacks the content of {found.missing}; the "
                "[validation] repair_from or stub_missing the release was built with repairs it"
            )
        return mirror

    def _repair(self, record: Problem, commits: list[str]) -> dict[str, list[str]] | Outcome:
        """The files of ``commits`` the mirror lacks, recovered from ``repair_from`` or, with
        ``stub_missing``, stubbed (commit → stubbed paths); a ``content_missing`` drop naming
        them otherwise (``builder.core.mirror_repair``)."""
        sources = [Path(p) for p in self.settings.repair_from]
        found = self.repos.repair(record.repo, commits, sources, self.settings.stub_missing)
        if not found.complete:
            return Outcome.drop(
                STAGE, DropReason.CONTENT_MISSING,
                error="the repository's history lacks the content of files at the record's "
                "base commit or the environment commit its environment installs (named in "
                "missing); a folder of the project's wheels or sdists in [validation] "
                "repair_from can give it, or stub_missing = true checks them out empty (listed)",
                missing=json.dumps(found.missing, sort_keys=True),
                recovered=json.dumps(found.recovered, sort_keys=True),
            )  # fmt: skip
        return found.stubbed

    def _url_sources(
        self, record: Candidate, resolution: Resolution, spec: EnvironmentSpec
    ) -> tuple[list[UrlSource], dict[str, str]]:
        """The packages the project installs from a URL whose index release would stand in
        (:func:`index_stand_ins`), fetched from the URL at the environment's date
        (``url_packages = "fetch"``), and why each of the others could not be (name → why)."""
        wanted = index_stand_ins(resolution, spec, ())
        if not wanted:
            return [], {}
        if self.settings.url_packages != "fetch":
            return [], {name: "url_packages = index" for name in wanted}
        date = resolution_date(spec) or record.created_at
        fetched, unreached = [], {}
        with phases.phase("mirror"):  # fetched as the repository is
            for name, word in sorted(wanted.items()):
                try:
                    fetched.append(self.url_sources.source(name, word, date))
                except Unreachable as error:
                    unreached[name] = str(error)
        return fetched, unreached

    def _measurable(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        return measurable(spec, self.settings.coverage)

    def _spec_settings(self, record: Candidate, resolution: Resolution) -> Settings | None:
        """The settings the repository's own spec file gives this version (None for an
        inferred spec)."""
        repo_spec = self.environments.library.get(record.repo)
        if repo_spec is None or resolution.spec_source == INFERRED:
            return None
        return repo_spec.settings(resolution.version)

    def _network(self, record: Candidate, resolution: Resolution) -> bool:
        """Whether the repository's spec sets ``network = true`` for this version (an inferred
        spec never does)."""
        settings = self._spec_settings(record, resolution)
        return settings is not None and settings.network

    def _test_imports(self, record: Candidate, resolution: Resolution) -> bool:
        """Whether this instance's environment gets what its touched test files import: the
        spec's ``test_imports`` for this version when it sets it, else the configuration's;
        never in a reference environment (its tests ran with what it held, optional imports
        skipped)."""
        if resolution.reference is not None:
            return False
        settings = self._spec_settings(record, resolution)
        if settings is not None and settings.test_imports is not None:
            return settings.test_imports
        return self.settings.test_imports


def measurable(spec: EnvironmentSpec, measured: bool) -> EnvironmentSpec:
    """The spec, with coverage.py among its packages when coverage is ``measured``."""
    named = {canonicalize_name(Requirement(package).name) for package in spec.packages}
    if not measured or coverage.COVERAGE_PACKAGE in named:
        return spec  # a spec pinning its own coverage.py keeps it
    requirement = coverage.coverage_requirement(spec.python)
    return dataclasses.replace(spec, packages=(*spec.packages, requirement))


def _patch_files(patch: str) -> list[str]:
    return sorted(patched.path for patched in parse_patch(patch))


def _patched_files(record: Candidate) -> str:
    prefix = "+++ b/"
    lines = record.test_patch.splitlines()
    return ", ".join(line[len(prefix) :] for line in lines if line.startswith(prefix))


def index_stand_ins(
    resolution: Resolution, spec: EnvironmentSpec, left_out: tuple[str, ...]
) -> dict[str, str]:
    """name → URL of each package the project installs from a URL whose index release the
    environment installed in its place (an optional package of the spec the build did not
    leave out): runs and builds reach no other host, and that release's content can differ
    from what the URL gives (pydicom's test data)."""
    installed = {requirement_name(text) for text in spec.optional_packages}
    dropped = {requirement_name(text) for text in left_out}
    fetched = {requirement_name(source.name) for source in spec.url_sources}
    return {
        name: url
        for name, url in resolution.url_packages
        if requirement_name(name) in installed - dropped - fetched
    }


def url_sources_told(spec: EnvironmentSpec, left_out: tuple[str, ...]) -> dict[str, str]:
    """name → ``URL at COMMIT`` of each package installed from its URL's tree (said to be left
    out when the build could not install it)."""
    failed = {Path(text).name for text in left_out if "/" in text}
    return {
        source.name: source.described() + (" (left out: not installable)" if source.name in
                                           failed else "")
        for source in spec.url_sources
    }  # fmt: skip
