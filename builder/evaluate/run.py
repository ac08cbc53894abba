"""An evaluation run: predictions against a dataset, results stored as they come, reports."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from builder.core.config import Config, SizesConfig, ValidationConfig
from builder.core.errors import SwtError
from builder.core.executor import Executor
from builder.core.files import atomic_write_text, inside
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.store import ResultStore
from builder.evaluate.dataset import EvalInstance, load_instances
from builder.evaluate.predictions import GOLD, Prediction, read_predictions
from builder.evaluate.records import EvalResult, EvalTask
from builder.evaluate.scores import InstanceScore
from builder.evaluate.stage import EvaluateStage, missed_coverage
from builder.evaluate.strict.metrics import Summary, markdown_table, summarize
from builder.evaluate.swt import patch as swt_patch
from builder.evaluate.swt.metrics import SwtSummary
from builder.evaluate.swt.metrics import summarize as swt_summarize
from builder.evaluate.swt.report import read_ids, summary_document, write_swt
from builder.evaluate.swt.runs import SEMANTICS, SWT_BENCH
from builder.release.golden_mutation import GOLDEN_MUTATION, write_golden_mutation

RUN_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
NO_PREDICTION = "no prediction for this instance"
NOT_IN_DATASET = "not in the dataset (an id of --denominator the build lacks)"


class EvaluationError(SwtError, ValueError):
    """The evaluation cannot start or report (the message says why)."""


@dataclasses.dataclass(frozen=True)
class Request:
    """What ``swt-builder evaluate`` was asked."""

    dataset: str
    predictions: str  # a file, or "gold"
    run_id: str
    config_name: str = "full"
    split: str = "test"
    instances: tuple[str, ...] = ()
    patch_format: str = "auto"
    tests_only: bool = True
    report_only: bool = False
    mutants: int = 0  # --mutation: at most this many mutants of the fix per instance
    mode: str = "unit"  # unit: test files run by the runner; repro: scripts by exit status
    semantics: str = SWT_BENCH  # swt-bench: SWT-Bench's harness rules; strict: ours
    patch_types: tuple[str, ...] = ("vanilla",)  # swt-bench: SWT-Bench's patch types
    denominator: str | None = None  # a file of instance ids: the fixed set scored over
    strict_ids: bool = False  # a prediction for an id the dataset lacks is an error
    timeout_s: float | None = None  # per run (default: 1800 under swt-bench, else validation's)


SWT_BENCH_TIMEOUT_S = 1800.0
"""SWT-Bench's default timeout (``--timeout``), per run of an instance's tests."""


def check(request: Request) -> None:
    """Raise EvaluationError when the request mixes options that do not go together."""
    if request.semantics not in SEMANTICS:
        raise EvaluationError(f"--semantics {request.semantics!r}: one of {', '.join(SEMANTICS)}")
    if request.semantics == SWT_BENCH:
        if request.mutants:
            raise EvaluationError(
                "--mutation scores the tests a prediction wrote: --semantics strict"
            )
        if request.mode != "unit":
            raise EvaluationError(f"--mode {request.mode} is scored with --semantics strict")
        if request.patch_format != "auto":
            raise EvaluationError(
                "--patch-format is for --semantics strict; SWT-Bench's are --patch-types "
                f"({', '.join(swt_patch.PATCH_TYPES)})"
            )
        if not request.tests_only:
            raise EvaluationError(
                "--with-code-edits is for --semantics strict (swt-bench applies them)"
            )
        unknown = [t for t in request.patch_types if t not in swt_patch.PATCH_TYPES]
        if unknown or not request.patch_types:
            known = ", ".join(swt_patch.PATCH_TYPES)
            raise EvaluationError(f"--patch-types {' '.join(request.patch_types)}: from {known}")
    elif request.patch_types != ("vanilla",):
        raise EvaluationError("--patch-types is for --semantics swt-bench (strict: --patch-format)")
    if request.timeout_s is not None and request.timeout_s <= 0:
        raise EvaluationError(f"--timeout {request.timeout_s}: more than 0 seconds")


def run_settings(request: Request, config: Config) -> ValidationConfig:
    """The validation settings the evaluation's runs use: the timeout per run is ``--timeout``,
    else SWT-Bench's 1800 s under its semantics, else ``validation.timeout_s``."""
    timeout = request.timeout_s or (
        SWT_BENCH_TIMEOUT_S if request.semantics == SWT_BENCH else config.validation.timeout_s
    )
    return config.validation.model_copy(update={"timeout_s": timeout})


