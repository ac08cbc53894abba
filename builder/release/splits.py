"""Which instances go in which split: full, lite, post-cutoff and monthly (frozen once released)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from builder.core.config import Config
from builder.core.records import Instance
from builder.release.lite import LiteSelection, select_lite
from builder.release.rolling import cutoff_splits, load_cutoffs, monthly_splits

FULL, LITE, POST_CUTOFF, MONTHLY = "full", "lite", "post_cutoff", "monthly"
CONFIG_ORDER = (FULL, LITE, POST_CUTOFF, MONTHLY)
FROZEN_CONFIGS = (MONTHLY,)
"""Configs whose splits never change once released: later releases carry them verbatim."""

_SPLIT_NAME = re.compile(r"^\w+$")

SPLIT = "test"
"""The split name of the full and lite configs (what SWE-bench harnesses load)."""


def split_path(config_name: str, split: str = SPLIT) -> str:
    """Where one split's parquet file lives, relative to the dataset dir."""
    return f"data/{config_name}/{split}-00000-of-00001.parquet"


@dataclasses.dataclass(frozen=True)
class Split:
    """One split of one config: its rows (or, when carried from a release, only their ids)."""

    config: str
    name: str
    instance_ids: tuple[str, ...]
    instances: tuple[Instance, ...] | None
    frozen: bool = False
    carried_sha256: str | None = None
    """Set when the split is carried verbatim from the previous release's file of this hash."""

    def __post_init__(self) -> None:
        if not _SPLIT_NAME.match(self.name) or not _SPLIT_NAME.match(self.config):
            raise ValueError(f"split {self.config}/{self.name} is not a valid datasets name (\\w+)")

    @property
    def path(self) -> str:
        return split_path(self.config, self.name)

    @property
    def rows(self) -> int:
        return len(self.instance_ids)

    def to_manifest(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "split": self.name,
            "path": self.path if self.rows else None,
            "rows": self.rows,
            "frozen": self.frozen,
            "instance_ids": list(self.instance_ids),
        }


@dataclasses.dataclass(frozen=True)
class SplitPlan:
    """Every split of a release, in a stable order, and how Lite was chosen."""

    splits: list[Split]
    lite: LiteSelection | None

    def by_config(self) -> dict[str, list[Split]]:
        grouped: dict[str, list[Split]] = {}
        for split in self.splits:
            grouped.setdefault(split.config, []).append(split)
        return grouped

    def get(self, config: str, name: str) -> Split:
        for split in self.splits:
            if (split.config, split.name) == (config, name):
                return split
        raise KeyError(f"{config}/{name}")


def _made(config: str, name: str, instances: Sequence[Instance], frozen: bool = False) -> Split:
    ordered = tuple(sorted(instances, key=lambda i: i.instance_id))
    return Split(config, name, tuple(i.instance_id for i in ordered), ordered, frozen)


def carried_splits(previous_manifest: Mapping[str, Any] | None) -> list[Split]:
    """The frozen splits of the previous release, exactly as it recorded them."""
    if not previous_manifest:
        return []
    files = previous_manifest["files"]
    carried = []
    for entry in previous_manifest["splits"]:
        if entry["config"] in FROZEN_CONFIGS:
            digest = files[entry["path"]]["sha256"] if entry["path"] else None
            carried.append(
                Split(
                    entry["config"],
                    entry["split"],
                    tuple(entry["instance_ids"]),
                    None,
                    frozen=True,
                    carried_sha256=digest,
                )
            )
    return carried


def plan_splits(
    instances: Sequence[Instance],
    config: Config,
    previous_manifest: Mapping[str, Any] | None = None,
) -> SplitPlan:
    """All splits for ``instances``; the previous release's frozen splits are kept as they were."""
    splits = [_made(FULL, "test", instances)]
    lite = None
    if config.lite.enabled:
        lite = select_lite(instances, config.lite)
        splits.append(_made(LITE, "test", lite.instances))
    for name, members in cutoff_splits(instances, load_cutoffs(config.rolling.cutoffs)).items():
        splits.append(_made(POST_CUTOFF, name, members))
    carried = carried_splits(previous_manifest)
    released = [split.name for split in carried if split.config == MONTHLY]
    fresh = monthly_splits(instances, config.rolling, released)
    monthly = carried + [_made(MONTHLY, n, m, frozen=True) for n, m in fresh.items()]
    splits.extend(sorted(monthly, key=lambda s: s.name))
    return SplitPlan(splits, lite)
