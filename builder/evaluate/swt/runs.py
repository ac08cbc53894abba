"""SWT-Bench's semantics in the evaluation stage: a prediction's six runs, base and gold kept once.

As SWT-Bench's harness (``src/run_evaluation.py`` ``run_instance``): the files a patch names
(every ``diff --git`` path not ending in one of :data:`NON_TEST_EXTS`) run in a fresh checkout
of the base commit — with the prediction (``pred_pre``), with the golden code patch and then the
prediction (``pred_post``; a prediction that does not apply after the golden patch is left out
of that run, as ``git apply`` failing there leaves it), with nothing (``base_pre``) and the golden
code patch alone (``base_post``); the golden test patch's files with it applied (``gold_pre``,
``gold_post``). Every run counts the executions of the golden patch's lines (the line counter).
The base and gold runs do not depend on the method: they are stored per instance (and test
files), so a second method on the same dataset pays only for its own two runs.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from builder.core.errors import SwtError
from builder.core.gitutil import file_reader, git
from builder.core.pipeline import Outcome
from builder.core.records import RunResult
from builder.core.store import ResultStore, result_key
from builder.evaluate.records import EvalResult, EvalTask
from builder.evaluate.scores import EVALUATION_ERROR, InstanceScore
from builder.evaluate.stage_view import EvaluateStage
from builder.evaluate.swt import commands as swt_commands
from builder.evaluate.swt import grading as swt_grading
from builder.evaluate.swt import metrics as swt_metrics
from builder.evaluate.swt import patch as swt_patch
from builder.evaluate.swt.commands import ToxError
from builder.evaluate.unified import unified_diff
from validation.coverage import counts as line_counts
from validation.environments.environment import EnvironmentBuildError
from validation.environments.specs import SpecError
from validation.measured_run import measured_run
from validation.runs.generated import place_generated
from validation.runs.patches import PatchError
from validation.runs.runners import Runner, make_runner

SWT_BENCH, STRICT = "swt-bench", "strict"
SEMANTICS = (SWT_BENCH, STRICT)
"""How ``evaluate`` runs and grades: SWT-Bench's harness, or our stricter definitions."""
RUNS_VERSION = 2
"""Bump when how the runs are made changes: part of the stored base and gold runs' keys."""
NON_TEST_EXTS = (
    ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
)  # fmt: skip
"""SWT-Bench's ``NON_TEST_EXTS``: a patch's paths ending so are not run (``csv`` has no dot
there, so ``foo_csv`` is left out too)."""
_DIRECTIVE = re.compile(r"diff --git a/.* b/(.*)")
BASE_STORE, GOLD_STORE = "evaluate-swt-base", "evaluate-swt-gold"
RUN_INPUTS = ("repo", "base_commit", "patch", "test_patch", "version", "environment_setup_commit")
"""What decides an instance's base and gold runs (with the files run and the environment): two
ids of the same content share them."""
NOT_RUN = EVALUATION_ERROR


class _NotRun(SwtError):
    """The runs cannot give a report (a golden patch that does not apply, the prediction's
    first run cut at the timeout): the prediction counts as a miss, with this reason."""


def test_directives(patch: str) -> list[str]:
    """The files SWT-Bench runs for ``patch`` (``get_test_directives``): every path after
    ``b/`` in a ``diff --git`` line, in order, without those ending in :data:`NON_TEST_EXTS`
    (test files or not: a code file the prediction edits runs too)."""
    found = [path for path in _DIRECTIVE.findall(patch) if not path.endswith(NON_TEST_EXTS)]
    return list(dict.fromkeys(found))


@dataclasses.dataclass(frozen=True)
class _Run:
    """One run's outcome as grading reads it, and the run itself (None: it did not happen)."""

    status: swt_grading.StatusMap
    counts: swt_grading.Counts
    run: RunResult | None = None
    made: bool = True  # run by this task (False: read from the store)

    def dump(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "counts": {
                p: {str(n): c for n, c in lines.items()} for p, lines in self.counts.items()
            },
            "run": self.run.model_dump(mode="json") if self.run else None,
        }

    @classmethod
    def load(cls, data: dict[str, Any]) -> _Run:
        counts = {p: {int(n): c for n, c in lines.items()} for p, lines in data["counts"].items()}
        run = RunResult.model_validate_json(json.dumps(data["run"])) if data["run"] else None
        return cls(data["status"], counts, run, made=False)


