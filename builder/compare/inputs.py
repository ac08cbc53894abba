"""The two sides of a comparison read from disk: reference records, our release and drops."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from builder.core.config import ConfigError
from builder.core.records import Instance, read_jsonl
from recipes.swe_bench import SourceError, read_raw, to_candidate


@dataclass(frozen=True)
class Reference:
    """One reference record: its repository and label lists."""

    instance_id: str
    repo: str
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]


@dataclass(frozen=True)
class Drop:
    """Why our build dropped an instance: the stage and its DropReason value."""

    stage: str
    reason: str


def read_reference(location: str) -> tuple[list[Reference], list[str]]:
    """The reference records in file order, and one line per row that is not a usable record
    (unreadable or malformed: the build drops it as ``malformed_record`` too, so it is left out
    of the comparison and named). A repeated instance id is a user error."""
    records: dict[str, Reference] = {}
    unusable: list[str] = []
    for origin, raw in read_raw(location):
        if isinstance(raw, str):
            unusable.append(f"{origin}: {raw}")
            continue
        try:
            candidate = to_candidate(raw)
        except (ValueError, ValidationError) as error:
            unusable.append(f"{origin}: not a SWE-bench record: {_first_line(error)}")
            continue
        if candidate.instance_id in records:
            raise SourceError(f"{origin}: {candidate.instance_id} appears twice")
        records[candidate.instance_id] = Reference(
            candidate.instance_id,
            candidate.repo,
            candidate.reference_fail_to_pass or (),
            candidate.reference_pass_to_pass or (),
        )
    return list(records.values()), unusable


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def read_ours(dataset_dir: Path) -> dict[str, Instance]:
    """Our kept instances by id, from ``<dataset_dir>/instances.jsonl``."""
    path = dataset_dir / "instances.jsonl"
    if not path.is_file():
        raise ConfigError(f"{dataset_dir} is not a dataset dir (no instances.jsonl)")
    try:
        return {instance.instance_id: instance for instance in read_jsonl(path, Instance)}
    except ValueError as error:
        raise ConfigError(str(error)) from error


def read_drops(rejected_dir: Path) -> dict[str, Drop]:
    """Our drops by instance id from ``rejected/<stage>.jsonl`` (none when the dir is absent);
    rows whose record has no instance id (an unreadable source line) name no instance."""
    drops: dict[str, Drop] = {}
    for path in sorted(rejected_dir.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    instance_id = row["record"].get("instance_id")
                    drop = Drop(row["stage"], row["reason"])
                except (json.JSONDecodeError, KeyError, AttributeError) as error:
                    raise ConfigError(f"{path}:{number}: not a rejected row: {error}") from error
                if isinstance(instance_id, str):
                    drops.setdefault(instance_id, drop)
    return drops


def read_exclusions(paths: list[Path]) -> set[str]:
    """Instance ids the other benchmark dropped: one per line, blank lines and ``#`` comments
    skipped."""
    excluded: set[str] = set()
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"no such exclusion list: {path}")
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if text and not text.startswith("#"):
                excluded.add(text)
    return excluded
