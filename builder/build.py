"""The build: read the source, validate every candidate, export the dataset and its funnel."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from tqdm import tqdm

from builder.core.config import Config, ConfigError, ValidationConfig
from builder.core.executor import Executor
from builder.core.pipeline import RejectedLog, StageStats, funnel_lines, run_stage
from builder.core.records import write_jsonl
from builder.core.store import ResultStore
from builder.release.publish import publish_release, publish_target
from builder.release.write import write_config_json, write_release
from recipes.swe_bench import STAGE as SOURCE_STAGE
from recipes.swe_bench import swe_bench_candidates
from validation.stage import ValidateStage


def _collect_github(config, store, rejected, progress, echo):
    """The collect stage (recipes/github): its stats and the candidates it kept."""
    from recipes.github.collect import collect_for_config
    from recipes.recipe import RecipeError

    with tqdm(desc="collect", unit="PR", disable=not progress) as bar:
        try:
            run = collect_for_config(config, store, rejected, echo=echo, progress=bar)
        except RecipeError as error:
            raise ConfigError(str(error)) from error
    return run.stats, run.candidates


def recipe_spec_files(recipes: Iterable[Path | str]) -> list[str]:
    """The environment spec files the recipes name, each checked to be a spec of its recipe's
    repository; ConfigError naming the recipe otherwise."""
    from recipes.recipe import RecipeError, load_recipe
    from validation.environments.specs import SpecError, load_spec

    files = []
    for path in recipes:
        try:
            recipe = load_recipe(path)
        except RecipeError as error:
            raise ConfigError(str(error)) from error
        if not recipe.environment:
            continue
        try:
            spec = load_spec(Path(recipe.environment))
        except SpecError as error:
            raise ConfigError(f"{path}: environment: {error}") from error
        if spec.repo != recipe.repo:
            name = Path(recipe.environment).name
            raise ConfigError(
                f"{path}: environment spec {name} is for {spec.repo}, not {recipe.repo}"
            )
        files.append(recipe.environment)
    return files


def _validation_settings(config: Config) -> ValidationConfig:
    """``[validation]`` plus the environment spec files the recipes name (they win)."""
    if config.source.kind != "github":
        return config.validation
    files = [*config.validation.spec_files, *recipe_spec_files(config.source.recipes)]
    return config.validation.model_copy(update={"spec_files": files})


@dataclasses.dataclass(frozen=True)
class BuildResult:
    dataset_dir: Path
    instances: int
    funnel: list[StageStats]


def build(
    config: Config, progress: bool = True, echo: Callable[[str], None] = print
) -> BuildResult:
    """Run source → validate → export; finished per-record work is reused from the store."""
    if config.source.kind == "swe-bench" and not config.source.path:
        raise ConfigError("no source: set source.path (a SWE-bench-format JSONL/parquet/dataset)")
    store = ResultStore(config.work_dir / "store")
    rejected = RejectedLog()

    if config.source.kind == "github":  # collect from GitHub PRs by the recipes
        source_stats, candidates = _collect_github(config, store, rejected, progress, echo)
    else:
        source_stats = StageStats(SOURCE_STAGE)
        candidates = []
        for raw, outcome in swe_bench_candidates(config.source.path, config.source.split):
            source_stats.count(outcome, cached=False)
            if outcome.verdict.kept:
                candidates.append(outcome.output)
            else:
                rejected.add(raw, outcome.verdict)
        echo(f"source: {len(candidates)} candidates from {config.source.path}")

    settings = _validation_settings(config)
    stage = ValidateStage(settings, config.work_dir, config.repos, config.docker)
    chosen = " (auto)" if config.validation.backend == "auto" else ""
    echo(f"validate: {stage.backend.name} backend{chosen}")
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
    write_jsonl(out / "instances.jsonl", sorted(instances, key=lambda i: i.instance_id))
    rejected.write(out / "rejected", [stats.stage for stats in funnel])
    write_config_json(config, out)
    release = write_release(config, instances, funnel, echo=echo)  # splits, card, manifest
    echo("drop funnel:")
    for line in funnel_lines(funnel):
        echo("  " + line)
    echo(f"dataset: {len(instances)} instances written to {out}")
    for split, rows in release.split_rows.items():
        echo(f"  {split}: {rows}")
    target = publish_target(config)
    if target is not None:
        echo(publish_release(out, target).summary())
    return BuildResult(out, len(instances), funnel)