def evaluate(
    request: Request,
    config: Config,
    echo: Callable[[str], None] = print,
    progress: object = None,
) -> Summary | SwtSummary:
    """Run (or with ``report_only`` re-read) every task and write the reports under
    ``config.output_dir/evaluations/<run_id>/``; returns the summary."""
    check(request)
    denominator = read_ids(Path(request.denominator)) if request.denominator else None
    everything = load_instances(request.dataset, request.config_name, request.split)
    known = {i.instance_id for i in everything}
    wanted = set(request.instances)
    if denominator is not None:
        wanted = (wanted or set(denominator)) & set(denominator)
    unknown_wanted = sorted(set(request.instances) - known)
    if unknown_wanted:
        raise EvaluationError(
            f"{request.dataset}: no instance {', '.join(unknown_wanted)} in "
            f"{request.config_name}/{request.split}"
        )
    instances = [i for i in everything if not wanted or i.instance_id in wanted]
    if not instances and not denominator:
        raise EvaluationError(f"{request.dataset}: no instance to evaluate")
    tasks, missing = _tasks(request, instances, known, echo, config.sizes)
    golden = {i.instance_id: i.golden_coverage for i in instances}
    absent = sorted(set(denominator or ()) - known)
    if absent:
        echo(
            f"evaluate: {len(absent)} id(s) of {request.denominator} are not in the dataset: "
            "counted as not applicable"
        )
    stage = EvaluateStage(
        run_settings(request, config), config.work_dir, config.repos, config.docker
    )
    store = ResultStore(config.work_dir / "store")
    if request.report_only:
        results = _stored(stage, store, tasks)
    else:
        executor = Executor("threads", config.effective_jobs)
        stats = StageStats(stage.name)
        results = list(
            run_stage(
                stage,
                tasks,
                store=store,
                executor=executor,
                rejected=RejectedLog(),
                stats=stats,
                progress=progress,
            )
        )
        if stats.cached:
            echo(f"evaluate: {stats.cached} of {stats.seen} reused from the store")
        if stats.faults:
            faults = ", ".join(f"{count} {fault}" for fault, count in sorted(stats.faults.items()))
            raise EvaluationError(
                f"{sum(stats.faults.values())} prediction(s) hit a fault of the machine "
                f"({faults}; evidence in {config.work_dir / 'logs' / 'evaluate'}): none is "
                "scored as a miss; the others are stored, run the evaluation again"
            )
    scores = [result.score for result in results]
    scores += [
        InstanceScore(
            instance_id=i,
            applicable=False,
            not_applicable=NO_PREDICTION,
            coverage=missed_coverage(golden[i], config.validation.coverage),
        )
        for i in missing
    ]
    scores += [
        InstanceScore(instance_id=i, applicable=False, not_applicable=NOT_IN_DATASET)
        for i in absent
    ]
    scores.sort(key=lambda score: score.instance_id)
    directory = config.output_dir / "evaluations" / request.run_id
    if request.semantics == SWT_BENCH:
        swt = _swt_summary(results, instances, len(scores), len(absent), config)
        write_swt(directory, request, results, scores, swt)
        return swt
    summary = summarize(scores)
    _write(directory, request, results, scores, summary)
    if _is_release_statistic(request):
        name = f"{request.config_name}/{request.split}"
        statistic = golden_mutation(results, request.mutants)
        write_golden_mutation(Path(request.dataset), name, statistic)
        echo(
            f"evaluate: golden kill rate of {name} written to {request.dataset} "
            f"({GOLDEN_MUTATION} and the card)"
        )
    return summary


def _is_release_statistic(request: Request) -> bool:
    """Gold with mutants, on every instance of a release dir's split: the golden tests'
    strength, a statistic of the release."""
    return (
        request.predictions == GOLD
        and request.mutants > 0
        and not request.instances
        and (Path(request.dataset) / "manifest.json").is_file()
    )


def golden_mutation(results: Sequence[EvalResult], cap: int) -> dict[str, Any]:
    """The kill rate of the scored tests over ``results`` (the release statistic's fields):
    instances, mutants, equivalent and killed ones, the rate over the non-equivalent
    mutants in percent, and the same counts per operator."""
    mutants = [mutant for result in results for mutant in result.mutants]
    by_operator: dict[str, dict[str, int]] = {}
    for mutant in mutants:
        counts = by_operator.setdefault(
            mutant.operator, {"mutants": 0, "equivalent": 0, "killed": 0}
        )
        counts["mutants"] += 1
        counts["equivalent"] += mutant.equivalent
        counts["killed"] += bool(mutant.killed_by)
    killed = sum(1 for mutant in mutants if mutant.killed_by)
    equivalent = sum(1 for mutant in mutants if mutant.equivalent)
    scored = len(mutants) - equivalent
    return {
        "instances": len(results),
        "instances_with_mutants": sum(1 for result in results if result.mutants),
        "cap": cap,
        "mutants": len(mutants),
        "equivalent": equivalent,
        "killed": killed,
        "kill_rate": round(100 * killed / scored, 2) if scored else None,
        "by_operator": dict(sorted(by_operator.items())),
    }