@dataclasses.dataclass
class _Context:
    """What every run of one task shares."""

    stage: EvaluateStage
    task: EvalTask
    key: str
    logs: Path
    mirror: Path
    environment: object
    spec: Any
    runner: Runner
    read: Callable[[str], str | None]
    wanted: dict[str, list[int]] | None  # the golden patch's lines to count (None: coverage off)
    refusal: str = ""  # why the prediction did not apply to the base commit (git's, or the path)


def process(stage: EvaluateStage, task: EvalTask, key: str, logs: Path) -> Outcome:
    """Score ``task`` under SWT-Bench's semantics: its ``report.json`` entry, the runs behind it,
    and whether its gold evaluation has executable lines (ΔCᵃˡˡ's denominator)."""
    instance = task.instance
    mirror = stage.mirror(instance)  # a fault of the machine: raises
    read = file_reader(mirror, instance.base_commit)
    model_patch, extraction_log = _model_patch(task, mirror)
    (logs / "extraction.log").write_text(extraction_log, encoding="utf-8")
    if not model_patch.strip() and not _vanilla_alone(task):
        # their harness runs nothing when the extraction leaves no change; vanilla alone always
        # runs (the text with binary diffs removed is never empty), and git apply then fails
        return _not_run(stage.name, task, "the extracted patch is empty: nothing ran", logs)
    (logs / "model_patch.diff").write_text(model_patch, encoding="utf-8")
    try:
        resolution = stage.environments.resolve(instance, mirror)
        spec = stage._measurable(resolution.spec)
        environment = stage.backend.prepare(spec)
    except (SpecError, EnvironmentBuildError) as error:
        return _not_run(stage.name, task, f"{NOT_RUN}environment: {error}", logs)
    wanted = None
    if stage.settings.coverage:
        wanted = swt_grading.changed_lines(instance.patch).wanted()
    try:
        runner = _runner(instance, spec, wanted is not None, read)
    except ToxError as error:
        return _not_run(stage.name, task, f"{NOT_RUN}tox: {error}", logs)
    context = _Context(stage, task, key, logs, mirror, environment, spec, runner, read, wanted)
    try:
        return _graded(context, model_patch)
    except _NotRun as error:
        return _not_run(stage.name, task, f"{NOT_RUN}{error}", logs)


def _runner(instance: Any, spec: Any, counted: bool, read: Callable[[str], str | None]) -> Runner:
    """SWT-Bench's command and log parser for the repository (``swt_commands``); the spec's own
    runner where SWT-Bench has none (a unittest repository it does not know)."""
    command = swt_commands.command_for(instance.repo, instance.version, spec.runner)
    if command is None:
        return make_runner(spec.runner, spec.test_command)
    return swt_commands.SwtBenchRunner(command, counted, read)


def _graded(context: _Context, model_patch: str) -> Outcome:
    """Every run of the task (base and gold ones from the store when made before) and the
    report SWT-Bench's grading makes of them."""
    task, instance = context.task, context.task.instance
    files = test_directives(model_patch)
    runs: dict[str, _Run] = {}
    applied = _prediction_runs(context, model_patch, files, runs)
    if applied:  # the report of a prediction that does not apply reads no other run
        runs.update(_base_runs(context, files))
    gold_files = test_directives(instance.test_patch)
    gold = _gold_runs(context, gold_files)
    runs.update(gold)
    statuses = {name: run.status for name, run in runs.items()}
    counts = {name: run.counts for name, run in runs.items()}
    report = swt_grading.prediction_report(applied, instance.patch, statuses, counts)
    gold_executable = None
    if context.wanted is not None:
        gold_executable = _gold_executable(context, gold, gold_files)
    stage = context.stage
    return _result(
        stage.name, task, report, runs, context.logs, gold_executable, applied, context.refusal
    )


def _model_patch(task: EvalTask, mirror: Path) -> tuple[str, str]:
    """The patch the runs apply, and what extracting it did: the golden test patch for gold;
    with ``vanilla`` alone the prediction itself (binary diffs removed, and the newline of
    their eval script's here-document), applied as ``git apply`` takes it; else the diff of
    what SWT-Bench's extraction leaves in the base checkout (``swt_patch``)."""
    instance = task.instance
    if task.gold:
        return instance.test_patch, "gold: the golden test patch\n"
    types = tuple(task.patch_types)
    if _vanilla_alone(task):
        return swt_patch.remove_binary_diffs(task.patch) + "\n", "vanilla: the patch as given\n"
    listed = git("ls-tree", "-r", "--name-only", instance.base_commit, cwd=mirror).splitlines()
    folders = {str(PurePosixPath(path).parent) for path in listed}
    folders |= {str(parent) for folder in folders for parent in PurePosixPath(folder).parents}
    read = file_reader(mirror, instance.base_commit)
    extraction = swt_patch.extract(task.patch, types, read, is_dir=folders.__contains__)
    return unified_diff(extraction.new_texts, read), extraction.log + "\n"


