"""Contamination-free splits: instances public after each model cutoff, and one per month."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import tomllib

from builder.core.config import ConfigError, RollingConfig
from builder.core.records import Instance

BUNDLED_CUTOFFS = "cutoffs.toml"
"""The registry shipped in the builder package (used when ``rolling.cutoffs`` is empty)."""


@dataclasses.dataclass(frozen=True)
class Cutoff:
    """One model's training-data cutoff: the last day of data it may have seen."""

    model: str
    date: dt.date

    @property
    def split(self) -> str:
        return cutoff_split_name(self.model)


def cutoff_split_name(model: str) -> str:
    """A valid datasets split name (``\\w+``) for a model: ``after_<model>``."""
    return "after_" + re.sub(r"\W+", "_", model).strip("_").lower()


def month_split_name(month: str) -> str:
    """``2024-03`` → ``month_2024_03``."""
    return "month_" + month.replace("-", "_")


def read_registry_text(path: str) -> str:
    """The registry's TOML text: ``path``, or the bundled one when ``path`` is empty."""
    if path:
        try:
            return Path(path).read_text(encoding="utf-8")
        except FileNotFoundError as error:
            raise ConfigError(f"rolling.cutoffs: {path} does not exist") from error
    return resources.files("builder.release").joinpath(BUNDLED_CUTOFFS).read_text(encoding="utf-8")


def load_cutoffs(path: str = "") -> list[Cutoff]:
    """Parse the registry (``[cutoffs]`` name = date), sorted by date then name."""
    source = path or f"builder/release/{BUNDLED_CUTOFFS}"
    try:
        data = tomllib.loads(read_registry_text(path))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from error
    table = data.get("cutoffs")
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: needs a [cutoffs] table of model = YYYY-MM-DD")
    cutoffs = []
    for model, date in table.items():
        if isinstance(date, dt.datetime) or not isinstance(date, dt.date):
            raise ConfigError(f"{source}: cutoff of {model!r} must be a date like 2024-04-30")
        cutoffs.append(Cutoff(model, date))
    names = [cutoff.split for cutoff in cutoffs]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise ConfigError(f"{source}: models map to the same split name: {clashes}")
    return sorted(cutoffs, key=lambda c: (c.date, c.model))


def _parse_timestamp(text: str) -> dt.datetime:
    stamp = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.astimezone(dt.timezone.utc)


def public_at(instance: Instance) -> dt.datetime:
    """When the problem became public: the earliest of the PR's and the linked issues' creation."""
    return min(_parse_timestamp(s) for s in (instance.created_at, *instance.issue_created_at))


def _month(day: dt.date | dt.datetime) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def _months_between(first: str, last: str) -> list[str]:
    year, month = map(int, first.split("-"))
    months = []
    while f"{year:04d}-{month:02d}" <= last:
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def cutoff_splits(
    instances: Sequence[Instance], cutoffs: Sequence[Cutoff]
) -> dict[str, list[Instance]]:
    """One split per cutoff: instances whose problem became public after the cutoff day."""
    return {
        cutoff.split: [i for i in instances if public_at(i).date() > cutoff.date]
        for cutoff in cutoffs
    }


def complete_months(instances: Sequence[Instance], as_of: str | None) -> list[str]:
    """The months (YYYY-MM) from the first instance's to the last one before ``as_of``'s month.

    ``as_of`` is the date the data was collected up to; without it the latest public date of
    the instances stands in, so the month still being collected is never released.
    """
    if not instances:
        return []
    dates = [public_at(instance) for instance in instances]
    end = dt.date.fromisoformat(as_of) if as_of else max(dates).date()
    first, current = _month(min(dates)), _month(end)
    return [month for month in _months_between(first, current) if month < current]


def monthly_splits(
    instances: Sequence[Instance], config: RollingConfig, released: Sequence[str] = ()
) -> dict[str, list[Instance]]:
    """A split per complete month not yet released; released months are left to the caller."""
    if not config.monthly:
        return {}
    frozen = set(released)
    splits: dict[str, list[Instance]] = {}
    for month in complete_months(instances, config.as_of):
        name = month_split_name(month)
        if name not in frozen:
            splits[name] = [i for i in instances if _month(public_at(i)) == month]
    return splits