def _tasks(
    request: Request,
    instances: Sequence[EvalInstance],
    known: set[str],
    echo: Callable[[str], None],
    sizes: SizesConfig | None = None,
) -> tuple[list[EvalTask], list[str]]:
    """One task per predicted instance, and the ids of the instances without a prediction.
    Predictions for ids the dataset lacks (``known``: all of its ids) are skipped with a
    warning naming them, as SWT-Bench's harness does; ``strict_ids`` makes them an error."""
    if request.predictions == GOLD:
        predictions = {
            i.instance_id: Prediction(instance_id=i.instance_id, model_name_or_path=GOLD)
            for i in instances
        }
    else:
        listed = read_predictions(Path(request.predictions), sizes)
        predictions = {p.instance_id: p for p in listed}
        unknown = sorted(set(predictions) - known)
        if unknown:
            shown = ", ".join(unknown[:20]) + (" …" if len(unknown) > 20 else "")
            text = (
                f"{request.predictions}: {len(unknown)} prediction(s) for instances not in "
                f"{request.dataset} {request.config_name}/{request.split}: {shown}"
            )
            if request.strict_ids:
                raise EvaluationError(text)
            echo(f"warning: {text} (skipped)")
    tasks, missing = [], []
    for instance in instances:
        prediction = predictions.get(instance.instance_id)
        if prediction is None:
            missing.append(instance.instance_id)
            continue
        tasks.append(
            EvalTask(
                instance=instance.candidate,
                golden_coverage=instance.golden_coverage,
                model=prediction.model_name_or_path,
                patch=prediction.model_patch,
                gold=request.predictions == GOLD,
                patch_format=request.patch_format,
                tests_only=request.tests_only,
                mutants=request.mutants,
                mode=request.mode,
                invalid=prediction.invalid,
                semantics=request.semantics,
                patch_types=request.patch_types,
            )
        )
    return tasks, missing


def _swt_summary(
    results: Sequence[EvalResult],
    instances: Sequence[EvalInstance],
    total: int,
    absent: int,
    config: Config,
) -> SwtSummary:
    """SWT-Bench's figures over ``total`` instances. ΔCᵃˡˡ's denominator is every instance
    whose gold evaluation has executable patch lines: known from a prediction's runs where it
    has one, else from the instance's recorded golden coverage (a number: its golden patch has
    lines its tests execute)."""
    reports = {r.instance_id: r.swt_report for r in results if r.swt_report is not None}
    gold: dict[str, bool] | None = None
    if config.validation.coverage:
        from_runs = {r.instance_id: r.gold_executable for r in results}
        gold = {}
        for instance in instances:
            measured = from_runs.get(instance.instance_id)
            recorded = instance.golden_coverage is not None
            gold[instance.instance_id] = recorded if measured is None else measured
    return swt_summarize(reports, total, gold, absent)


def _stored(
    stage: EvaluateStage, store: ResultStore, tasks: Sequence[EvalTask]
) -> list[EvalResult]:
    results, absent = [], []
    for task in tasks:
        entry = store.get(stage.name, stage.key(task))
        if entry is None:
            absent.append(task.instance.instance_id)
            continue
        results.append(EvalResult.model_validate_json(json.dumps(entry["output"])))
    if absent:
        shown = ", ".join(absent[:5]) + (" …" if len(absent) > 5 else "")
        raise EvaluationError(
            f"--report-only: {len(absent)} task(s) have no stored result ({shown}); "
            "run the evaluation without --report-only first"
        )
    return results


def _write(
    directory: Path,
    request: Request,
    results: Sequence[EvalResult],
    scores: Sequence[InstanceScore],
    summary: Summary,
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for result in results:
        path = inside(directory / "instances", f"{result.instance_id}.json")
        atomic_write_text(path, result.model_dump_json(indent=1) + "\n")
    model = next((r.model for r in results if r.model), request.predictions)
    document = summary_document(request, model, summary, scores)
    atomic_write_text(
        directory / "summary.json", json.dumps(document, indent=1, sort_keys=True) + "\n"
    )
    table = markdown_table([(model, summary)])
    if summary.mutation_score is not None:
        scored = summary.mutants - summary.mutants_equivalent
        equivalent = summary.mutants_equivalent
        table += (
            f"\nMutation score: {summary.mutation_score:.1f} % of {scored} mutants of "
            "the golden patch's lines killed by the scored tests"
            + (f" ({equivalent} equivalent left out)" if equivalent else "")
            + ".\n"
        )
    atomic_write_text(directory / "report.md", f"# {request.run_id}\n\n{table}")
