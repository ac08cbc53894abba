"""Write instances as a HuggingFace parquet dataset with one explicit Features schema."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import datasets
from datasets.table import InMemoryTable

from builder.core.files import file_sha256
from builder.core.records import SWE_BENCH_COLUMNS, Instance
from builder.release.splits import SPLIT, split_path

if TYPE_CHECKING:
    from builder.release.splits import SplitPlan

__all__ = [
    "FEATURES",
    "SPLIT",
    "TEXT_FEATURES",
    "features_sha256",
    "read_split_rows",
    "split_path",
    "write_plan",
    "write_split",
    "write_text_split",
]

FEATURES = datasets.Features(
    {
        **{column: datasets.Value("string") for column in SWE_BENCH_COLUMNS},
        "pull_number": datasets.Value("int64"),
        "issue_numbers": datasets.Sequence(datasets.Value("int64")),
        "issue_created_at": datasets.Sequence(datasets.Value("string")),
        "merged_at": datasets.Value("string"),
        "golden_coverage": datasets.Value("float64"),
        "stats": {
            **{
                name: datasets.Value("int64")
                for name in (
                    "codebase_files",
                    "codebase_lines",
                    "golden_tests_added",
                    "golden_tests_removed",
                    "golden_test_files_edited",
                    "golden_test_lines_edited",
                )
            },
            **{
                name: {
                    transition: datasets.Value("int64")
                    for transition in (
                        "fail_to_pass",
                        "fail_to_fail",
                        "pass_to_pass",
                        "pass_to_fail",
                    )
                }
                for name in ("existing_tests", "golden_tests")
            },
        },
        "run_metadata": datasets.Value("string"),
    }
)
"""The exported schema: SWE-bench columns first (lists as JSON text), SWT extras after."""


TEXT_FEATURES = datasets.Features({**FEATURES, "text": datasets.Value("string")})
"""A text config's schema: the plain columns, then the prompt (``text``)."""


def features_sha256() -> str:
    """A fingerprint of the schema: releases with different schemas cannot share frozen files."""
    text = json.dumps(FEATURES.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_split(
    instances: Iterable[Instance], dataset_dir: Path, config_name: str, split: str = SPLIT
) -> Path:
    """Write one split's rows sorted by instance id; same rows → same bytes."""
    rows = [instance.to_row() for instance in sorted(instances, key=lambda i: i.instance_id)]
    if not rows:
        raise ValueError(f"{config_name}/{split} is empty: empty splits get no file")
    if list(rows[0]) != list(FEATURES):
        raise RuntimeError(f"Instance.to_row columns {list(rows[0])} differ from FEATURES")
    return _write_rows(rows, FEATURES, dataset_dir, config_name, split)


def read_split_rows(dataset_dir: Path, config_name: str, split: str = SPLIT) -> list[dict]:
    """The rows of one written split, as its parquet file holds them."""
    import pyarrow.parquet

    table = pyarrow.parquet.read_table(dataset_dir / split_path(config_name, split))
    return table.to_pylist()


def write_text_split(
    rows: Iterable[Mapping[str, object]],
    texts: Mapping[str, str],
    dataset_dir: Path,
    config_name: str,
    split: str = SPLIT,
    *,
    swap_columns: bool = False,
    skipped: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """Write one split of a text config: each plain row (as :func:`read_split_rows` gives it)
    and its instance's ``text``, sorted by id; with ``swap_columns`` the patch columns as
    SWT-Bench's zsb/zsp datasets hold them (:func:`swt_bench_patches`). The files of
    ``skipped`` (per instance id: its mirror lacked them) go into the row's ``run_metadata``
    as ``text_skipped_files``."""
    ordered = sorted(rows, key=lambda row: str(row["instance_id"]))
    if not ordered:
        raise ValueError(f"{config_name}/{split} is empty: empty splits get no file")
    if list(ordered[0]) != list(FEATURES):
        raise ValueError(f"{config_name}/{split}: its rows' columns are not the release's")
    text_rows = []
    for row in ordered:
        instance_id = str(row["instance_id"])
        text_row = {**row, "text": texts[instance_id]}
        if swap_columns:
            text_row.update(swt_bench_patches(row["patch"], row["test_patch"]))
        if skipped and skipped.get(instance_id):
            metadata = json.loads(row["run_metadata"] or "{}")
            metadata["text_skipped_files"] = list(skipped[instance_id])
            text_row["run_metadata"] = json.dumps(metadata, sort_keys=True)
        text_rows.append(text_row)
    return _write_rows(text_rows, TEXT_FEATURES, dataset_dir, config_name, split)


def swt_bench_patches(patch: str, test_patch: str) -> dict[str, str]:
    """SWT-Bench's zsb/zsp columns (``dataset/swt_bench.py``): ``patch`` is the golden test
    patch between ``<patch>`` and ``</patch>`` lines, ``test_patch`` the golden code patch as
    SWT-Bench takes it out of SWE-bench's ``<patch>`` lines (its lines rejoined with
    ``\\n``)."""
    wrapped = "\n".join(["<patch>", patch, "</patch>"])  # SWE-bench's create_text_dataset
    return {
        "patch": "<patch>\n" + test_patch + "\n</patch>",
        "test_patch": "\n".join(wrapped.splitlines()[1:-1]),
    }


def _write_rows(
    rows: list[dict], features: datasets.Features, dataset_dir: Path, config_name: str, split: str
) -> Path:
    """One parquet file of ``rows`` in ``features``, written whole or not at all."""
    # The same bytes as Dataset.from_list(rows, features=FEATURES), without its costly
    # fingerprinting (this dataset object only lives to be written).
    table = datasets.Dataset(
        InMemoryTable.from_pylist(rows, schema=features.arrow_schema),
        info=datasets.DatasetInfo(features=features),
        fingerprint="swt-builder-export",
    )
    target = dataset_dir / split_path(config_name, split)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    bars_were_on = not datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # one row-group write needs no bar of its own
    try:
        table.to_parquet(str(partial))
    finally:
        if bars_were_on:
            datasets.utils.enable_progress_bars()
    partial.replace(target)
    return target


def write_plan(plan: SplitPlan, dataset_dir: Path, previous_dir: Path | None = None) -> list[str]:
    """Write every non-empty split (carried ones copied verbatim); remove stale data files.

    Returns the written data paths relative to ``dataset_dir``.
    """
    written = []
    for split in plan.splits:
        if not split.rows:
            continue
        target = dataset_dir / split.path
        if split.carried_sha256 is not None:
            if previous_dir is None:
                raise ValueError(f"{split.path} is carried but no previous release dir is given")
            source = previous_dir / split.path
            if not source.is_file() or file_sha256(source) != split.carried_sha256:
                raise ValueError(
                    f"{source}: missing or not the file its release recorded "
                    f"(sha256 {split.carried_sha256}); a released split must not change"
                )
            if source.resolve() != target.resolve():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        else:
            write_split(split.instances, dataset_dir, split.config, split.name)
        written.append(split.path)
    data = dataset_dir / "data"
    if data.is_dir():
        for path in sorted(data.rglob("*"), reverse=True):
            relative = path.relative_to(dataset_dir).as_posix()
            if path.is_file() and relative not in written:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return written
