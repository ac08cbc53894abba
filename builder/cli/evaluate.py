"""``swt-builder evaluate``: score predicted tests on a dataset (SWT-Bench's metrics)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from builder.cli import options

HELP = "score predicted tests (SWE-bench-format predictions, or gold) on a built dataset"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dataset", required=True, metavar="PATH_OR_HUB_NAME",
        help="a release dir, a records file (JSONL/parquet) or a Hub dataset name",
    )  # fmt: skip
    parser.add_argument(
        "--config", dest="dataset_config", default="full", metavar="NAME",
        help="the dataset's config (full, lite, post_cutoff, …; default full)",
    )  # fmt: skip
    parser.add_argument("--split", default="test", help="the config's split (default test)")
    parser.add_argument(
        "--predictions", required=True, metavar="FILE",
        help="predictions (JSONL or a JSON list: instance_id, model_name_or_path, "
        "model_patch), or 'gold' for the dataset's own golden tests",
    )  # fmt: skip
    parser.add_argument(
        "--run-id", required=True, help="names the reports' dir: OUTPUT_DIR/evaluations/RUN_ID"
    )
    parser.add_argument(
        "--instances", nargs="+", default=[], metavar="ID", help="only these instances"
    )
    parser.add_argument(
        "--mode", default="unit", choices=["unit", "repro"],
        help="unit: the test files a prediction adds or changes run by the repository's "
        "runner; repro: the Python files it creates run as scripts, passing when they exit 0",
    )  # fmt: skip
    parser.add_argument(
        "--patch-format", default="auto", choices=["auto", "unified", "fuzzy", "function"],
        help="how predictions are read (default auto: detected; see docs/evaluate.md)",
    )  # fmt: skip
    parser.add_argument(
        "--with-code-edits", action="store_true",
        help="also apply a prediction's changes to non-test files (default: only test files)",
    )  # fmt: skip
    parser.add_argument(
        "--mutation", action="store_true",
        help="also try mutants of the golden patch's lines: the share the scored tests kill "
        "(with --predictions gold on a whole split of a release dir: recorded in the release)",
    )  # fmt: skip
    parser.add_argument(
        "--mutants", type=int, default=None, metavar="N",
        help="with --mutation: at most N mutants per instance (default 10)",
    )  # fmt: skip
    parser.add_argument(
        "--report-only", action="store_true",
        help="rewrite the reports from stored results; run nothing",
    )  # fmt: skip
    parser.add_argument("--settings", type=Path, help="swt-builder.toml (backend, work dir, …)")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a setting, e.g. --set validation.timeout_s=60 (repeatable)",
    )  # fmt: skip
    parser.add_argument("--output-dir", help="where reports go (default dist)")
    parser.add_argument("--work-dir", help="store, environments, mirrors and logs")
    parser.add_argument("--jobs", type=int, help="parallel tasks (0: one per core)")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    from builder.core.config import load_config
    from builder.evaluate.run import RUN_ID, EvaluationError, Request, evaluate
    from builder.progress import Progress

    if args.mutants is not None and not args.mutation:
        raise EvaluationError(f"--mutants {args.mutants} needs --mutation (mutants are off)")
    mutants = 10 if args.mutants is None else args.mutants
    if mutants < 1:
        raise EvaluationError(f"--mutants {args.mutants}: at least 1")
    if not re.match(RUN_ID, args.run_id) or ".." in args.run_id:
        raise EvaluationError(f"--run-id {args.run_id!r}: letters, digits, '.', '_', '-' only")
    given = {"output_dir": args.output_dir, "work_dir": args.work_dir, "jobs": args.jobs}
    overrides = [f"{key}={json.dumps(value)}" for key, value in given.items() if value is not None]
    config = load_config(args.settings, [*args.overrides, *overrides])
    request = Request(
        dataset=args.dataset,
        predictions=args.predictions,
        run_id=args.run_id,
        config_name=args.dataset_config,
        split=args.split,
        instances=tuple(args.instances),
        patch_format=args.patch_format,
        tests_only=not args.with_code_edits,
        report_only=args.report_only,
        mutants=mutants if args.mutation else 0,
        mode=args.mode,
    )
    with Progress("evaluate", "prediction", enabled=not args.no_progress) as bar:
        summary = evaluate(request, config, progress=bar)
    print(
        f"{summary.instances} instances: 𝒜 {summary.applicability:.1f} %, "
        f"𝒮 {summary.success:.1f} %, F→P {summary.fail_to_pass:.1f} %, "
        f"reports in {config.output_dir / 'evaluations' / args.run_id}"
    )
    return 0
