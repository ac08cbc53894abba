"""Write instances as a HuggingFace parquet dataset with one explicit Features schema."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import datasets

from builder.records import SWE_BENCH_COLUMNS, Instance

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

SPLIT = "test"


def split_path(config_name: str) -> str:
    """Where one config's parquet file lives, relative to the dataset dir."""
    return f"data/{config_name}/{SPLIT}-00000-of-00001.parquet"


def write_split(instances: Iterable[Instance], dataset_dir: Path, config_name: str) -> Path:
    """Write one config's rows sorted by instance id; same rows → same bytes."""
    rows = [instance.to_row() for instance in sorted(instances, key=lambda i: i.instance_id)]
    if rows and list(rows[0]) != list(FEATURES):
        raise RuntimeError(f"Instance.to_row columns {list(rows[0])} differ from FEATURES")
    table = datasets.Dataset.from_list(rows, features=FEATURES)
    target = dataset_dir / split_path(config_name)
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
