"""SWT-Bench's evaluation files, both ways: its per-instance ``report.json`` layout and run-level
JSON written from our results, its reports read back, and id lists for a fixed denominator."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from builder.core.errors import SwtError
from builder.core.files import atomic_write_text, inside
from builder.evaluate.records import EvalResult
from builder.evaluate.scores import InstanceScore
from builder.evaluate.swt.metrics import SwtSummary, summarize, table


class Request(Protocol):
    """What the files say of the evaluation (``builder.evaluate.run.Request``)."""

    run_id: str
    dataset: str
    config_name: str
    split: str
    predictions: str
    patch_types: tuple[str, ...]
    denominator: str | None


LOG_DIR = "run_instance_swt_logs"
"""SWT-Bench's ``RUN_INSTANCE_LOG_DIR``: reports are ``LOG_DIR/RUN_ID/MODEL/ID/report.json``."""
RESULTS_DIR = "evaluation_results"
"""Where its ``make_run_report`` writes ``MODEL.RUN_ID.json``."""


class IdListError(SwtError, ValueError):
    """An id list (``--denominator``) cannot be read."""


def read_ids(path: Path) -> list[str]:
    """Instance ids from ``path``: a JSON list, or one id per line (blank lines and ``#``
    comments ignored), e.g. a published split's ids or SWT-Bench's own instance lists."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise IdListError(f"{path}: {error}") from error
    if text.lstrip().startswith("["):
        try:
            ids = json.loads(text)
        except json.JSONDecodeError as error:
            raise IdListError(f"{path}: not a JSON list of ids: {error}") from error
        if not all(isinstance(i, str) for i in ids):
            raise IdListError(f"{path}: a JSON list of ids must hold strings only")
    else:
        ids = [line.strip() for line in text.splitlines()]
        ids = [i for i in ids if i and not i.startswith("#")]
    if not ids:
        raise IdListError(f"{path}: no instance id")
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise IdListError(f"{path}: {', '.join(repeated[:5])} listed twice")
    return ids


def model_dir_name(model: str) -> str:
    """How SWT-Bench names a method's folder: ``model_name_or_path`` with ``/`` as ``__``."""
    return model.replace("/", "__")


def write_swt(
    directory: Path,
    request: Request,
    results: Sequence[EvalResult],
    scores: Sequence[InstanceScore],
    summary: SwtSummary,
) -> None:
    """Every file of a swt-bench evaluation under ``directory``: SWT-Bench's layout (reports,
    run-level JSON), our instance reports, ``summary.json`` and ``report.md`` (its table)."""
    directory.mkdir(parents=True, exist_ok=True)
    model = next((r.model for r in results if r.model), request.predictions)
    logs = directory / LOG_DIR / request.run_id / model_dir_name(model)
    for result in results:
        path = inside(directory / "instances", f"{result.instance_id}.json")
        atomic_write_text(path, result.model_dump_json(indent=1) + "\n")
        if result.swt_report is not None:
            report = {result.instance_id: result.swt_report}
            target = inside(logs, result.instance_id) / "report.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(target, json.dumps(report, indent=4) + "\n")
    run_report = _run_report(results, summary)
    name = f"{model_dir_name(model)}.{request.run_id}.json"
    atomic_write_text(directory / RESULTS_DIR / name, json.dumps(run_report, indent=4) + "\n")
    document = {
        **summary_document(request, model, summary, scores),
        "semantics": summary.semantics,
        "patch_types": list(request.patch_types),
        "denominator": request.denominator,
    }
    atomic_write_text(
        directory / "summary.json", json.dumps(document, indent=1, sort_keys=True) + "\n"
    )
    note = (
        f"\nSemantics: {summary.semantics} (SWT-Bench's harness rules); over {summary.instances} "
        f"instances, {summary.reports} with a report"
        + (f", {summary.not_in_dataset} not in the dataset" if summary.not_in_dataset else "")
        + ".\n"
    )
    atomic_write_text(
        directory / "report.md", f"# {request.run_id}\n\n{table(model, summary)}{note}"
    )


def summary_document(
    request: Request, model: str, summary: Any, scores: Sequence[InstanceScore]
) -> dict[str, Any]:
    """What every ``summary.json`` says, whatever the semantics: the run, the dataset, the
    predictions, the figures and why each instance that was not applicable was not."""
    return {
        "run_id": request.run_id,
        "dataset": request.dataset,
        "config": request.config_name,
        "split": request.split,
        "predictions": request.predictions,
        "model": model,
        "summary": summary.model_dump(mode="json"),
        "not_applicable": {s.instance_id: s.not_applicable for s in scores if not s.applicable},
    }


def _run_report(results: Sequence[EvalResult], summary: SwtSummary) -> dict[str, Any]:
    """``make_run_report``'s fields: the instances with a report are its completed ones, the
    others (nothing ran) its error ones; mean coverage over the reports that have one."""
    reports = {r.instance_id: r.swt_report for r in results if r.swt_report is not None}
    completed = sorted(reports)
    resolved = sorted(i for i, r in reports.items() if r["resolved"])
    errors = sorted(r.instance_id for r in results if r.swt_report is None)
    measured = [r for r in reports.values() if r["coverage_pred"] is not None]
    mean = sum(r["coverage_pred"] for r in measured) / len(measured) if measured else 0
    delta = sum(r["coverage_delta_pred"] for r in measured) / len(measured) if measured else 0
    return {
        "total_instances": summary.instances,
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(completed) - len(resolved),
        "error_instances": len(errors),
        "Mean coverage": mean,
        "Mean coverage delta": delta,
        "unstopped_instances": 0,
        "completed_ids": completed,
        "resolved_ids": resolved,
        "unresolved_ids": sorted(set(completed) - set(resolved)),
        "error_ids": errors,
        "unstopped_containers": [],
        "unremoved_images": [],
    }


def read_reports(model_dir: Path) -> dict[str, dict[str, Any]]:
    """The ``report.json`` entries under an SWT-Bench method folder (``…/RUN_ID/MODEL``), ours
    or its harness's: instance id → entry."""
    if not model_dir.is_dir():
        raise IdListError(f"{model_dir}: no such folder of reports")
    found = {}
    for report in sorted(model_dir.glob("*/report.json")):
        instance_id = report.parent.name
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise IdListError(f"{report}: {error}") from error
        if instance_id not in data:
            raise IdListError(f"{report}: no entry for {instance_id}")
        found[instance_id] = data[instance_id]
    return found


def score_reports(
    model_dir: Path,
    *,
    total: int | None = None,
    denominator: Path | None = None,
    gold_dir: Path | None = None,
) -> SwtSummary:
    """``report.py``'s figures over a folder of ``report.json`` files (SWT-Bench's harness's,
    or ours): over ``total`` instances, or the ids of ``denominator`` (reports of other ids are
    left out); ΔC needs the gold run's folder (``gold_dir``), as ``report.py`` does."""
    reports = read_reports(model_dir)
    if denominator is not None:
        ids = read_ids(denominator)
        reports = {i: r for i, r in reports.items() if i in set(ids)}
        total = len(ids)
    if total is None or total < 1:
        raise IdListError("scoring reports needs the number of instances (--total) or ids")
    gold = None
    if gold_dir is not None:
        gold_reports = read_reports(gold_dir)
        gold = {i: r.get("coverage_delta_gold") is not None for i, r in gold_reports.items()}
    return summarize(reports, total, gold)