def _vanilla_alone(task: EvalTask) -> bool:
    return task.gold or tuple(task.patch_types) == ("vanilla",)


def _prediction_runs(
    context: _Context, model_patch: str, files: list[str], runs: dict[str, _Run]
) -> bool:
    """``pred_pre`` and ``pred_post`` into ``runs``; False when the prediction does not apply
    to the base commit (then neither runs: the report has no tests)."""
    instance = context.task.instance
    pre = _run(context, "pred_pre", [("prediction", model_patch, True)], files)
    if pre is None:
        return False
    if pre.run is not None and pre.run.timed_out:
        raise _NotRun(f"the prediction's run before the fix timed out ({pre.run.log_path})")
    runs["pred_pre"] = pre
    patches = [("golden patch", instance.patch, False), ("prediction", model_patch, False)]
    post = _run(context, "pred_post", patches, files)
    assert post is not None  # only a required patch that fails returns None
    runs["pred_post"] = post
    return True


def _base_runs(context: _Context, files: list[str]) -> dict[str, _Run]:
    """``base_pre`` and ``base_post`` of ``files``: stored per instance and files."""
    instance = context.task.instance

    def compute() -> dict[str, _Run]:
        pre = _run(context, "base_pre", [], files)
        post = _run(context, "base_post", [("golden patch", instance.patch, False)], files)
        return {"base_pre": pre, "base_post": post}  # type: ignore[dict-item]

    return _stored(context, BASE_STORE, files, compute)


def _gold_runs(context: _Context, gold_files: list[str]) -> dict[str, _Run]:
    """``gold_pre`` and ``gold_post``: the golden test patch's files with it applied, stored
    per instance."""
    instance = context.task.instance

    def compute() -> dict[str, _Run]:
        test = ("golden test patch", instance.test_patch, False)
        pre = _run(context, "gold_pre", [test], gold_files)
        post = _run(
            context, "gold_post", [("golden patch", instance.patch, False), test], gold_files
        )
        return {"gold_pre": pre, "gold_post": post}  # type: ignore[dict-item]

    return _stored(context, GOLD_STORE, gold_files, compute)


def _gold_executable(context: _Context, gold: dict[str, _Run], gold_files: list[str]) -> bool:
    """Whether the instance's gold evaluation (the golden tests scored as a prediction) has
    executable patch lines: its gold runs show any, or else the base runs of the golden test
    files do (run only then, and stored)."""
    patch = context.task.instance.patch
    counts = {name: run.counts for name, run in gold.items()}
    if swt_grading.executable_line_count(patch, counts):
        return True
    base = _stored(context, BASE_STORE, gold_files, lambda: _gold_base(context, gold_files))
    counts.update({name: run.counts for name, run in base.items()})
    return swt_grading.executable_line_count(patch, counts) > 0


def _gold_base(context: _Context, gold_files: list[str]) -> dict[str, _Run]:
    patch = context.task.instance.patch
    pre = _run(context, "base_pre-gold", [], gold_files)
    post = _run(context, "base_post-gold", [("golden patch", patch, False)], gold_files)
    return {"base_pre": pre, "base_post": post}  # type: ignore[dict-item]


def _stored(
    context: _Context,
    store_name: str,
    files: Sequence[str],
    compute: Callable[[], dict[str, _Run]],
) -> dict[str, _Run]:
    """The runs ``compute`` makes, from the store when an earlier task made them (keyed by the
    instance, the files, the stage's settings and the environment)."""
    stage = context.stage
    instance = context.task.instance
    fingerprint = {
        **stage.fingerprint(),
        "runs": RUNS_VERSION,
        "spec": stage.environments.spec_digest(instance.repo, instance.instance_id),
        "coverage": context.wanted is not None,
    }
    inputs = {field: getattr(instance, field) for field in RUN_INPUTS}
    key = result_key(store_name, fingerprint, {"instance": inputs, "files": list(files)})
    store = ResultStore(stage.work_dir / "store")
    entry = store.get(store_name, key)
    if entry is not None:
        return {name: _Run.load(data) for name, data in entry["runs"].items()}
    runs = compute()
    store.put(store_name, key, {"runs": {name: run.dump() for name, run in runs.items()}})
    return runs


