"""The build: read the source, validate every candidate, export the dataset and its funnel."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from builder.card import funnel_lines, render_card
from builder.config import Config, ConfigError
from builder.executor import Executor
from builder.export import write_split
from builder.pipeline import RejectedLog, StageStats, run_stage
from builder.records import write_jsonl
from builder.store import ResultStore, atomic_write_text
from recipes.swe_bench import STAGE as SOURCE_STAGE
from recipes.swe_bench import swe_bench_candidates
from validation.stage import ValidateStage


@dataclasses.dataclass(frozen=True)
class BuildResult:
    dataset_dir: Path
    instances: int
    funnel: list[StageStats]


def build(
    config: Config, progress: bool = True, echo: Callable[[str], None] = print
) -> BuildResult:
    """Run source → validate → export; finished per-record work is reused from the store."""
    if not config.source.path:
        raise ConfigError("no source: set source.path (a SWE-bench-format JSONL/parquet/dataset)")
    store = ResultStore(config.work_dir / "store")
    rejected = RejectedLog()

    source_stats = StageStats(SOURCE_STAGE)
    candidates = []
    for raw, outcome in swe_bench_candidates(config.source.path, config.source.split):
        source_stats.count(outcome, cached=False)
        if outcome.verdict.kept:
            candidates.append(outcome.output)
        else:
            rejected.add(raw, outcome.verdict)
    echo(f"source: {len(candidates)} candidates from {config.source.path}")

    stage = ValidateStage(config.validation, config.work_dir, config.repos)
    validate_stats = StageStats(stage.name)
    executor = Executor(config.executor, config.effective_jobs, config.executor_scheduler)
    with tqdm(
        desc="validate", unit="candidate", disable=not progress, total=len(candidates)
    ) as bar:
        instances = list(
            run_stage(
                stage,
                candidates,
                store=store,
                executor=executor,
                rejected=rejected,
                stats=validate_stats,
                progress=bar,
            )
        )
    if validate_stats.cached:
        echo(f"validate: {validate_stats.cached} of {validate_stats.seen} reused from the store")

    funnel = [source_stats, validate_stats]
    out = config.dataset_dir
    write_split(instances, out, "full")
    write_jsonl(out / "instances.jsonl", sorted(instances, key=lambda i: i.instance_id))
    rejected.write(out / "rejected", [stats.stage for stats in funnel])
    stats = {"instances": len(instances), "funnel": [s.to_dict() for s in funnel]}
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")
    atomic_write_text(
        out / "config.json", json.dumps(config.resolved(), indent=2, sort_keys=True) + "\n"
    )
    atomic_write_text(out / "README.md", render_card(config.name, funnel, len(instances), "other"))
    echo("drop funnel:")
    for line in funnel_lines(funnel):
        echo("  " + line)
    echo(f"dataset: {len(instances)} instances written to {out}")
    return BuildResult(out, len(instances), funnel)
