"""The build: read the source, validate every candidate, export the dataset and its funnel."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from builder.core.config import Config, ConfigError, ValidationConfig
from builder.core.executor import Executor
from builder.core.files import write_text_if_changed
from builder.core.pipeline import RejectedLog, StageStats, funnel_lines, run_stage
from builder.core.records import Instance
from builder.core.store import ResultStore
from builder.core.worklock import work_dir_lock
from builder.core.writable import check_writable
from builder.progress import Progress
from builder.release.publish import PublishError, publish_release, publish_target
from builder.release.write import write_config_json, write_release
from builder.task_repo.source import task_repo_candidates
from recipes.swe_bench import STAGE as SOURCE_STAGE
from recipes.swe_bench import SourceError, swe_bench_candidates
from validation.environments.docker_engine import DockerUnavailable
from validation.environments.reference import LABEL as REFERENCE_LABEL
from validation.runs.backends.docker import DockerBackend
from validation.stage import ValidateStage

_LOCAL_SOURCE_SUFFIXES = (".jsonl", ".json", ".parquet")


def _collect_github(config, store, rejected, progress, echo):
    """The collect stage (recipes/github): its stats and the candidates it kept."""
    from recipes.github.client import GitHubUnavailable
    from recipes.github.collect import collect_for_config
    from recipes.recipe import RecipeError

    with Progress("collect", "PR", enabled=progress, echo=echo) as bar:
        try:
            run = collect_for_config(config, store, rejected, echo=bar.echo, progress=bar)
        except RecipeError as error:
            raise ConfigError(str(error)) from error
        except GitHubUnavailable as error:
            raise ConfigError(
                f"GitHub at {config.source.base_url} unavailable: {error}; PRs judged so far are "
                "stored, a rerun continues from them"
            ) from error
    return run.stats, run.candidates


def _read_source(config, rejected, echo):
    """The SWE-bench-format source (records, or a task repo): its stats and candidates;
    ConfigError when unreadable."""
    location = config.source.path
    path = Path(location)
    local = path.suffix in _LOCAL_SOURCE_SUFFIXES or path.is_absolute() or location.startswith(".")
    if local and not path.exists():
        raise ConfigError(f"source.path: no such file or directory: {location}")
    stats = StageStats(SOURCE_STAGE)
    candidates = []
    if config.source.kind == "task-repo":
        rows = task_repo_candidates(path, config.source.split, config.sizes)
    else:
        rows = swe_bench_candidates(location, config.source.split, config.sizes)
    try:
        for raw, outcome in rows:
            stats.count(outcome, cached=False)
            if outcome.verdict.kept:
                candidates.append(outcome.output)
            else:
                rejected.add(raw, outcome.verdict)
    except SourceError as error:
        raise ConfigError(f"source.path: {error}") from error
    echo(f"source: {len(candidates)} candidates from {location}")
    return stats, candidates


def _check_backend(stage: ValidateStage, config: Config) -> None:
    """A Docker backend whose daemon does not answer fails here, once, not per candidate."""
    if not isinstance(stage.backend, DockerBackend):
        return
    try:
        stage.backend.client  # noqa: B018  (connects and pings)
    except DockerUnavailable as error:
        chosen = config.validation.backend
        raise ConfigError(
            f"validation.backend = {chosen!r}: {error}; start Docker (or set DOCKER_HOST), "
            "or use validation.backend = 'local'"
        ) from error


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


def validation_settings(config: Config) -> ValidationConfig:
    """``[validation]`` plus the environment spec files the recipes name (they win)."""
    if config.source.kind != "github":
        return config.validation
    files = [*config.validation.spec_files, *recipe_spec_files(config.source.recipes)]
    return config.validation.model_copy(update={"spec_files": files})


def _write_text_configs(config: Config, store: ResultStore, progress, echo) -> None:
    """The ``[text]`` configs of the release just written (texts reused from the store)."""
    from builder.core.repos import RepoCache
    from builder.text.configs import add_text_configs, settings_of

    add_text_configs(
        config.dataset_dir,
        settings_of(config.text),
        RepoCache(config.work_dir / "repos", config.repos),
        store,
        progress=progress,
        echo=echo,
    )


@dataclasses.dataclass(frozen=True)
class BuildResult:
    dataset_dir: Path
    instances: int
    funnel: list[StageStats]


def _split_lines(split_rows: dict[str, int]) -> list[str]:
    """``config/split: rows`` of the splits with rows; the empty ones counted per config."""
    lines = [f"  {split}: {rows}" for split, rows in split_rows.items() if rows]
    empty = collections.Counter(name.split("/")[0] for name, rows in split_rows.items() if not rows)
    if empty:
        counts = ", ".join(f"{config} {count}" for config, count in empty.items())
        lines.append(f"  empty splits (no file; listed in the card): {counts}")
    return lines


def _nothing_kept(
    config: Config, rejected: RejectedLog, funnel: list[StageStats], echo: Callable[[str], None]
) -> BuildResult:
    """No release: the funnel, the drops in the work dir, and one line that says so."""
    evidence = config.work_dir / "rejected"
    rejected.write(evidence, [stats.stage for stats in funnel])
    echo("drop funnel:")
    for line in funnel_lines(funnel):
        echo("  " + line)
    earlier = " (the release there is from an earlier build)" if config.dataset_dir.exists() else ""
    echo(
        f"no instance was kept: no release written to {config.dataset_dir}{earlier}, nothing "
        f"published; why each candidate was dropped: {evidence}/ (one JSONL per stage)"
    )
    return BuildResult(config.dataset_dir, 0, funnel)


def reference_line(instances: list[Instance]) -> str:
    """How many kept instances were built in their reference environment (run_metadata's
    ``environment_spec`` is ``reference:<file>``), the others in their spec's."""
    referenced = sum(
        1
        for instance in instances
        if instance.run_metadata.get("environment_spec", "").startswith(f"{REFERENCE_LABEL}:")
    )
    return (
        f"validate: {referenced} of {len(instances)} kept instances built in their reference "
        "environment (validation.reference_environments), the others in their spec's"
    )


