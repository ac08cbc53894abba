"""The evaluation stage: one prediction on one instance, its tests run on R and on R∘X."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.core import __version__
from builder.core.config import DockerConfig, ValidationConfig
from builder.core.faults import InfrastructureError, as_fault
from builder.core.files import inside
from builder.core.gitutil import GitError, file_reader
from builder.core.pipeline import Outcome, Stage
from builder.core.records import Candidate, DropReason, RunResult, TestStatus
from builder.core.store import ResultStore, result_key
from builder.evaluate.records import EvalResult, EvalTask, MutantResult
from builder.evaluate.scores import InstanceScore, Transition
from builder.evaluate.strict import fuzzy_diff, mutation
from builder.evaluate.strict.prediction_patch import PreparedPatch, prepare
from builder.evaluate.strict.scripts import ScriptRunner
from builder.evaluate.swt import runs as swt_runs
from builder.evaluate.unified import unified_diff
from validation import coverage
from validation.coverage.counts import COUNTER
from validation.coverage.credit import VERSION as CREDIT_VERSION
from validation.coverage.credit import Credit, credit_for, delta_coverage
from validation.environments.environment import EnvironmentBuildError, EnvironmentSpec
from validation.environments.specs import SpecError
from validation.grading import Verdict, verdict_of
from validation.measured_run import measured_run
from validation.runs.backends import Session
from validation.runs.generated import place_generated
from validation.runs.patches import PatchError, runnable_test_files
from validation.runs.runners import PYTEST_LAUNCHER, Runner, make_runner
from validation.stage import ValidateStage, measurable
from validation.test_changes import generated, patch_changes

STAGE = "evaluate"
EVALUATION_VERSION = 9
"""Bump when how predictions are run or scored changes: it is part of every result key
(which lines count for the prediction's tests in ΔC: ``CREDIT_VERSION``, beside it).
8: ΔC credits only the lines the prediction's own tests execute (per-test contexts).
9: SWT-Bench's semantics (``swt_runs``) beside ours."""
ERROR = "evaluation error: "
"""How a score names a failure of the evaluation itself (not of the prediction)."""
BASELINE = "evaluate-baseline"
"""The store's stage name of an instance's executable patch lines (see ``_baseline``)."""


class EvaluateStage(Stage):
    """EvalTask → EvalResult; every task is kept (a prediction that cannot run is a score)."""

    name = STAGE
    output_model = EvalResult

    def __init__(
        self,
        settings: ValidationConfig,
        work_dir: Path,
        repos: Mapping[str, str],
        docker: DockerConfig | None = None,
    ) -> None:
        self.settings = settings
        self.work_dir = Path(work_dir)
        self.validate = ValidateStage(
            settings.model_copy(update={"repetitions": 1, "coverage": True}),
            self.work_dir,
            repos,
            docker,
        )
        """The one-run validation with coverage that measures baselines; its mirrors, backend
        and environment resolver are this stage's too (repetitions and coverage change
        neither)."""
        self.repos = self.validate.repos
        self.backend = self.validate.backend
        self.environments = self.validate.environments

    def fingerprint(self) -> Any:
        return {
            "evaluation": EVALUATION_VERSION,
            "coverage_credit": CREDIT_VERSION,
            "timeout_s": self.settings.timeout_s,
            "coverage": self.settings.coverage,
            "backend": self.backend.fingerprint(),
            "environments": self.environments.fingerprint(),
            "toolkit": __version__,
            "runtime": [COUNTER.digest, PYTEST_LAUNCHER.digest],  # what runs in each run
        }

    def confirm(self, fault: str, first: Any) -> str | None:
        """As validation's: a fault a prediction's code can imitate stops the evaluation only
        when the backend's self-test, run for no prediction, fails too."""
        return self.validate.confirm(fault, first)

    def key(self, record: EvalTask) -> str:
        fingerprint = {
            **self.fingerprint(),
            "spec": self.environments.spec_digest(
                record.instance.repo, record.instance.instance_id
            ),
        }
        return result_key(self.name, fingerprint, _key_input(record))

    def group(self, record: EvalTask) -> str:
        instance = record.instance
        return f"{instance.repo}@{instance.version or instance.environment_setup_commit}"

    def process(self, record: EvalTask) -> Outcome:
        """The task's result; a fault of the machine (a sandbox that does not start, a mirror
        that cannot be read, a full disk, …) is an ``infra_error`` drop instead: no score,
        never stored, so the next evaluation runs the task again."""
        try:
            return self._scored(record)
        except (InfrastructureError, GitError, OSError) as error:
            fault = as_fault(error, record.instance.repo)
            if fault is None:
                raise
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **fault.evidence())

    def _scored(self, record: EvalTask) -> Outcome:
        key = self.key(record)
        instance = record.instance
        logs = inside(self.work_dir / "logs" / STAGE, instance.instance_id, key[:12])
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True, exist_ok=True)
        if record.invalid:
            return self._result(record, not_applicable=record.invalid, logs=logs)
        if record.semantics == swt_runs.SWT_BENCH:
            return swt_runs.process(self, record, key, logs)
        mirror = self.repos.mirror(instance.repo, instance.base_commit)  # a fault: raises
        read = file_reader(mirror, instance.base_commit)
        prepared = prepare(
            instance.test_patch if record.gold else record.patch,
            read,
            requested="unified" if record.gold else record.patch_format,
            tests_only=record.tests_only,
            mode="unit" if record.gold else record.mode,
        )
        if not prepared.applicable:
            return self._result(record, prepared=prepared, logs=logs)
        changes = patch_changes(read, prepared.new_texts)
        try:
            resolution = self.environments.resolve(instance, mirror)
            spec = self._measurable(resolution.spec)
            environment = self.backend.prepare(spec)
        except (SpecError, EnvironmentBuildError) as error:
            return self._result(record, prepared, f"{ERROR}environment: {error}", logs=logs)
        if record.mode == "repro" and not record.gold:
            runner: Runner = ScriptRunner()
            files = list(prepared.test_files)
        else:
            runner = make_runner(spec.runner, spec.test_command)
            files = runnable_test_files(prepared.diff)
        if not files:
            reason = "the patch changes no test file the runner can run"
            return self._result(record, prepared, reason, logs=logs)
        lines = coverage.patch_lines(instance.patch) if self.settings.coverage else None
        run_dir = self.work_dir / "runs" / STAGE / key[:16]
        measured: dict[str, coverage.Measured | None] = {}
        if record.mutants:
            executed = self._baseline(instance) if lines is not None else None
            fixed = fuzzy_diff.apply(fuzzy_diff.parse(instance.patch), read, exact=True)
            targets = mutation_lines(instance.patch, fixed, executed)
        try:
            commit = instance.base_commit
            with self.backend.session(environment, mirror, commit, run_dir) as session:
                session.services = spec.services  # as validation's runs had them
                place_generated(session, mirror, logs / "generated.log", spec.project_commit)
                runs = self._both_sides(
                    record, prepared, session, runner, files, logs, lines, spec, measured
                )
                if not isinstance(runs, str) and record.mutants:
                    scored = generated(sorted(runs[1].tests), changes)
                    killed = self._mutation(
                        record, fixed, targets, session, runner, files, logs, spec, runs[1], scored
                    )
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(runs, str):
            return self._result(record, prepared, runs, logs=logs)
        transitions = _transitions(runs, changes)
        credit = _credit(runner, changes, files)
        delta = self._delta_coverage(instance, measured, credit) if lines is not None else None
        return self._result(
            record,
            prepared,
            transitions=transitions,
            runs=runs,
            logs=logs,
            coverage=delta,
            coverage_upper_bound=delta is not None and credit.upper_bound,
            mutants=killed if record.mutants else (),
        )

    def _mutation(
        self,
        record: EvalTask,
        fixed: Mapping[str, str | None],
        targets: Mapping[str, set[int]],
        session: Session,
        runner: Runner,
        files: list[str],
        logs: Path,
        spec: EnvironmentSpec,
        after: RunResult,
        scored: list[str],
    ) -> tuple[MutantResult, ...]:
        """Each chosen mutant of the fixed code (``fixed``: the files the golden patch leaves)
        on the ``targets`` lines, applied in turn to R∘X in the session: the scored tests that
        passed on R∘X and fail (or time out) on it kill it."""
        candidates = [
            mutant
            for path in sorted(targets)
            if fixed.get(path)
            for mutant in mutation.mutants(path, fixed[path], targets[path])  # type: ignore[arg-type]
        ]
        passing = [t for t in scored if _side(after.tests.get(t)) == "pass"]
        results = []
        for index, mutant in enumerate(mutation.select(candidates, record.mutants)):
            original = {mutant.path: fixed[mutant.path]}
            session.apply(unified_diff({mutant.path: mutant.text}, original.get), "mutant")
            run = self._run(
                session, runner, files, "after", logs, None, spec, {}, name=f"mutant-{index}"
            )
            session.apply(unified_diff(original, {mutant.path: mutant.text}.get), "mutant undone")
            killed_by = passing if run.timed_out else [
                t for t in passing if _side(run.tests.get(t)) != "pass"
            ]  # fmt: skip
            results.append(
                MutantResult(
                    key=mutant.key,
                    operator=mutant.operator,
                    description=mutant.description,
                    killed_by=tuple(killed_by),
                    equivalent=mutant.same_bytecode and not killed_by,
                )
            )
        return tuple(results)

    def _missed_coverage(self, record: EvalTask) -> float | None:
        """ΔC of a prediction that is not applicable: 0 when the instance's golden patch has
        executable lines (its recorded golden coverage is a number), None when it has none
        (the instance is left out of coverage analysis) or coverage is not measured."""
        return missed_coverage(record.golden_coverage, self.settings.coverage)

    def _measurable(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        return measurable(spec, self.settings.coverage)

    def _delta_coverage(
        self,
        instance: Candidate,
        measured: Mapping[str, coverage.Measured | None],
        credit: Credit,
    ) -> float | None:
        """ΔC: the share of the instance's executable patch lines that the prediction's tests
        execute (``credit``: which lines of a run count), on the side where each line lives
        (None: no executable line, or a run wrote no coverage report)."""
        executable = self._baseline(instance)
        return delta_coverage(executable, measured, credit)

    def _baseline(self, instance: Candidate) -> list[tuple[str, str, int]] | None:
        """The instance's executable patch lines — executed by its existing or golden tests on
        their side — measured once per instance by a one-run validation and kept in the store
        (every later prediction on the instance reuses it). None when that validation drops."""
        validate = self.validate
        key = validate.key(instance)
        store = ResultStore(self.work_dir / "store")
        stored = store.get(BASELINE, key)
        if stored is None:
            outcome = validate.process(instance)
            rows = None
            if outcome.verdict.kept:
                report = Path(outcome.verdict.evidence["logs"]) / "coverage.json"
                rows = json.loads(report.read_text(encoding="utf-8"))["lines"]
            stored = {"executable": rows}
            store.put(BASELINE, key, stored)
        rows = stored["executable"]
        return None if rows is None else [(r["side"], r["path"], r["line"]) for r in rows]

    def _both_sides(
        self,
        record: EvalTask,
        prepared: PreparedPatch,
        session: Session,
        runner: Runner,
        files: list[str],
        logs: Path,
        lines: coverage.PatchLines | None,
        spec: EnvironmentSpec,
        measured: dict[str, coverage.Measured | None],
    ) -> tuple[RunResult, RunResult] | str:
        """The prediction's test files run on R, then on R∘X (under coverage.py when ``lines``
        are given: ``measured`` gets each side's executed lines); or why they cannot run."""
        try:
            session.apply(prepared.diff, "prediction")
        except PatchError as error:
            return f"the patch does not apply to the checkout: {error}"
        try:
            session.apply(record.instance.patch, "golden patch", check_only=True)
        except PatchError as error:
            return f"{ERROR}the golden patch does not apply after the prediction: {error}"
        before = self._run(session, runner, files, "before", logs, lines, spec, measured)
        session.apply(record.instance.patch, "golden patch")
        after = self._run(session, runner, files, "after", logs, lines, spec, measured)
        return before, after  # a run that timed out reports what it finished: the rest failed

    def _run(
        self,
        session: Session,
        runner: Runner,
        files: list[str],
        side: str,
        logs: Path,
        lines: coverage.PatchLines | None,
        spec: EnvironmentSpec,
        measured: dict[str, coverage.Measured | None],
        name: str = "",
    ) -> RunResult:
        """One run of ``files``; ``name`` (default: the side) names its log and report. Under
        coverage.py when ``lines`` are given: ``measured[side]`` gets its executed lines (None
        when it timed out or wrote no report)."""
        include = sorted({*lines.removed, *lines.added}) if lines is not None else []
        run, executed = measured_run(
            session,
            runner,
            files,
            name=name or side,
            side=side,
            logs=logs,
            timeout_s=self.settings.timeout_s,
            python=spec.python,
            include=include,
            side_lines=(lines.removed if side == "before" else lines.added) if lines else None,
        )
        if include:
            measured[side] = executed
        return run

    def _result(
        self,
        record: EvalTask,
        prepared: PreparedPatch | None = None,
        not_applicable: str = "",
        *,
        transitions: list[Transition] | None = None,
        runs: tuple[RunResult, ...] = (),
        logs: Path,
        coverage: float | None = None,
        coverage_upper_bound: bool = False,
        mutants: tuple[MutantResult, ...] = (),
    ) -> Outcome:
        prepared = prepared or PreparedPatch()
        reason = not_applicable or prepared.not_applicable
        if reason:
            coverage = self._missed_coverage(record)
        score = InstanceScore(
            instance_id=record.instance.instance_id,
            applicable=not reason,
            not_applicable=reason,
            edits_code=prepared.edits_code,
            transitions=transitions or [],
            coverage=coverage,
            coverage_upper_bound=coverage_upper_bound and not reason,
            mutants=len(mutants),
            mutants_killed=sum(1 for m in mutants if m.killed_by),
            mutants_equivalent=sum(1 for m in mutants if m.equivalent),
        )
        result = EvalResult(
            instance_id=record.instance.instance_id,
            model=record.model,
            score=score,
            patch_format=prepared.format.value if prepared.format else "",
            test_files=prepared.test_files,
            code_files=prepared.code_files,
            runs=tuple(runs),
            logs=str(logs),
            mutants=mutants,
        )
        return Outcome.keep(STAGE, result)


def _credit(runner: Runner, changes: Mapping[str, set[str] | None], files: list[str]) -> Credit:
    """How a prediction's runs are credited in ΔC (``credit_for``: per test under pytest,
    whole runs otherwise); repro scripts are all the prediction's."""
    if isinstance(runner, ScriptRunner):
        return Credit(None)
    return credit_for(runner, changes, files)


def mutation_lines(
    patch: str,
    fixed: Mapping[str, str | None],
    executed: list[tuple[str, str, int]] | None,
) -> dict[str, set[int]]:
    """The golden patch's lines to mutate, per file: its added or modified lines (as they stand
    after the fix) that are executable — those the instance's existing or golden tests execute
    on R∘X (``executed``: its measured executable patch lines), or, when that is not measured
    (None), those that are part of a statement per ``ast`` (no comment, docstring or blank)."""
    added = coverage.patch_lines(patch).added
    if executed is not None:
        run = {(path, line) for side, path, line in executed if side == "after"}
        chosen = {path: {n for n in lines if (path, n) in run} for path, lines in added.items()}
    else:
        chosen = {
            path: mutation.statement_lines(fixed.get(path) or "", lines)
            for path, lines in added.items()
        }
    return {path: lines for path, lines in chosen.items() if lines}


def missed_coverage(golden_coverage: float | None, measured: bool) -> float | None:
    """ΔC of an instance whose prediction is not applicable or missing: it executes none of
    the golden patch's executable lines (0), unless the patch has none (``golden_coverage``
    None: the instance is left out of coverage analysis) or coverage is off (``measured``)."""
    return 0.0 if measured and golden_coverage is not None else None


def _key_input(record: EvalTask) -> dict[str, Any]:
    """The task as its key hashes it. A patch that is not UTF-8 (lone surrogates, which JSON
    text may carry) is hashed by its escaped bytes under a field of its own, so that it cannot
    collide with a patch spelling those escapes out; the task itself keeps the patch, which
    the evaluation reports not applicable."""
    data = record.model_dump(mode="json")
    try:
        record.patch.encode("utf-8")
    except UnicodeEncodeError:
        raw = record.patch.encode("utf-8", "surrogatepass")
        data["patch"] = ""
        data["patch_not_utf8"] = raw.decode("utf-8", "backslashreplace")
    return data


def _side(status: TestStatus | None) -> str:
    if status is None:
        return "fail"  # a test missing on one side failed there (as in grading)
    verdict = verdict_of(status)
    return {Verdict.PASS: "pass", Verdict.FAIL: "fail"}.get(verdict, "other")


def _transitions(
    runs: tuple[RunResult, RunResult], changes: Mapping[str, set[str] | None]
) -> list[Transition]:
    """The predicted tests' verdicts on R and R∘X. A test file that a side could not collect
    (``RunResult.collection_errors``) has its tests failing there, as in grading (a test
    missing from a side failed there); when no test of such a file is known on either side,
    the file itself stands as one test: failing on each side that could not collect it, and
    neither passing nor failing (``other``) on a side that collected it and ran nothing."""
    before, after = runs
    every = sorted({*before.tests, *after.tests})

    def verdict(run: RunResult, test: str) -> str:
        if test.partition("::")[0] in run.collection_errors:
            return "fail"
        return _side(run.tests.get(test))

    transitions = [
        Transition(test=test, before=verdict(before, test), after=verdict(after, test))
        for test in generated(every, changes)
    ]
    known = {test.partition("::")[0] for test in every}
    for path in sorted(changes):
        broken = [path in run.collection_errors for run in runs]
        if path in known or not any(broken):
            continue
        before_side, after_side = ("fail" if flag else "other" for flag in broken)
        transitions.append(Transition(test=path, before=before_side, after=after_side))
    return transitions
