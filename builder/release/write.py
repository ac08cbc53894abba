"""Turn validated instances into a release dir: splits, parquet, stats, figures, card, manifest."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.core.config import Config, ConfigError
from builder.core.files import atomic_write_text, write_text_if_changed
from builder.core.pipeline import StageStats
from builder.core.records import Instance
from builder.release.id_check import flagged_ids, warning
from builder.release.manifest import (
    file_sha256,
    inputs_fingerprint,
    is_up_to_date,
    portable_config,
    write_manifest,
)
from builder.release.reproduce import rebuild_facts
from builder.release.rolling import load_cutoffs, read_registry_text
from builder.release.versions import (
    changelog_entry,
    check_successor,
    load_previous,
    write_changelog,
)

if TYPE_CHECKING:
    from builder.release.splits import SplitPlan

PRIMARY_FILES = ("instances.jsonl", "config.json")
"""Files the build writes before the release step; their bytes are inputs of the release.
(``rejected/`` is not: its evidence holds local log paths and timings, see DIAGNOSTICS.)"""


@dataclasses.dataclass(frozen=True)
class ReleaseResult:
    dataset_dir: Path
    version: str
    plan: SplitPlan | None
    """None when the dir already held this exact release and nothing was rewritten."""
    split_rows: dict[str, int]


def _primary_digests(dataset_dir: Path) -> dict[str, str]:
    paths = [dataset_dir / name for name in PRIMARY_FILES]
    return {p.relative_to(dataset_dir).as_posix(): file_sha256(p) for p in paths if p.is_file()}


def write_config_json(config: Config, dataset_dir: Path) -> None:
    """config.json: the resolved configuration, without machine paths (see portable_config)."""
    text = json.dumps(portable_config(config), indent=2, sort_keys=True) + "\n"
    write_text_if_changed(dataset_dir / "config.json", text)


def write_release(
    config: Config,
    instances: Sequence[Instance],
    funnel: Sequence[StageStats],
    echo: Callable[[str], None] = print,
) -> ReleaseResult:
    """Splits → parquet → stats → figures → card → changelog → manifest, unless up to date."""
    out = config.dataset_dir
    previous = load_previous(config.release.previous)
    previous_manifest = previous[1] if previous else None
    if previous_manifest is not None:
        from builder.release.export import features_sha256

        check_successor(previous_manifest["version"], config.release.version)
        if previous_manifest["features_sha256"] != features_sha256():
            raise ConfigError(
                f"release.previous {previous[0]} has another schema: its frozen splits cannot "
                "be carried; make a new MAJOR release without release.previous"
            )
    funnel_dicts = [stats.to_dict() for stats in funnel]
    fingerprint = inputs_fingerprint(
        primary=_primary_digests(out),
        funnel=funnel_dicts,
        config=portable_config(config),
        cutoffs=read_registry_text(config.rolling.cutoffs),
        previous=previous_manifest,
    )
    if is_up_to_date(out, fingerprint):
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        rows = {f"{s['config']}/{s['split']}": s["rows"] for s in manifest["splits"]}
        echo(f"release {config.release.version}: up to date, nothing rewritten")
        return ReleaseResult(out, config.release.version, None, rows)

    # Heavy imports (datasets, matplotlib) only when there is something to write.
    from builder.release.card import render_card
    from builder.release.export import write_plan
    from builder.release.figures import write_figures
    from builder.release.golden_mutation import GOLDEN_MUTATION
    from builder.release.splits import FULL, LITE, plan_splits
    from builder.release.stats import statistics_table

    plan = plan_splits(instances, config, previous_manifest)
    write_plan(plan, out, previous[0] if previous else None)
    (out / GOLDEN_MUTATION).unlink(missing_ok=True)  # measured on instances that may be gone
    ordered = sorted(instances, key=lambda i: i.instance_id)
    tables = {FULL: statistics_table(ordered)}
    if plan.lite is not None:
        tables[LITE] = statistics_table(plan.lite.instances)
    split_rows = {f"{s.config}/{s.name}": s.rows for s in plan.splits}
    stats = {
        "instances": len(instances),
        "funnel": funnel_dicts,
        "lite": plan.lite.to_dict() if plan.lite is not None else None,
        "splits": split_rows,
        "statistics": {name: [row.to_dict() for row in rows] for name, rows in tables.items()},
    }
    flagged = flagged_ids(ordered)  # ids a test process may have filled with host data
    if flagged:
        stats["flagged_test_ids"] = [list(item) for item in flagged]
        echo(warning(flagged))
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")
    figures = write_figures(out, ordered, funnel)
    facts = rebuild_facts(ordered)
    card = render_card(
        name=config.name,
        version=config.release.version,
        license=config.release.license,
        instances=ordered,
        funnel=funnel,
        plan=plan,
        tables=tables,
        cutoffs=load_cutoffs(config.rolling.cutoffs),
        figures=figures,
        reproduce=facts,
    )
    atomic_write_text(out / "README.md", card)
    splits = [split.to_manifest() for split in plan.splits]
    draft = {"version": config.release.version, "splits": splits}
    write_changelog(
        out, changelog_entry(previous_manifest, draft), previous[0] if previous else None
    )
    write_manifest(
        out,
        config=config,
        splits=splits,
        counts={"instances": len(instances), "funnel": funnel_dicts, "splits": split_rows},
        fingerprint=fingerprint,
        previous_version=previous_manifest["version"] if previous_manifest else None,
        reproduce=facts,
    )
    return ReleaseResult(out, config.release.version, plan, split_rows)


TEXT_BASES = ("full", "lite", "post_cutoff", "monthly")
"""The plain configs a text config has a twin of: the same splits and rows, plus ``text``."""


@dataclasses.dataclass(frozen=True)
class TextTable:
    """The prompts of one text config (e.g. ``bm25_27k_zsp``) by instance id, and how they
    were made."""

    name: str
    retrieval: str
    budget: int
    style: str
    tokenizer: str
    texts: Mapping[str, str]
    construction: str = "all-text"
    """How the texts were made: ``swe-bench`` or ``all-text`` (builder/text/construction.py)."""
    swap_columns: bool = False
    skipped: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)
    """Per instance id, the files its mirror could not produce (noted in ``run_metadata``)."""

    def twin(self, base: str) -> str:
        """The config name of this text config's twin of plain config ``base``."""
        return self.name if base == "full" else f"{base}_{self.name}"


