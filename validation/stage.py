"""The validation stage: repeated runs before/after the golden patch, grading, change coverage."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from builder.core import __version__
from builder.core.config import DockerConfig, ValidationConfig
from builder.core.diffs import parse_patch
from builder.core.faults import InfrastructureError, disk_full
from builder.core.files import atomic_write_text, inside
from builder.core.gitutil import GitError, file_reader, git
from builder.core.pipeline import Outcome, Stage, WorkerStage
from builder.core.records import (
    Candidate,
    DropReason,
    Instance,
    InstanceStats,
    RunResult,
    Transitions,
    write_jsonl,
)
from builder.core.repos import RepoCache
from builder.core.store import result_key
from validation import coverage, test_file_facts
from validation.codebase import codebase_size
from validation.coverage import credit
from validation.environments import metadata, test_imports
from validation.environments.environment import EnvironmentBuildError, EnvironmentSpec
from validation.environments.interpreters import PYTHON_RELEASES
from validation.environments.resolution import INFERRED, EnvironmentResolver, Resolution
from validation.environments.specs import Settings, SpecError
from validation.grading import (
    Grade,
    grade,
    needs_network,
    network_fail_to_pass,
    side_verdicts,
    unlisted_tests,
)
from validation.measured_run import measured_run
from validation.runs.backends import Session, make_backend
from validation.runs.generated import place_generated
from validation.runs.patches import (
    NOT_RUNNABLE,
    PatchError,
    UnsafePathError,
    patch_size,
    restore,
    runnable_test_files,
    unsafe_patch_paths,
)
from validation.runs.runners import PYTEST_LAUNCHER, Runner, make_runner
from validation.test_changes import patch_changes

STAGE = "validate"
GRADING_VERSION = 8
"""Bump when how runs are graded or measured changes: it is part of every result key (which
lines count for the golden tests in golden ΔC: ``credit.VERSION``)."""

TEST_IMPORT_BUILDS = 4
"""How many environments with the test files' imports an instance may try: the installer
reports one failure at a time (a name not on the index, then one that does not build, …)."""

_LOCATION_SETTINGS = {
    "backend", "spec_dirs", "spec_files", "bundled_specs", "bundled_spec_dir",
    "python_search_paths", "limits", "env_dir",
}  # fmt: skip
"""``[validation]`` settings whose effect the stage fingerprint holds otherwise (see there)."""
SIDES = ("before", "after")
_PROBE_TIMEOUT_S = 120.0
"""How long the probe of the test files' imports may take (it imports parent packages)."""


@dataclasses.dataclass(frozen=True)
class _Job:
    """What one validation needs beside its session: the record, runner, files, where logs go."""

    record: Candidate
    runner: Runner
    files: list[str]
    logs: Path
    lines: coverage.PatchLines | None  # the golden patch's lines when coverage is measured
    python: str  # the environment's Python version
    network: bool = False  # the repository's spec lets its runs use the network
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)  # for run_metadata
    environment_commit: str = ""  # the commit the environment installed the project from

    def include(self) -> list[str]:
        return [] if self.lines is None else sorted({*self.lines.removed, *self.lines.added})

    def side_lines(self, side: str) -> Mapping[str, frozenset[int]]:
        """The patch lines a run of ``side`` measures: removed on R, added on R∘X."""
        if self.lines is None:
            return {}
        return self.lines.removed if side == "before" else self.lines.added


@dataclasses.dataclass(frozen=True)
class _Runs:
    """The runs of one suite (golden or existing) on both sides, and what coverage measured."""

    before: list[RunResult]
    after: list[RunResult]
    measured: dict[str, list[coverage.Measured | None]]
    changes: Mapping[str, set[str] | None] = dataclasses.field(default_factory=dict)
    """The definitions the test patch changed, per file it leaves in place (None: all of a
    file; ``validation.test_changes``): whose lines are the golden tests' in golden ΔC."""


