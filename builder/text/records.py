"""Text datasets made straight from SWE-bench-format records (no build): read the records,
write one parquet file per text config with SWE-bench's text-dataset columns and a card."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from builder.core.files import atomic_write_text
from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.release.export import swt_bench_patches
from builder.release.write import TextTable
from builder.text.configs import make_tables
from builder.text.errors import TextError
from builder.text.run import TextSettings

COLUMNS = (
    "instance_id", "text", "repo", "base_commit", "problem_statement", "hints_text",
    "created_at", "patch", "test_patch", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
    "environment_setup_commit",
)  # fmt: skip
"""SWE-bench's text datasets' columns (``create_text_dataset.py``), in its order."""
SKIPPED_COLUMN = "text_skipped_files"
"""Ours, after them: the files the repository's mirror could not produce."""
_INDEX = "text_configs.json"
"""The configs a records dir holds, for its card."""


@dataclasses.dataclass(frozen=True)
class Record:
    """One SWE-bench-format record: what a text is made from, and the row as read."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    row: dict[str, Any]


def read_records(location: str, split: str = "test") -> list[Record]:
    """The records at ``location`` (JSONL, parquet, a ``datasets`` dir or a Hub name) sorted
    by id; TextError when it cannot be read or a record lacks what a text needs."""
    from recipes.swe_bench import SourceError, read_raw

    records = {}
    try:
        for origin, row in read_raw(location, split):
            if isinstance(row, str):
                raise TextError(f"{origin}: {row}")
            fields = {}
            for field in ("instance_id", "repo", "base_commit", "problem_statement", "patch",
                          "test_patch"):  # fmt: skip
                if not isinstance(row.get(field), str):
                    raise TextError(f"{origin}: no {field}")
                fields[field] = row[field]
            records[fields["instance_id"]] = Record(**fields, row=row)
    except SourceError as error:
        raise TextError(str(error)) from error
    if not records:
        raise TextError(f"{location}: no records")
    return [records[key] for key in sorted(records)]


def _row(record: Record, table: TextTable) -> dict[str, Any]:
    row = {}
    for column in COLUMNS:
        value = table.texts[record.instance_id] if column == "text" else record.row.get(column)
        if isinstance(value, list):  # SWE-bench's own datasets hold the lists as JSON text
            value = json.dumps(value)
        row[column] = "" if value is None else str(value)
    if table.swap_columns:
        row.update(swt_bench_patches(record.patch, record.test_patch))
    row[SKIPPED_COLUMN] = list(table.skipped.get(record.instance_id, ()))
    return row


def add_record_configs(
    output: Path,
    records: Sequence[Record],
    split: str,
    settings: Sequence[TextSettings],
    repos: RepoCache,
    store: ResultStore,
    *,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Text configs of ``records`` by each of ``settings`` written under ``output``
    (``data/<config>/<split>-00000-of-00001.parquet``, a README whose header lists every
    config the dir holds, loadable with ``datasets.load_dataset(output, config)``); returns
    the names written."""
    import datasets

    tables = make_tables(records, settings, repos, store, progress=progress, echo=echo)
    features = datasets.Features(
        {**{column: datasets.Value("string") for column in COLUMNS},
         SKIPPED_COLUMN: datasets.Sequence(datasets.Value("string"))}
    )  # fmt: skip
    output = Path(output)
    index_path = output / _INDEX
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
    for table in tables:
        path = f"data/{table.name}/{split}-00000-of-00001.parquet"
        target = output / path
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = [_row(record, table) for record in records]
        partial = target.with_name(target.name + ".partial")
        datasets.Dataset.from_list(rows, features=features).to_parquet(str(partial))
        partial.replace(target)
        splits = index.setdefault(table.name, {"splits": {}})["splits"]
        splits[split] = path
        index[table.name].update(
            retrieval=table.retrieval, budget=table.budget, prompt=table.style,
            tokenizer=table.tokenizer, construction=table.construction,
            swapped=table.swap_columns,
        )  # fmt: skip
    atomic_write_text(index_path, json.dumps(index, indent=1, sort_keys=True) + "\n")
    atomic_write_text(output / "README.md", _card(index))
    names = [table.name for table in tables]
    echo(f"text configs written to {output}: {', '.join(names)}")
    return names


def _card(index: dict[str, Any]) -> str:
    """A README whose YAML header maps each config to its files, and a table of them."""
    yaml = ["---", "configs:"]
    rows = ["| config | retrieval | budget | prompt | tokenizer | made as |",
            "|---|---|---:|---|---|---|"]  # fmt: skip
    for name in sorted(index):
        entry = index[name]
        yaml += [f"- config_name: {name}", "  data_files:"]
        for split, path in sorted(entry["splits"].items()):
            yaml += [f"  - split: {split}", f"    path: {path}"]
        rows.append(
            f"| {name} | {entry['retrieval']} | {entry['budget']} | {entry['prompt']} | "
            f"{entry['tokenizer']} | {entry['construction']} |"
        )
    swapped = any(entry["swapped"] for entry in index.values())
    swap = (
        "\nIn the configs made as `swe-bench`, as in SWT-Bench's zsb/zsp datasets, `patch` "
        "holds the golden **test** patch between `<patch>` and `</patch>` lines and "
        "`test_patch` the golden **code** patch.\n"
        if swapped
        else ""
    )
    return (
        "\n".join(yaml) + "\n---\n\n# Text configs\n\n"
        "Prompts for LLM baselines made by `swt-builder text --source` from SWE-bench-format "
        "records, with SWE-bench's text-dataset columns; `text_skipped_files` names the "
        "files the repository's mirror could not produce.\n" + swap + "\n" + "\n".join(rows) + "\n"
    )