def write_text_configs(dataset_dir: Path, tables: Sequence[TextTable]) -> list[dict[str, Any]]:
    """Add text configs to a written release: a twin of every non-empty split of the
    ``TEXT_BASES`` configs per table, the card listing them and the manifest hashing them.

    Text configs of other names stay as they were; those of the same name are replaced.
    Returns the manifest's ``text`` entries (one per config and split)."""
    from builder.release.card import with_text_configs
    from builder.release.export import read_split_rows, write_text_split
    from builder.release.manifest import read_manifest, rehash
    from builder.release.splits import split_path

    manifest = read_manifest(dataset_dir)
    plain = {
        (split["config"], split["split"]): read_split_rows(
            dataset_dir, split["config"], split["split"]
        )
        for split in manifest["splits"]
        if split["config"] in TEXT_BASES and split["rows"]
    }  # read before any file is replaced; a carried month's rows are its file's, not jsonl's
    names = {table.name for table in tables}
    kept = [entry for entry in manifest.get("text", []) if entry["name"] not in names]
    for entry in manifest.get("text", []):
        if entry["name"] in names:  # replaced: its files go, the new ones are written below
            (dataset_dir / entry["path"]).unlink(missing_ok=True)
    entries = list(kept)
    for table in tables:
        for split in manifest["splits"]:
            if split["config"] not in TEXT_BASES or not split["rows"]:
                continue
            config = table.twin(split["config"])
            rows = plain[(split["config"], split["split"])]
            write_text_split(
                rows, table.texts, dataset_dir, config, split["split"],
                swap_columns=table.swap_columns, skipped=table.skipped,
            )  # fmt: skip
            entries.append(
                {"config": config, "split": split["split"], "rows": split["rows"],
                 "path": split_path(config, split["split"]), "name": table.name,
                 "base": split["config"], "retrieval": table.retrieval,
                 "budget": table.budget, "style": table.style, "tokenizer": table.tokenizer,
                 "construction": table.construction, "swapped": table.swap_columns}
            )  # fmt: skip
    for directory in sorted((dataset_dir / "data").iterdir()):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    entries.sort(key=lambda e: (e["config"], e["split"]))
    card = dataset_dir / "README.md"
    atomic_write_text(card, with_text_configs(card.read_text(encoding="utf-8"), entries))
    rehash(dataset_dir, entries)
    return entries
