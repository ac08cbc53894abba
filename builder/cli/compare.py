"""``swt-builder compare``: how far a built release agrees with a published benchmark."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = (
    "compare a release's FAIL_TO_PASS/PASS_TO_PASS and keep/drop decisions with a reference "
    "benchmark's, per repository, naming the cause of each difference"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reference", required=True, metavar="RECORDS",
        help="SWE-bench-format records (JSONL, parquet, a datasets dir or a Hub name)",
    )  # fmt: skip
    parser.add_argument(
        "--ours", required=True, type=Path, metavar="DATASET_DIR",
        help="our release's dataset dir (instances.jsonl, rejected/*.jsonl)",
    )  # fmt: skip
    parser.add_argument(
        "--rejected", type=Path, metavar="DIR",
        help="where our drops are (rejected/<stage>.jsonl); default: DATASET_DIR/rejected",
    )  # fmt: skip
    parser.add_argument(
        "--exclusions", type=Path, action="append", default=[], metavar="FILE",
        help="instance ids the reference benchmark dropped, one per line (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--json", type=Path, metavar="OUT",
        help="write the report here, rewritten as the comparison goes",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from builder.compare.inputs import read_drops, read_exclusions, read_ours, read_reference
    from builder.compare.run import compare
    from builder.compare.table import render

    excluded = read_exclusions(args.exclusions) if args.exclusions else None
    references, unusable = read_reference(args.reference)
    for line in unusable:
        print(f"reference row left out: {line}", file=sys.stderr)
    ours = read_ours(args.ours)
    drops = read_drops(args.rejected or args.ours / "rejected")
    totals = compare(references, ours, drops, excluded, args.json)
    print(render(totals, with_decisions=excluded is not None), end="")
    return 0