class ValidateStage(Stage):
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
        fingerprint) and where environments live."""
        settings = self.settings.model_dump(mode="json", exclude=_LOCATION_SETTINGS)
        fingerprint = {
            "validation": settings,
            "pythons": self._available_pythons(),
            "backend": self.backend.fingerprint(),
            "environments": self.environments.fingerprint(),
            "grading": GRADING_VERSION,
            "pytest_launcher": PYTEST_LAUNCHER.digest,  # how a pytest run's outcomes are read
            "metadata": [metadata.VERSION, metadata.SHIM.digest],
            "test_imports": test_imports.VERSION,  # a spec may turn it on for its repository
        }
        if self.settings.coverage:  # results without coverage do not depend on how it measures
            fingerprint["coverage_measure"] = [coverage.MEASURE_VERSION, coverage.RUNTIME.digest]
            fingerprint["coverage_credit"] = credit.VERSION
        return fingerprint

    def key(self, record: Candidate) -> str:
        """The stage's settings plus the spec of this record's repository alone."""
        fingerprint = {**self.fingerprint(), "spec": self.environments.spec_digest(record.repo)}
        return result_key(self.name, fingerprint, record.model_dump(mode="json"))

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

    def process(self, record: Candidate) -> Outcome:
        """The record's verdict, or an ``infra_error`` when the machine failed it (a sandbox
        that does not start, a checkout or fetch that fails, a full disk, …): no verdict."""
        try:
            return self._judge(record)
        except InfrastructureError as error:
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **error.evidence())
        except GitError as error:  # the mirror cannot be read (an object missing, say)
            fault = InfrastructureError(f"{record.repo}: {error}", fault="repository")
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **fault.evidence())
        except OSError as error:
            fault = disk_full(error)
            if fault is None:
                raise
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **fault.evidence())

    def _judge(self, record: Candidate) -> Outcome:
        key = self.key(record)
        logs = inside(self.work_dir / "logs", record.instance_id, key[:12])
        shutil.rmtree(logs, ignore_errors=True)
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
        mirror = self.repos.mirror(record.repo, record.base_commit)  # or RepoUnavailable
        try:
            resolution = self.environments.resolve(record, mirror)
        except SpecError as error:
            return Outcome.drop(STAGE, DropReason.ENVIRONMENT_FAILED, error=str(error))
        spec = self._measurable(resolution.spec)
        try:
            environment = self.backend.prepare(spec)
        except EnvironmentBuildError as error:
            return Outcome.drop(
                STAGE, DropReason.ENVIRONMENT_FAILED, error=str(error), log=str(error.log_path)
            )
        run_dir = self.work_dir / "runs" / key[:16]
        added: dict[str, str] = {}
        if self._test_imports(record, resolution):
            spec, environment, added = self._with_test_imports(
                record, test_files, spec, environment, mirror, run_dir / "probe", logs
            )
        runner = make_runner(spec.runner, spec.test_command)
        network = self._network(record, resolution)
        job = _Job(record, runner, test_files, logs, lines, spec.python, network, added,
                   environment_commit=spec.project_commit)  # fmt: skip
        runs: list[RunResult] = []
        try:
            with contextlib.ExitStack() as stack:
                opened = self._golden_sessions(job, environment, mirror, run_dir, stack)
                if isinstance(opened, Outcome):
                    return _with_runs(opened, logs)
                sessions, changes = opened
                facts = test_file_facts.recorded(
                    lambda path: _read(sessions["after"].tree, path), job.files, job.runner.kind
                )
                golden = self._first_pair(job, sessions, changes, runs)
                if isinstance(golden, Outcome):
                    return _with_runs(golden, logs)
                made = self._rest(job, sessions, environment, mirror, run_dir, runs, golden)
                if isinstance(made, Outcome):
                    return _with_runs(made, logs)
                graded, existing = made
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
            write_jsonl(logs / "runs.jsonl", runs)
        change = self._change_coverage(job, golden, existing)
        if isinstance(change, Outcome):
            return _with_runs(change, logs)
        instance = self._instance(
            record,
            graded,
            golden,
            existing,
            change,
            spec,
            mirror,
            resolution,
            runs,
            {**job.metadata, **facts},
        )
        return Outcome.keep(STAGE, instance, logs=str(logs), runs=str(logs / "runs.jsonl"))

    def _with_test_imports(
        self,
        record: Candidate,
        test_files: list[str],
        spec: EnvironmentSpec,
        environment: object,
        mirror: Path,
        probe_dir: Path,
        logs: Path,
    ) -> tuple[EnvironmentSpec, object, dict[str, str]]:
        """The spec and environment with the distributions the touched test files import and
        the environment lacks (see ``test_imports``), and what the run metadata says of them.
        An environment with them that cannot be built is tried again without those the
        installer's log blames, as long as it blames some and leaves some (each package the
        log names costs one more build: :data:`TEST_IMPORT_BUILDS` at most); failing that, the
        instance stays on the one it had."""
        log = logs / "test-imports.log"
        packages = self._missing_test_imports(
            record, test_files, spec, environment, mirror, probe_dir, log
        )
        if not packages:
            return spec, environment, {}
        attempts = [packages]  # and again without what the installer blamed
        for tried in attempts:
            derived = dataclasses.replace(spec, packages=(*spec.packages, *tried))
            try:
                built = self.backend.prepare(derived)
            except EnvironmentBuildError as error:
                _note(log, f"environment with {' '.join(tried)} not built: {error}\n")
                log_path = getattr(error, "log_path", None)
                blamed = test_imports.implicated(tried, _text(log_path) if log_path else "")
                rest = [package for package in tried if package not in blamed]
                if blamed and rest and len(attempts) < TEST_IMPORT_BUILDS:
                    attempts.append(rest)
                continue
            left = [package for package in packages if package not in tried]
            return derived, built, {"test_requirements": json.dumps(tried), **_failed(left)}
        return spec, environment, _failed(packages)

    def _missing_test_imports(
        self,
        record: Candidate,
        test_files: list[str],
        spec: EnvironmentSpec,
        environment: object,
        mirror: Path,
        probe_dir: Path,
        log: Path,
    ) -> list[str]:
        """Distributions of the modules the test files need that the environment cannot find
        (one run of its interpreter in a checkout with the test patch), the spec's own left out."""
        log.parent.mkdir(parents=True, exist_ok=True)
        opened = self.backend.session(environment, mirror, record.base_commit, probe_dir)
        try:
            with opened as session:
                try:
                    session.apply(record.test_patch, "test patch")
                except PatchError:
                    return []  # the golden runs name this drop
                wanted = test_imports.wanted_modules(session.tree, test_files)
                _note(log, "".join(f"wanted {m} ({where})\n" for m, where in wanted.items()))
                if not wanted:
                    return []
                out = "missing-modules.json"
                command = ["python", "-c", test_imports.PROBE, session.scratch_path(out), *wanted]
                session.run(command, log.with_suffix(".probe.log"), _PROBE_TIMEOUT_S)
                missing = [m for m in _json_list(session.read_scratch(out)) if m in wanted]
        finally:
            shutil.rmtree(probe_dir, ignore_errors=True)
        named = {canonicalize_name(Requirement(package).name) for package in spec.packages}
        packages = {test_imports.distribution(module) for module in missing}
        added = sorted((p for p in packages if canonicalize_name(p) not in named), key=str.lower)
        _note(log, f"missing: {' '.join(missing) or 'none'}; added: {' '.join(added) or 'none'}\n")
        return added

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
        spec's ``test_imports`` for this version when it sets it, else the configuration's."""
        settings = self._spec_settings(record, resolution)
        if settings is not None and settings.test_imports is not None:
            return settings.test_imports
        return self.settings.test_imports

    @contextlib.contextmanager
    def _session(
        self, job: _Job, environment: object, mirror: Path, run_dir: Path
    ) -> Iterator[Session]:
        """A checkout at the base commit, with the files the environment's install generated
        that it lacks; with network when the spec allows it (``network`` is what the backend's
        runs honour). Its runs write bytecode: its patches are applied before any run, and the
        test patch is undone with the bytecode of its files (:func:`restore`)."""
        commit = job.record.base_commit
        with self.backend.session(environment, mirror, commit, run_dir) as session:
            session.network = job.network
            session.bytecode = True
            log = job.logs / f"{run_dir.name}-generated.log"
            place_generated(session, mirror, log, job.environment_commit)
            yield session

    def _golden_sessions(
        self,
        job: _Job,
        environment: object,
        mirror: Path,
        run_dir: Path,
        stack: contextlib.ExitStack,
    ) -> tuple[dict[str, Session], dict[str, set[str] | None]] | Outcome:
        """One checkout per side, made at the same time, with the test patch, the golden patch
        on the after side (on the before side only checked: it must apply), open until
        ``stack`` closes, and the definitions the test patch changes (for golden ΔC, read from
        the before side); or the drop when a patch does not apply."""
        record = job.record
        opened: dict[str, contextlib.AbstractContextManager[Session]] = {}

        def open_side(side: str) -> tuple[Session, dict[str, set[str] | None]] | Outcome:
            context = self._session(job, environment, mirror, run_dir / f"golden-{side}")
            session = context.__enter__()
            opened[side] = context
            changes: dict[str, set[str] | None] = {}
            try:
                session.apply(record.test_patch, "test patch")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
            if side == "before" and job.lines is not None:  # for golden ΔC
                changes = _test_changes(job, mirror, session.tree)
            try:
                session.apply(record.patch, "golden patch", check_only=side == "before")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
            return session, changes

        try:
            made = _both({side: _bind(open_side, side) for side in SIDES})
        finally:  # closed with the stack, whatever happened
            for side in SIDES:
                if side in opened:
                    stack.push(opened[side].__exit__)
        for side in SIDES:  # the before side's drop first
            if isinstance(made[side], Outcome):
                return made[side]
        sessions = {side: made[side][0] for side in SIDES}
        return sessions, made["before"][1]

    def _first_pair(
        self,
        job: _Job,
        sessions: Mapping[str, Session],
        changes: Mapping[str, set[str] | None],
        runs: list[RunResult],
    ) -> _Runs | Outcome:
        """The golden tests' first pair: before and after the golden patch in their checkouts,
        at the same time, measured when coverage is on; or the drop when a run cannot be graded
        or the after side collected nothing."""
        first = _both(
            {
                side: _bind(self._runs, job, sessions[side], job.files, "golden", side, [0])
                for side in SIDES
            }
        )
        failed = _record(runs, first)
        if failed is not None:
            return failed
        result = _Runs(
            [first["before"][0][0]],
            [first["after"][0][0]],
            {side: [first[side][0][1]] for side in SIDES},
            changes,
        )
        if not result.after[0].tests:
            last = result.after[0]
            return Outcome.drop(
                STAGE,
                DropReason.NO_TESTS_COLLECTED,
                exit_code=str(last.exit_code),
                report_found=str(last.report_found),
                collection_errors=", ".join(last.collection_errors),
                log=last.log_path,
            )
        return result

    def _rest(
        self,
        job: _Job,
        sessions: Mapping[str, Session],
        environment: object,
        mirror: Path,
        run_dir: Path,
        runs: list[RunResult],
        golden: _Runs,
    ) -> tuple[Grade, _Runs] | Outcome:
        """After the first pair: the golden grade and the existing tests, or the drop.

        A first pair with no F→P candidate decides the drop: no repetition can make one, and
        nothing more runs. Otherwise each side, in its checkout and at the same time as the
        other, repeats N-1 times the tests whose verdict decides (F→P, P→P and P→F in the
        first pair: the instance's labels and its drops; tests F→F, skipped or xfail/xpass
        there are left out where the runner can leave tests out, pytest's ``--deselect``, and
        the whole files run otherwise), then runs the existing tests (:meth:`_existing_plan`)
        with the test patch undone: a side does not wait for the other between the two.
        Drops in order: a run that cannot be graded, the golden grade, the existing tests."""
        pair = grade(golden.before, golden.after)
        if not pair.fail_to_pass:
            dropped = _grade_drop(pair, golden)  # none is kept without a fail-to-pass test
            if dropped is not None:
                return dropped
        decisive = {*pair.fail_to_pass, *pair.pass_to_pass, *pair.pass_to_fail}
        left_out = tuple(sorted(pair.tests - decisive))
        extra = job.runner.deselect_options(left_out) if left_out else []
        if extra is None:  # this runner runs whole files: every test is repeated
            extra, left_out = [], ()
        repetitions = list(range(1, self.settings.repetitions))
        touched, reused_ids, files = self._existing_plan(job, mirror, golden)
        deselected = tuple(sorted(reused_ids))
        existing_extra = job.runner.deselect_options(deselected) if deselected else []

        def side_chain(side: str) -> tuple[list[Any], list[Any] | Outcome]:
            repeated = self._runs(
                job, sessions[side], job.files, "golden", side, repetitions, extra, left_out
            )
            if not files or any(r.timed_out or not r.report_found for r, _ in repeated):
                return repeated, []
            with contextlib.ExitStack() as stack:
                session = self._existing_session(
                    job, side, sessions[side], environment, mirror, run_dir, stack
                )
                if isinstance(session, Outcome):
                    return repeated, session
                ran = self._runs(
                    job, session, files, "existing", side, [0], existing_extra, deselected
                )
            return repeated, ran

        chains = _both({side: _bind(side_chain, side) for side in SIDES})
        failed = _record(runs, {side: chains[side][0] for side in SIDES})
        made = {side: chains[side][1] for side in SIDES}
        ran = {side: [] if isinstance(m, Outcome) else m for side, m in made.items()}
        failed_existing = _record(runs, ran)
        if failed is not None:
            return failed
        for side in SIDES:
            getattr(golden, side).extend(run for run, _ in chains[side][0])
        graded = grade(golden.before, golden.after)
        dropped = _grade_drop(graded, golden)
        if dropped is not None:
            return dropped
        for side in SIDES:
            if isinstance(made[side], Outcome):
                return made[side]
        if failed_existing is not None:
            return failed_existing
        if not touched:
            return graded, _Runs([], [], {"before": [], "after": []})
        return graded, _existing_result(golden, reused_ids, ran if files else {})

    def _existing_plan(
        self, job: _Job, mirror: Path, golden: _Runs
    ) -> tuple[bool, set[str], list[str]]:
        """What the existing-test pass runs: the touched test files as they are at the base
        commit, once before and once after the fix.

        These are the repository's existing tests (Table 1), and with the golden tests they
        decide which patch lines are executable. A test the test patch leaves as it was (no
        line of its definition changed, no module-level line removed) already ran in the golden
        runs' first pair: its verdicts and coverage (per test, pytest's node ids) are read from
        there. Returns whether the test patch touches any existing test file, those reused ids
        and the files the rest is in (run with the reused tests deselected; a file with
        nothing else to run is not run).
        """
        files = _existing_test_files(job.record.test_patch)
        if not files:
            return False, set(), []
        return True, *_reusable(job, mirror, files, golden)

    def _existing_session(
        self,
        job: _Job,
        side: str,
        golden_session: Session,
        environment: object,
        mirror: Path,
        run_dir: Path,
        stack: contextlib.ExitStack,
    ) -> Session | Outcome:
        """A checkout of ``side`` without the test patch (the golden patch after): the golden
        one with the test patch undone (:func:`restore`: what its runs compiled stays
        compiled), or, when a run left a file the patch names that cannot be written back, a
        new one (opened on ``stack``). A run that made one of its paths a symbolic link is a
        drop (``unsafe_path``)."""
        record = job.record
        label = "test patch (undone after its runs)"
        try:
            restore(golden_session.tree, mirror, record.base_commit, record.test_patch, label)
            return golden_session
        except UnsafePathError as error:
            paths = "; ".join(found.text() for found in error.found)
            return Outcome.drop(STAGE, DropReason.UNSAFE_PATH, patch=label, paths=paths)
        except PatchError as error:
            _note(
                job.logs / f"existing-{side}.log",
                f"a new checkout for the existing tests: {error}\n",
            )
        session = stack.enter_context(
            self._session(job, environment, mirror, run_dir / f"existing-{side}")
        )
        if side == "after":
            try:
                session.apply(record.patch, "golden patch (without the test patch)")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
        return session

    def _runs(
        self,
        job: _Job,
        session: Session,
        files: list[str],
        suite: str,
        side: str,
        repetitions: Sequence[int],
        extra: Sequence[str] = (),
        deselected: tuple[str, ...] = (),
    ) -> list[tuple[RunResult, coverage.Measured | None]]:
        """Runs of one side in one session, one after the other, up to the first that cannot
        be graded (timed out, or no report)."""
        made = []
        for repetition in repetitions:
            run, measured = self._run(
                job, session, files, suite, side, repetition, extra, deselected
            )
            made.append((run, measured))
            if run.timed_out or not run.report_found:
                break
        return made

    def _run(
        self,
        job: _Job,
        session: Session,
        files: list[str],
        suite: str,
        side: str,
        repetition: int,
        extra: Sequence[str] = (),
        deselected: tuple[str, ...] = (),
    ) -> tuple[RunResult, coverage.Measured | None]:
        """One run of ``files`` (``extra``: runner options leaving ``deselected`` out); the
        first repetition of a side runs under coverage.py when measuring (its JSON report read
        back), the others run plain: instrumentation costs time, and a verdict that changes
        under it shows up as flaky."""
        measure = bool(job.include()) and repetition == 0
        return measured_run(
            session,
            job.runner,
            files,
            name=f"{suite}-{side}-{repetition}",
            side=side,
            logs=job.logs,
            timeout_s=self.settings.timeout_s,
            python=job.python,
            suite=suite,
            repetition=repetition,
            include=job.include() if measure else (),
            side_lines=job.side_lines(side),
            extra=extra,
            deselected=deselected,
        )

    def _change_coverage(
        self, job: _Job, golden: _Runs, existing: _Runs
    ) -> coverage.ChangeCoverage | None | Outcome:
        """ΔC of the golden tests (None when not measured) or the COVERAGE_UNMEASURABLE drop."""
        if job.lines is None:
            return None
        missing = [
            f"{suite}-{side}-{index}"
            for suite, runs in (("golden", golden), ("existing", existing))
            for side, measured in runs.measured.items()
            for index, item in enumerate(measured)
            if item is None
        ]
        if missing:
            return Outcome.drop(
                STAGE,
                DropReason.COVERAGE_UNMEASURABLE,
                error="coverage.py wrote no report for some runs",
                runs=", ".join(missing),
                log=str(job.logs / f"{missing[0]}.log"),
            )
        measured_golden = {side: list(items) for side, items in golden.measured.items()}
        credited = credit.credit_for(job.runner, golden.changes, job.files)
        change = coverage.change_coverage(
            job.lines, measured_golden, existing.measured, credited.lines
        )
        change = dataclasses.replace(change, golden_upper_bound=credited.upper_bound)
        report = {
            "golden_coverage": change.golden,
            "golden_coverage_upper_bound": change.golden_upper_bound,
            "existing_coverage": change.existing,
            "patch_lines": {
                "removed": {path: sorted(lines) for path, lines in job.lines.removed.items()},
                "added": {path: sorted(lines) for path, lines in job.lines.added.items()},
            },
            "lines": coverage.attribution(change, measured_golden),
        }
        report_path = job.logs / "coverage.json"
        atomic_write_text(report_path, json.dumps(report, indent=1, sort_keys=True) + "\n")
        if change.golden is None:
            return Outcome.drop(
                STAGE,
                DropReason.COVERAGE_UNMEASURABLE,
                error="no line of the golden patch is executed by the existing or golden tests",
                python_lines_removed=str(sum(map(len, job.lines.removed.values()))),
                python_lines_added=str(sum(map(len, job.lines.added.values()))),
                patch_files=", ".join(sorted({*job.lines.removed, *job.lines.added})),
                report=str(report_path),
            )
        return change

    def _instance(
        self,
        record: Candidate,
        graded: Grade,
        golden: _Runs,
        existing: _Runs,
        change: coverage.ChangeCoverage | None,
        spec: EnvironmentSpec,
        mirror: Path,
        resolution: Resolution,
        runs: Sequence[RunResult],
        extra: Mapping[str, str],
    ) -> Instance:
        files, lines = codebase_size(mirror, record.base_commit)
        edited_files, edited_lines = patch_size(record.test_patch)
        existing_grade = grade(existing.before, existing.after) if existing.before else None
        existing_tests = existing_grade.tests if existing_grade else frozenset()
        metadata = {
            "backend": self.backend.name,
            "sandbox": self.backend.fingerprint().get("sandbox", self.backend.name),
            **resolution.metadata(),
            "environment": spec.key(),
            "runs_per_side": str(self.settings.repetitions),
            "coverage": "on" if change is not None else "off",
            "toolkit_version": __version__,
            **extra,
        }
        if change is not None:
            metadata["existing_coverage"] = str(change.existing)
            if change.golden_upper_bound:
                metadata["golden_coverage_upper_bound"] = "true"
        if graded.expected:
            metadata["expected_outcome_tests"] = json.dumps(list(graded.expected))
        uncollected = {
            side: sorted({name for run in runs for name in run.collection_errors})
            for side, runs in (("before", golden.before), ("after", golden.after))
        }
        if any(uncollected.values()):
            metadata["collection_errors"] = json.dumps(uncollected, sort_keys=True)
        offline = needs_network(golden.before, golden.after)
        if offline:
            metadata["needs_network"] = json.dumps(offline, sort_keys=True)
        unlisted = unlisted_tests(graded, golden.before, golden.after, {*graded.expected, *offline})
        if unlisted:
            metadata["unlisted_tests"] = json.dumps(unlisted, sort_keys=True)
        if self._network(record, resolution):
            metadata["network"] = "allowed"
        interruptions = sum(run.daemon_interruptions for run in runs)  # every run made, once
        if interruptions:
            metadata["daemon_interruptions"] = str(interruptions)
        return Instance.from_candidate(
            record,
            version=resolution.version,
            environment_setup_commit=resolution.environment_commit,
            FAIL_TO_PASS=graded.fail_to_pass,
            PASS_TO_PASS=graded.pass_to_pass,
            golden_coverage=None if change is None else change.golden,
            stats=InstanceStats(
                codebase_files=files,
                codebase_lines=lines,
                golden_test_files_edited=edited_files,
                golden_test_lines_edited=edited_lines,
                existing_tests=(
                    existing_grade.transitions()
                    if existing_grade
                    else Transitions(fail_to_pass=0, fail_to_fail=0, pass_to_pass=0, pass_to_fail=0)
                ),
                golden_tests=graded.transitions(),
                golden_tests_added=len(graded.tests - existing_tests),
                golden_tests_removed=len(existing_tests - graded.tests),
            ),
            run_metadata=metadata,
        )


def measurable(spec: EnvironmentSpec, measured: bool) -> EnvironmentSpec:
    """The spec, with coverage.py among its packages when coverage is ``measured``."""
    named = {canonicalize_name(Requirement(package).name) for package in spec.packages}
    if not measured or coverage.COVERAGE_PACKAGE in named:
        return spec  # a spec pinning its own coverage.py keeps it
    requirement = coverage.coverage_requirement(spec.python)
    return dataclasses.replace(spec, packages=(*spec.packages, requirement))


def _grade_drop(graded: Grade, golden: _Runs) -> Outcome | None:
    """FLAKY, PASS_TO_FAIL or NO_FAIL_TO_PASS with evidence; None when the grade keeps it."""
    last = golden.after[-1].log_path
    if graded.flaky:
        verdicts = {
            test: {
                side: sorted(v.value for v in side_verdicts(runs, test))
                for side, runs in (("before", golden.before), ("after", golden.after))
            }
            for test in graded.flaky
        }
        return Outcome.drop(
            STAGE,
            DropReason.FLAKY,
            tests=", ".join(graded.flaky),
            verdicts=json.dumps(verdicts, sort_keys=True),
            runs_per_side=str(len(golden.before)),
            log=last,
        )
    if graded.pass_to_fail:
        return Outcome.drop(
            STAGE, DropReason.PASS_TO_FAIL, tests=", ".join(graded.pass_to_fail), log=last
        )
    offline = network_fail_to_pass(graded, golden.before, golden.after)
    if not graded.fail_to_pass and offline:
        return Outcome.drop(
            STAGE,
            DropReason.NEEDS_NETWORK,
            tests=", ".join(offline),
            errors="\n".join(f"{test}: {line}" for test, line in offline.items()),
            log=last,
        )
    if not graded.fail_to_pass:
        return Outcome.drop(
            STAGE, DropReason.NO_FAIL_TO_PASS, fail_to_fail=", ".join(graded.fail_to_fail), log=last
        )
    return None


def _existing_result(
    golden: _Runs,
    reused_ids: set[str],
    ran: Mapping[str, list[tuple[RunResult, coverage.Measured | None]]],
) -> _Runs:
    """The existing tests per side: the run of what had to run (if anything did) with the
    reused tests' first-pair verdicts and coverage added, graded as one run of the whole files."""
    result = _Runs([], [], {"before": [], "after": []})
    for side in SIDES:
        first = getattr(golden, side)[0]
        tests = {t: status for t, status in first.tests.items() if t in reused_ids}
        measured = [_reused_coverage(golden.measured[side][0], reused_ids)] if tests else []
        if ran:
            ((run, ran_measured),) = ran[side]
            # graded as one run of the whole files: the reused tests are no longer left out
            run = run.model_copy(update={"tests": {**run.tests, **tests}, "deselected": ()})
            measured.insert(0, ran_measured)
        else:
            run = first.model_copy(update={"suite": "existing", "tests": tests})
        getattr(result, side).append(run)
        result.measured[side].extend(measured)
    return result


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


