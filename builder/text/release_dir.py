"""The instances of a release dir the build wrote (``instances.jsonl`` and ``manifest.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from builder.core.records import SWE_BENCH_COLUMNS, Instance, read_jsonl
from builder.release.splits import MONTHLY
from builder.text.errors import TextError


def read_release(dataset_dir: Path) -> list[Instance]:
    """The release's instances sorted by id; TextError when the dir is not a whole release
    (no manifest, no or unreadable instances, a split naming an instance it lacks)."""
    dataset_dir = Path(dataset_dir)
    if not dataset_dir.is_dir():
        raise TextError(f"{dataset_dir}: no such release dir")
    try:
        manifest = json.loads((dataset_dir / "manifest.json").read_text(encoding="utf-8"))
        splits = manifest["splits"]
    except FileNotFoundError as error:
        raise TextError(f"{dataset_dir} is not a release dir (no manifest.json)") from error
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise TextError(f"{dataset_dir}/manifest.json is not a release manifest") from error
    path = dataset_dir / "instances.jsonl"
    try:
        instances = sorted(read_jsonl(path, Instance), key=lambda i: i.instance_id)
    except FileNotFoundError as error:
        raise TextError(f"{dataset_dir} is not a release dir (no instances.jsonl)") from error
    except ValueError as error:
        raise TextError(str(error).splitlines()[0]) from error
    known = {instance.instance_id: instance for instance in instances}
    for split in splits:
        missing = [i for i in split.get("instance_ids", []) if i not in known]
        if not missing:
            continue
        if split.get("config") != MONTHLY:
            raise TextError(
                f"{dataset_dir}: split {split.get('config')}/{split.get('split')} names "
                f"{missing[0]}, which instances.jsonl lacks"
            )
        known.update(_carried(dataset_dir, split, missing))  # a month released earlier
    return sorted(known.values(), key=lambda i: i.instance_id)


def _carried(dataset_dir: Path, split: dict, wanted: list[str]) -> dict[str, Instance]:
    """The instances ``wanted`` of a carried split, read from its own file: a frozen month
    keeps instances that later releases dropped."""
    from builder.release.export import read_split_rows  # imports datasets: only when needed

    name = f"{split['config']}/{split['split']}"
    try:
        rows = read_split_rows(dataset_dir, split["config"], split["split"])
    except (OSError, ValueError) as error:  # pyarrow's errors derive from these
        raise TextError(f"{dataset_dir}: split {name} cannot be read: {error}") from error
    found = {}
    for row in rows:
        if row.get("instance_id") in wanted:
            try:
                found[row["instance_id"]] = _instance(row)
            except ValueError as error:
                first = str(error).splitlines()[0]
                raise TextError(f"{dataset_dir}: split {name}: {first}") from error
    absent = [i for i in wanted if i not in found]
    if absent:
        raise TextError(f"{dataset_dir}: split {name} names {absent[0]}, which its file lacks")
    return found


def _instance(row: dict) -> Instance:
    """An exported row as an Instance, as far as a text needs it: the problem, the labels and
    the provenance (the statistics are left out)."""
    fields = {column: row[column] for column in SWE_BENCH_COLUMNS}
    for labels in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        fields[labels] = tuple(json.loads(fields[labels]))
    for key in ("pull_number", "merged_at"):
        if row.get(key) is not None:
            fields[key] = row[key]
    for key in ("issue_numbers", "issue_created_at"):
        fields[key] = tuple(row.get(key) or ())
    return Instance.model_validate(fields)
