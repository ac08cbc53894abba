"""The dataset an evaluation scores against: a release dir, a records file or a Hub name."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from builder.core.errors import SwtError
from builder.core.records import Candidate
from builder.release.splits import split_path
from recipes.swe_bench import SourceError, read_raw, to_candidate


class DatasetError(SwtError, ValueError):
    """The dataset cannot be read, or a row of it is no instance (the message says where)."""


@dataclasses.dataclass(frozen=True)
class EvalInstance:
    """One instance to score: the record validation saw, its golden lists and coverage."""

    candidate: Candidate
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    golden_coverage: float | None
    run_metadata: dict[str, str]

    @property
    def instance_id(self) -> str:
        return self.candidate.instance_id


def load_instances(
    location: str, config: str = "full", split: str = "test", only: Iterable[str] = ()
) -> list[EvalInstance]:
    """The instances of ``config``/``split`` (a records file has no configs: both ignored),
    sorted by id; ``only``: just these ids (an id the dataset lacks is an error)."""
    instances: dict[str, EvalInstance] = {}
    for origin, raw in _rows(location, config, split):
        if isinstance(raw, str):
            raise DatasetError(f"{origin}: {raw}")
        instance = _instance(origin, raw)
        if instance.instance_id in instances:
            raise DatasetError(f"{origin}: {instance.instance_id} appears twice")
        instances[instance.instance_id] = instance
    wanted = set(only)
    missing = sorted(wanted - set(instances))
    if missing:
        raise DatasetError(f"{location}: no instance {', '.join(missing)} in {config}/{split}")
    chosen = [instances[i] for i in sorted(instances) if not wanted or i in wanted]
    if not chosen:
        raise DatasetError(f"{location}: {config}/{split} has no instances")
    return chosen


def _rows(location: str, config: str, split: str) -> Iterator[tuple[str, dict[str, Any] | str]]:
    path = Path(location)
    if path.is_file():
        yield from _guard(location, read_raw(location, split))
        return
    if path.suffix in (".jsonl", ".json", ".parquet"):
        raise DatasetError(f"{location}: no such file")
    if path.exists() and not path.is_dir():
        raise DatasetError(f"{location}: neither a file nor a directory")
    if (path / "manifest.json").is_file():
        yield from _release_rows(path, config, split)
        return
    import datasets

    try:
        table = datasets.load_dataset(location, config, split=split)
    except (FileNotFoundError, ValueError, datasets.exceptions.DatasetNotFoundError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DatasetError(
            f"cannot load {location!r} config {config!r} split {split!r}: {first}"
        ) from error
    for index, row in enumerate(table):
        yield f"{location}[{config}/{split}][{index}]", dict(row)


def _release_rows(directory: Path, config: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A release dir's split read from its parquet file itself (``datasets``' cache would keep
    an older release of the same name and config)."""
    import pyarrow.parquet

    relative = split_path(config, split)
    data = directory / relative
    if not data.is_file():
        raise DatasetError(f"{directory}: no {config}/{split} ({relative} does not exist)")
    table = pyarrow.parquet.ParquetFile(data).read()  # read_table would import pandas: ~1 s
    for index, row in enumerate(table.to_pylist()):
        yield f"{relative}[{index}]", row


def _guard(location: str, rows: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    try:
        yield from rows
    except SourceError as error:
        raise DatasetError(f"{location}: {error}") from error


def _instance(origin: str, raw: dict[str, Any]) -> EvalInstance:
    try:
        candidate = to_candidate(raw)
    except (ValueError, ValidationError) as error:
        first = str(error).strip().splitlines()[0]
        raise DatasetError(f"{origin}: not an instance: {first}") from error
    if candidate.reference_fail_to_pass is None:
        raise DatasetError(f"{origin}: {candidate.instance_id} has no FAIL_TO_PASS")
    metadata = raw.get("run_metadata") or {}
    if isinstance(metadata, str):
        metadata = json.loads(metadata) if metadata.strip() else {}
    coverage = raw.get("golden_coverage")
    return EvalInstance(
        candidate=candidate,
        fail_to_pass=candidate.reference_fail_to_pass,
        pass_to_pass=candidate.reference_pass_to_pass or (),
        golden_coverage=None if coverage is None else float(coverage),
        run_metadata={str(k): str(v) for k, v in dict(metadata).items()},
    )
