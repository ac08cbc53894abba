"""Read SWE-bench-format records (JSONL, parquet, a datasets dir or a Hub name) as Candidates."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from builder.core.config import SizesConfig
from builder.core.errors import SwtError
from builder.core.pipeline import Outcome
from builder.core.records import Candidate, DropReason
from builder.core.sizes import oversized

STAGE = "source"
SOURCE_NAME = "swe-bench"
_REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")
_PULL_NUMBER = re.compile(r"-(\d+)$")
_SAVED_MARKERS = ("dataset_dict.json", "state.json")
"""Files ``save_to_disk`` writes into a DatasetDict dir / a Dataset dir."""


class SourceError(SwtError, ValueError):
    """The source as a whole cannot be read (missing file, unknown dataset)."""


def read_raw(location: str, split: str = "test") -> Iterator[tuple[str, dict[str, Any] | str]]:
    """Yield ``(origin, record)`` per row; a row that is no JSON object comes as an error text."""
    path = Path(location)
    if path.suffix == ".jsonl" or path.suffix == ".json" and path.is_file():
        yield from _read_jsonl(path)
        return
    yield from _read_dataset(location, split)


def _read_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any] | str]]:
    if not path.is_file():
        raise SourceError(f"no such file: {path}")
    with path.open("rb") as handle:  # decoded line by line: one bad line drops that record
        for number, data in enumerate(handle, start=1):
            if not data.strip():
                continue
            origin = f"{path.name}:{number}"
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as error:
                yield origin, f"not UTF-8: {error.reason} at byte {error.start}"
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                yield origin, f"not JSON: {error}"
                continue
            yield origin, value if isinstance(value, dict) else "not a JSON object"


def _read_dataset(location: str, split: str) -> Iterator[tuple[str, dict[str, Any] | str]]:
    import datasets

    path = Path(location)
    if path.is_file() and path.suffix == ".parquet":
        table = datasets.load_dataset("parquet", data_files=str(path), split="train")
    elif any((path / marker).is_file() for marker in _SAVED_MARKERS):
        table = datasets.load_from_disk(str(path))
        if isinstance(table, datasets.DatasetDict):
            table = table[split]
    elif path.is_dir() or "/" in location:
        try:
            table = datasets.load_dataset(location, split=split)
        except (FileNotFoundError, ValueError) as error:
            raise SourceError(
                f"cannot load dataset {location!r} split {split!r}: {error}"
            ) from error
    else:
        raise SourceError(f"{location!r} is no JSONL/parquet file, datasets dir or Hub name")
    for index, row in enumerate(table):
        yield f"{path.name or location}[{index}]", dict(row)


def _as_list(value: Any, field: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{field} must be a list of test ids (or its JSON text)")
    return tuple(value)


def _as_date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        value = value.astimezone(dt.timezone.utc) if value.tzinfo else value
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str) and value:
        return value
    raise ValueError(f"created_at must be a date, got {value!r}")


def _text(raw: dict[str, Any], field: str) -> str:
    """A text column: bytes (a parquet binary column) must be UTF-8; other values as text."""
    value = raw.get(field)
    if value is None:
        return ""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{field}: not UTF-8: {error.reason} at byte {error.start}") from error
    return str(value)


def to_candidate(raw: dict[str, Any], source: str = SOURCE_NAME) -> Candidate:
    """Convert one SWE-bench row; raises ValueError naming what is wrong."""
    missing = [field for field in _REQUIRED if not raw.get(field)]
    if missing:
        raise ValueError(f"missing or empty field(s): {', '.join(missing)}")
    instance_id = _text(raw, "instance_id")
    pull = _PULL_NUMBER.search(instance_id)
    number = raw.get("pull_number")
    if isinstance(number, int) and not isinstance(number, bool):
        pull_number: int | None = number
    else:
        pull_number = int(pull.group(1)) if pull else None
    return Candidate(
        instance_id=instance_id,
        repo=_text(raw, "repo"),
        base_commit=_text(raw, "base_commit"),
        patch=_text(raw, "patch"),
        test_patch=_text(raw, "test_patch"),
        problem_statement=_text(raw, "problem_statement"),
        hints_text=_text(raw, "hints_text"),
        created_at=_as_date(raw.get("created_at")),
        version=_text(raw, "version"),
        environment_setup_commit=_text(raw, "environment_setup_commit"),
        pull_number=pull_number,
        **_provenance(raw),
        source=source,
        reference_fail_to_pass=_as_list(raw.get("FAIL_TO_PASS"), "FAIL_TO_PASS"),
        reference_pass_to_pass=_as_list(raw.get("PASS_TO_PASS"), "PASS_TO_PASS"),
    )


def _provenance(raw: dict[str, Any]) -> dict[str, Any]:
    """The issues and merge date a row carries in our columns (a release, a task repo we
    wrote): the rolling splits date a problem by its issues."""
    found: dict[str, Any] = {}
    numbers, dates = raw.get("issue_numbers"), raw.get("issue_created_at")
    if isinstance(numbers, list) and all(isinstance(n, int) for n in numbers):
        found["issue_numbers"] = tuple(numbers)
    if isinstance(dates, list) and all(isinstance(d, str) for d in dates):
        found["issue_created_at"] = tuple(dates)
    if isinstance(raw.get("merged_at"), str):
        found["merged_at"] = raw["merged_at"]
    return found


def make_record(
    repo: str, number: int, base: str, patch: str, test_patch: str, **extra: Any
) -> dict[str, Any]:
    """A SWE-bench-format record (a dict) for a repository at hand: fixtures, benchmarks.

    ``extra`` overrides any column (e.g. ``version=""``, ``problem_statement=...``).
    """
    record = {
        "repo": repo,
        "instance_id": f"{repo.replace('/', '__')}-{number}",
        "base_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": f"Issue {number}: something is wrong.",
        "hints_text": "",
        "created_at": "2024-02-01T00:00:00Z",
        "version": "0.1",
        "environment_setup_commit": base,
        "FAIL_TO_PASS": "[]",
        "PASS_TO_PASS": "[]",
    }
    record.update(extra)
    return record


def swe_bench_candidates(
    location: str, split: str = "test", sizes: SizesConfig | None = None
) -> Iterator[tuple[Any, Outcome]]:
    """Yield ``(raw, outcome)`` per row: a Candidate, or a named drop with the error as evidence."""
    yield from candidates_of(read_raw(location, split), SOURCE_NAME, sizes)


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A row a source refused to read, with the drop reason and why (e.g. ``unsafe_path``: a
    file of a task repo that is a link)."""

    reason: DropReason
    error: str