def build(
    config: Config, progress: bool = True, echo: Callable[[str], None] = print
) -> BuildResult:
    """Run source → validate → export; finished per-record work is reused from the store.

    The work dir and the dataset dir must be writable (checked first: Unwritable, one line
    each). A build that keeps no instance writes no release (``datasets`` cannot load a split of
    0 rows, and a dir holding only drop files would load them as the data): the dataset dir is
    neither created nor touched (an earlier release there stays as it was), nothing is
    published, the drop evidence goes to ``<work_dir>/rejected/<stage>.jsonl`` and a line
    says so; the result has ``instances`` 0 (the CLI then exits 1).

    The work dir is locked for the whole build (``builder.core.worklock``): a second build or
    collect on it raises WorkDirBusy naming the holder, instead of sharing its store.
    """
    if config.source.kind == "swe-bench" and not config.source.path:
        raise ConfigError("no source: set source.path (a SWE-bench-format JSONL/parquet/dataset)")
    if config.source.kind == "task-repo" and not config.source.path:
        raise ConfigError("no source: set source.path (a task repo's directory)")
    check_writable({"work dir": config.work_dir, "output dir": config.dataset_dir})
    with work_dir_lock(config.work_dir, "build"):  # WorkDirBusy if another build holds it
        return _build(config, progress, echo)


def _build(config: Config, progress: bool, echo: Callable[[str], None]) -> BuildResult:
    """The build, its work dir held."""
    store = ResultStore(config.work_dir / "store")
    rejected = RejectedLog()

    if config.source.kind == "github":  # collect from GitHub PRs by the recipes
        source_stats, candidates = _collect_github(config, store, rejected, progress, echo)
    else:
        source_stats, candidates = _read_source(config, rejected, echo)

    settings = validation_settings(config)
    stage = ValidateStage(settings, config.work_dir, config.repos, config.docker)
    _check_backend(stage, config)
    chosen = " (auto)" if config.validation.backend == "auto" else ""
    echo(f"validate: {stage.backend.name} backend{chosen}")
    validate_stats = StageStats(stage.name)
    executor = Executor(config.executor, config.effective_jobs, config.executor_scheduler)
    with Progress("validate", "candidate", enabled=progress, echo=echo) as bar:
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
    faults = sum(validate_stats.faults.values())
    if faults:
        echo(
            f"validate: {faults} of {validate_stats.seen} hit a fault of this machine, not of "
            "the instance (infra_error: not stored, the next build tries them again)"
        )

    if settings.reference_environments:
        echo(reference_line(instances))
    funnel = [source_stats, validate_stats]
    out = config.dataset_dir
    if not instances:
        return _nothing_kept(config, rejected, funnel, echo)
    ordered = sorted(instances, key=lambda i: i.instance_id)
    write_text_if_changed(out / "instances.jsonl", "".join(i.to_json() + "\n" for i in ordered))
    rejected.write(out / "rejected", [stats.stage for stats in funnel])
    write_config_json(config, out)
    release = write_release(config, instances, funnel, echo=echo)  # splits, card, manifest
    echo("drop funnel:")
    for line in funnel_lines(funnel):
        echo("  " + line)
    if release.plan is None:
        echo(f"dataset: {len(instances)} instances in {out}, unchanged")
    else:
        echo(f"dataset: {len(instances)} instances written to {out}")
    for line in _split_lines(release.split_rows):
        echo(line)
    if config.text.enabled:
        _write_text_configs(config, store, progress, echo)
    target = publish_target(config)
    if target is not None:
        try:
            echo(publish_release(out, target).summary())
        except PublishError as error:
            raise PublishError(
                f"the dataset was written to {out}, but publishing it failed: {error}"
            ) from error
    return BuildResult(out, len(instances), funnel)