def _run(
    context: _Context,
    name: str,
    patches: list[tuple[str, str, bool]],
    files: list[str],
) -> _Run | None:
    """One run of ``files`` in a fresh checkout after ``patches`` (label, text, required):
    a required patch that does not apply means no run (None); another one is left out, as
    ``git apply`` failing in SWT-Bench's eval script leaves it. The golden patches always
    apply to an instance the toolkit validated: when one does not, that is an error."""
    stage = context.stage
    instance = context.task.instance
    run_dir = stage.work_dir / "runs" / "evaluate" / f"{context.key[:16]}-{name}"
    shutil.rmtree(run_dir, ignore_errors=True)
    applied_here = []
    try:
        with stage.backend.session(
            context.environment, context.mirror, instance.base_commit, run_dir
        ) as session:
            session.services = context.spec.services  # as validation's runs had them
            session.extra_env = tuple(sorted(getattr(context.runner, "env", {}).items()))
            place_generated(
                session, context.mirror, context.logs / f"{name}.generated.log",
                context.spec.project_commit,
            )  # fmt: skip
            for label, text, required in patches:
                try:
                    session.apply(text, label)
                    applied_here.append((label, text))
                except PatchError as error:
                    _note(context, name, f"{label} does not apply: {error}")
                    if required:  # git's message, or the unsafe path and why (patches.py)
                        context.refusal = str(error)
                        return None
                    if label != "prediction":
                        raise _NotRun(f"{label} does not apply ({name}): {error}") from error
            report_name = f"{name}.counts.json"
            targets = context.wanted

            def wrap(command: list[str]) -> list[str]:
                if targets is None:
                    return command
                runtime = session.provide(line_counts.COUNTER)
                return line_counts.counted_command(
                    command, runtime, session.scratch_path(report_name), targets
                )

            run, _ = measured_run(
                session, context.runner, files, name=name,
                side="before" if name.startswith(("pred_pre", "base_pre", "gold_pre")) else "after",
                logs=context.logs, timeout_s=stage.settings.timeout_s,
                python=context.spec.python, wrap=wrap,
            )  # fmt: skip
            counts: swt_grading.Counts = {}
            if targets is not None and not run.timed_out:
                data = session.read_scratch(report_name)
                if data is not None:
                    (context.logs / report_name).write_bytes(data)
                counts = _as_counts(line_counts.read_counts(data))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    labels = ", ".join(label for label, _ in applied_here) or "nothing"
    _note(context, name, f"applied: {labels}; files: {files}")
    return _Run(swt_grading.status_map(run), counts, run)


def _as_counts(measured: line_counts.LineCounts | None) -> swt_grading.Counts:
    """Per traced file, its executable wanted lines and their counts (0 where not run)."""
    if measured is None:
        return {}
    return {path: dict(lines) for path, lines in measured.counts.items()}


def _inputs(run: _Run) -> dict[str, Any]:
    """What grading read of a run: its status map and line counts."""
    dumped = run.dump()
    return {"status": dumped["status"], "counts": dumped["counts"]}


def _note(context: _Context, name: str, text: str) -> None:
    with (context.logs / "runs.log").open("a", encoding="utf-8") as log:
        log.write(f"{name}: {text}\n")


def _not_run(stage: str, task: EvalTask, reason: str, logs: Path) -> Outcome:
    """A prediction the harness runs nothing for: no report (it counts as a miss)."""
    return _result(stage, task, None, {}, logs, None, False, reason)


def _result(
    stage: str,
    task: EvalTask,
    report: dict[str, Any] | None,
    runs: dict[str, _Run],
    logs: Path,
    gold_executable: bool | None,
    applied: bool,
    reason: str = "",
) -> Outcome:
    if report is not None and not applied:
        why = reason or "git apply refused it"
        reason = f"the prediction does not apply to the base commit: {why}"
    elif report is not None and not swt_metrics.applicable(report):
        reason = "its run reports fewer than 10 % as many tests as the base run"
    ordered = [name for name in swt_grading.RUNS if name in runs]
    score = InstanceScore(
        instance_id=task.instance.instance_id,
        applicable=report is not None and swt_metrics.applicable(report),
        not_applicable=reason,
        coverage=report.get("coverage_delta_pred") if report else None,
    )
    result = EvalResult(
        instance_id=task.instance.instance_id,
        model=task.model,
        score=score,
        semantics=SWT_BENCH,
        patch_format="+".join(task.patch_types) if not task.gold else "vanilla",
        runs=tuple(runs[name].run for name in ordered if runs[name].run is not None),
        run_names=tuple(name for name in ordered if runs[name].run is not None),
        runs_made=tuple(name for name in ordered if runs[name].made and runs[name].run),
        logs=str(logs),
        swt_report=report,
        swt_runs={name: _inputs(runs[name]) for name in ordered},
        gold_executable=gold_executable,
    )
    return Outcome.keep(stage, result)
