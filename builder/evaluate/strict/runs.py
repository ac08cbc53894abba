"""``--semantics strict``'s runs in the evaluation stage: the prediction's own test files on R
and on R∘X (under coverage.py for ΔC), its tests' transitions, and the mutants of the fix.

Only the tests a prediction wrote are scored (``transitions``); ΔC credits the golden patch's
executable lines those tests execute, on the side where each line lives; mutants of the fixed
code are killed by scored tests that passed on R∘X.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from builder.core.gitutil import file_reader
from builder.core.pipeline import Outcome
from builder.core.records import Candidate, RunResult, TestStatus
from builder.evaluate.records import EvalTask, MutantResult
from builder.evaluate.scores import EVALUATION_ERROR as ERROR
from builder.evaluate.scores import Transition
from builder.evaluate.stage_view import EvaluateStage
from builder.evaluate.strict import fuzzy_diff, mutation
from builder.evaluate.strict.prediction_patch import PreparedPatch, prepare
from builder.evaluate.strict.scripts import ScriptRunner
from builder.evaluate.unified import unified_diff
from validation import coverage
from validation.coverage.credit import Credit, credit_for, delta_coverage
from validation.environments.environment import EnvironmentBuildError, EnvironmentSpec
from validation.environments.specs import SpecError
from validation.grading import Verdict, verdict_of
from validation.measured_run import measured_run
from validation.runs.backends import Session
from validation.runs.generated import place_generated
from validation.runs.patches import PatchError, runnable_test_files
from validation.runs.runners import Runner, make_runner
from validation.test_changes import generated, patch_changes


def process(stage: EvaluateStage, record: EvalTask, key: str, logs: Path) -> Outcome:
    """The prediction's score under ``strict`` (``key``: its result key; ``logs``: its logs)."""
    instance = record.instance
    mirror = stage.mirror(instance)  # a fault of the machine: raises
    read = file_reader(mirror, instance.base_commit)
    prepared = prepare(
        instance.test_patch if record.gold else record.patch,
        read,
        requested="unified" if record.gold else record.patch_format,
        tests_only=record.tests_only,
        mode="unit" if record.gold else record.mode,
    )
    if not prepared.applicable:
        return stage._result(record, prepared=prepared, logs=logs)
    changes = patch_changes(read, prepared.new_texts)
    try:
        resolution = stage.environments.resolve(instance, mirror)
        spec = stage._measurable(resolution.spec)
        environment = stage.backend.prepare(spec)
    except (SpecError, EnvironmentBuildError) as error:
        return stage._result(record, prepared, f"{ERROR}environment: {error}", logs=logs)
    if record.mode == "repro" and not record.gold:
        runner: Runner = ScriptRunner()
        files = list(prepared.test_files)
    else:
        runner = make_runner(spec.runner, spec.test_command)
        files = runnable_test_files(prepared.diff)
    if not files:
        reason = "the patch changes no test file the runner can run"
        return stage._result(record, prepared, reason, logs=logs)
    lines = coverage.patch_lines(instance.patch) if stage.settings.coverage else None
    run_dir = stage.work_dir / "runs" / stage.name / key[:16]
    measured: dict[str, coverage.Measured | None] = {}
    if record.mutants:
        executed = stage._baseline(instance) if lines is not None else None
        fixed = fuzzy_diff.apply(fuzzy_diff.parse(instance.patch), read, exact=True)
        targets = mutation_lines(instance.patch, fixed, executed)
    try:
        commit = instance.base_commit
        with stage.backend.session(environment, mirror, commit, run_dir) as session:
            session.services = spec.services  # as validation's runs had them
            place_generated(session, mirror, logs / "generated.log", spec.project_commit)
            runs = _both_sides(
                stage, record, prepared, session, runner, files, logs, lines, spec, measured
            )
            if not isinstance(runs, str) and record.mutants:
                scored = generated(sorted(runs[1].tests), changes)
                killed = _mutation(
                    stage,
                    record,
                    fixed,
                    targets,
                    session,
                    runner,
                    files,
                    logs,
                    spec,
                    runs[1],
                    scored,
                )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if isinstance(runs, str):
        return stage._result(record, prepared, runs, logs=logs)
    transitions = _transitions(runs, changes)
    credit = _credit(runner, changes, files)
    delta = _delta_coverage(stage, instance, measured, credit) if lines is not None else None
    return stage._result(
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
    stage: EvaluateStage,
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
        run = _run(
            stage, session, runner, files, "after", logs, None, spec, {}, name=f"mutant-{index}"
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


def _delta_coverage(
    stage: EvaluateStage,
    instance: Candidate,
    measured: Mapping[str, coverage.Measured | None],
    credit: Credit,
) -> float | None:
    """ΔC: the share of the instance's executable patch lines that the prediction's tests
    execute (``credit``: which lines of a run count), on the side where each line lives
    (None: no executable line, or a run wrote no coverage report)."""
    executable = stage._baseline(instance)
    return delta_coverage(executable, measured, credit)


def _both_sides(
    stage: EvaluateStage,
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
    before = _run(stage, session, runner, files, "before", logs, lines, spec, measured)
    session.apply(record.instance.patch, "golden patch")
    after = _run(stage, session, runner, files, "after", logs, lines, spec, measured)
    return before, after  # a run that timed out reports what it finished: the rest failed


def _run(
    stage: EvaluateStage,
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
        timeout_s=stage.settings.timeout_s,
        python=spec.python,
        include=include,
        side_lines=(lines.removed if side == "before" else lines.added) if lines else None,
    )
    if include:
        measured[side] = executed
    return run


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