def _both(work: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """The work of each side run at the same time (separate checkouts: nothing is shared);
    the results by side. A side's error is raised once both have ended."""
    with ThreadPoolExecutor(max_workers=len(work), thread_name_prefix="swt-side") as pool:
        futures = {side: pool.submit(function) for side, function in work.items()}
    return {side: future.result() for side, future in futures.items()}


def _record(
    runs: list[RunResult], made: Mapping[str, list[tuple[RunResult, Any]]]
) -> Outcome | None:
    """Add the runs made (before's, then after's) to ``runs``; the drop of the first that
    cannot be graded, in that order."""
    failed = None
    for side in SIDES:
        for run, _ in made[side]:
            runs.append(run)
            if failed is None and run.timed_out:
                failed = _timeout(run)
            elif failed is None and not run.report_found:
                failed = _runner_failed(run)
            elif failed is None and run.crashed:
                failed = _run_crashed(run)
    return failed


def _reusable(
    job: _Job, mirror: Path, files: list[str], golden: _Runs
) -> tuple[set[str], list[str]]:
    """The existing tests whose golden first-pair results stand for them, and the files that
    still have to run. Pytest only (its node ids are the coverage contexts): the golden test
    ids whose function exists in the file at the base commit and whose lines (or its class's,
    when a class-level line is removed) the test patch leaves alone. A file whose patch removes
    a line outside every definition (an import, a module-level fixture or constant) runs
    whole; a file runs at all only for a changed test or one the test patch removes.
    """
    if job.runner.kind != "pytest":
        return set(), files
    seen = {test for run in (golden.before[0], golden.after[0]) for test in run.tests}
    patched = {f.source_file.removeprefix("a/"): f for f in parse_patch(job.record.test_patch)}
    reused: set[str] = set()
    to_run = []
    for path in files:
        source = git("show", f"{job.record.base_commit}:{path}", cwd=mirror, check=False)
        try:
            spans = _definitions(ast.parse(source))
        except SyntaxError:
            to_run.append(path)
            continue
        changed = _changed(patched[path], spans)
        if changed is None:
            to_run.append(path)
            continue
        named = {test: test.partition("::")[2].split("[", 1)[0] for test in seen}
        ids = {
            test
            for test, name in named.items()
            if test.partition("::")[0] == path
            and name in spans
            and not any(name == c or name.startswith(c + "::") for c in changed)
        }
        reused |= ids
        tests_at_base = {n for n, (_, _, is_class) in spans.items() if _is_test(n, is_class)}
        if tests_at_base - {named[test] for test in ids}:
            to_run.append(path)  # a test the patch changes or removes
    return reused, to_run


def _is_test(name: str, is_class: bool) -> bool:
    return not is_class and name.rpartition("::")[2].startswith("test")


def _changed(patched: Any, spans: Mapping[str, tuple[int, int, bool]]) -> set[str] | None:
    """Definitions a file's patch changes: the innermost one holding a removed line, or a
    function an added line lands inside; None when it removes a line of no definition."""

    def innermost(*lines: int) -> tuple[str, bool] | None:
        holding = [
            (first, name, is_class)
            for name, (first, last, is_class) in spans.items()
            if all(first <= line <= last for line in lines)
        ]
        return max(holding)[1:] if holding else None

    changed: set[str] = set()
    for hunk in patched:
        previous = hunk.source_start - 1  # the base line the next added line follows
        for line in hunk:
            if line.is_removed:
                found = innermost(line.source_line_no)
                if found is None:
                    return None
                changed.add(found[0])
                previous = line.source_line_no
            elif line.is_added:
                found = innermost(previous, previous + 1)
                if found is not None and not found[1]:  # inside a function's body
                    changed.add(found[0])
            else:
                previous = line.source_line_no
    return changed


def _definitions(tree: ast.Module) -> dict[str, tuple[int, int, bool]]:
    """Qualified names (``Class::method``) of a module's functions and classes: the lines
    each spans (its decorators included) and whether it is a class."""
    spans: dict[str, tuple[int, int, bool]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                is_class = isinstance(child, ast.ClassDef)
                spans[prefix + child.name] = (first, child.end_lineno or child.lineno, is_class)
                if is_class:
                    visit(child, f"{prefix}{child.name}::")

    visit(tree, "")
    return spans


def _reused_coverage(
    measured: coverage.Measured | None, tests: set[str]
) -> coverage.Measured | None:
    """The lines of ``measured`` that ``tests`` ran, or that ran outside any test (imports)."""
    if measured is None:
        return None
    contexts = {
        path: {line: names for line, names in lines.items() if "" in names or tests & set(names)}
        for path, lines in measured.contexts.items()
    }
    executed = {path: frozenset(lines) for path, lines in contexts.items()}
    return coverage.Measured(executed, contexts)


def _existing_test_files(test_patch: str) -> list[str]:
    """Python test files the test patch modifies or deletes: they exist at the base commit."""
    patch_set = parse_patch(test_patch)
    return sorted(
        {
            patched.source_file.removeprefix("a/")
            for patched in patch_set
            if not patched.is_added_file
            and patched.source_file.endswith(".py")
            and PurePosixPath(patched.source_file).name not in NOT_RUNNABLE
        }
    )


def _patch_files(patch: str) -> list[str]:
    return sorted(patched.path for patched in parse_patch(patch))


def _with_runs(outcome: Outcome, logs: Path) -> Outcome:
    """A drop's evidence plus the file listing every run made before it (runs.jsonl)."""
    verdict = outcome.verdict
    evidence = {**verdict.evidence, "runs": str(logs / "runs.jsonl")}
    return Outcome.drop(verdict.stage, verdict.reason, **evidence)


def _timeout(run: RunResult) -> Outcome:
    return Outcome.drop(
        STAGE,
        DropReason.TIMEOUT,
        side=run.side,
        suite=run.suite,
        seconds=str(run.duration_s),
        log=run.log_path,
    )


def _runner_failed(run: RunResult) -> Outcome:
    """The runner itself failed (a usage or internal error, a crash, no report): no test
    verdict can be read from the run, so none is taken as a failure."""
    return Outcome.drop(
        STAGE,
        DropReason.RUNNER_FAILED,
        side=run.side,
        suite=run.suite,
        exit_code=str(run.exit_code),
        log_tail=_tail(run.log_path),
        log=run.log_path,
    )


def _run_crashed(run: RunResult) -> Outcome:
    """The runner crashed part way (pytest's INTERNALERROR) after writing a report: the tests
    it never reached would read as failing, so the run is no verdict."""
    return Outcome.drop(
        STAGE,
        DropReason.RUN_CRASHED,
        side=run.side,
        suite=run.suite,
        exit_code=str(run.exit_code),
        crash=run.crashed,
        log=run.log_path,
    )


def _tail(path: str, lines: int = 20) -> str:
    """The last lines of a run's log (the runner's own complaint is there)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _patched_files(record: Candidate) -> str:
    prefix = "+++ b/"
    lines = record.test_patch.splitlines()
    return ", ".join(line[len(prefix) :] for line in lines if line.startswith(prefix))


def _note(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8", errors="replace") as handle:
        handle.write(text)


def _json_list(data: bytes | None) -> list[str]:
    """A JSON list of strings written by a run, or nothing when it is not one."""
    try:
        value = json.loads(data or b"[]")
    except ValueError:
        return []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _failed(packages: Sequence[str]) -> dict[str, str]:
    return {"test_requirements_failed": json.dumps(list(packages))} if packages else {}


def _test_changes(job: _Job, mirror: Path, tree: Path) -> dict[str, set[str] | None]:
    """The definitions the test patch changed in each test file that runs, read as the
    evaluation reads a prediction's (the base commit's file from the mirror) against the file
    as the patch left it in ``tree``; None: every test of the file (new, or unparsable)."""
    read = file_reader(mirror, job.record.base_commit)

    def old(path: str) -> str | None:
        try:
            return read(path)
        except UnicodeDecodeError:  # not UTF-8 text: no definition can be told apart
            return None

    return patch_changes(old, {path: _read(tree, path) for path in job.files})


def _read(tree: Path, path: str) -> str | None:
    """A file of a checkout (a patch applied there has checked that no link leads out of it);
    None when it is not there."""
    try:
        return (tree / path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