def candidates_of(
    rows: Iterable[tuple[str, dict[str, Any] | str | Refusal]],
    source: str,
    sizes: SizesConfig | None = None,
) -> Iterator[tuple[Any, Outcome]]:
    """``(raw, outcome)`` per ``(origin, row)`` of a source named ``source``: a Candidate, or a
    named drop (a malformed, duplicate or oversized record: ``sizes``, default the
    configuration's defaults; a row the source refused, :class:`Refusal`) with the error as
    evidence."""
    sizes = sizes or SizesConfig()
    seen: set[str] = set()
    for origin, raw in rows:
        if isinstance(raw, Refusal):
            yield (
                {"origin": origin},
                Outcome.drop(STAGE, raw.reason, origin=origin, error=raw.error),
            )
            continue
        if isinstance(raw, str):
            yield (
                {"origin": origin},
                Outcome.drop(STAGE, DropReason.MALFORMED_RECORD, origin=origin, error=raw),
            )
            continue
        try:
            candidate = to_candidate(raw, source)
        except (ValueError, ValidationError) as error:
            yield (
                raw,
                Outcome.drop(
                    STAGE, DropReason.MALFORMED_RECORD, origin=origin, error=_short(error)
                ),
            )
            continue
        over = oversized(candidate, sizes)
        if over:
            yield (
                {"origin": origin, "instance_id": candidate.instance_id},
                Outcome.drop(
                    STAGE,
                    DropReason.OVERSIZED_RECORD,
                    origin=origin,
                    instance_id=candidate.instance_id,
                    **over,
                ),
            )
            continue
        if candidate.instance_id in seen:
            yield (
                raw,
                Outcome.drop(
                    STAGE,
                    DropReason.DUPLICATE_INSTANCE,
                    origin=origin,
                    instance_id=candidate.instance_id,
                ),
            )
            continue
        seen.add(candidate.instance_id)
        yield raw, Outcome.keep(STAGE, candidate, origin=origin)


def _short(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "; ".join(
            f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}"
            for item in error.errors()
        )
    return str(error)
