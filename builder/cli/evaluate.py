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
        "--dataset", metavar="PATH_OR_HUB_NAME",
        help="a release dir, a records file (JSONL/parquet) or a Hub dataset name",
    )  # fmt: skip
    parser.add_argument(
        "--config", dest="dataset_config", default="full", metavar="NAME",
        help="the dataset's config (full, lite, post_cutoff, …; default full)",
    )  # fmt: skip
    parser.add_argument("--split", default="test", help="the config's split (default test)")
    parser.add_argument(
        "--predictions", metavar="FILE",
        help="predictions (JSONL or a JSON list: instance_id, model_name_or_path, "
        "model_patch), or 'gold' for the dataset's own golden tests",
    )  # fmt: skip
    parser.add_argument("--run-id", help="names the reports' dir: OUTPUT_DIR/evaluations/RUN_ID")
    parser.add_argument(
        "--swt-reports", type=Path, metavar="DIR",
        help="run nothing: print SWT-Bench's table for a folder of report.json files "
        "(run_instance_swt_logs/RUN_ID/MODEL, from its harness or ours) over --total N "
        "instances or the ids of --denominator; --gold-reports DIR adds ΔC",
    )  # fmt: skip
    parser.add_argument(
        "--total", type=int, metavar="N", help="with --swt-reports: the instances scored over"
    )
    parser.add_argument(
        "--gold-reports", type=Path, metavar="DIR",
        help="with --swt-reports: the gold run's folder of report.json files (for ΔC)",
    )  # fmt: skip
    parser.add_argument(
        "--instances", nargs="+", default=[], metavar="ID", help="only these instances"
    )
    parser.add_argument(
        "--semantics", default="swt-bench", choices=["swt-bench", "strict"],
        help="swt-bench (default): run, apply and grade as SWT-Bench's harness does, for figures "
        "that stand beside its leaderboard; strict: only the tests a prediction wrote are "
        "scored, code edits dropped, ΔC per test (docs/evaluate.md compares them)",
    )  # fmt: skip
    parser.add_argument(
        "--patch-types", nargs="+", default=["vanilla"], metavar="TYPE",
        choices=["vanilla", "fuzzy", "custom"],
        help="swt-bench: SWT-Bench's patch types, tried in order (default vanilla: the patch "
        "as git apply takes it; fuzzy: their tolerant diff; custom: their function-level format)",
    )  # fmt: skip
    parser.add_argument(
        "--denominator", metavar="FILE",
        help="score over this fixed set of instance ids (a JSON list or one per line, e.g. a "
        "published split's): ids the dataset lacks count as not applicable",
    )  # fmt: skip
    parser.add_argument(
        "--strict-ids", action="store_true",
        help="a prediction for an id the dataset lacks is an error (default: a warning, skipped)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help="per test run (default 1800 under swt-bench, as SWT-Bench; strict: "
        "validation.timeout_s)",
    )  # fmt: skip
    parser.add_argument(
        "--mode", default="unit", choices=["unit", "repro"],
        help="unit: the test files a prediction adds or changes run by the repository's "
        "runner; repro: the Python files it creates run as scripts, passing when they exit 0",
    )  # fmt: skip
    parser.add_argument(
        "--patch-format", default="auto", choices=["auto", "unified", "fuzzy", "function"],
        help="strict: how predictions are read (default auto: detected; see docs/evaluate.md)",
    )  # fmt: skip
    parser.add_argument(
        "--with-code-edits", action="store_true",
        help="strict: also apply a prediction's changes to non-test files (default: only test "
        "files; swt-bench always applies them)",
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
    """Score the predictions; the reports' dir and the work dir are checked writable first
    (Unwritable: one line each, exit 2)."""
    from builder.core.config import load_config
    from builder.core.writable import check_writable
    from builder.evaluate.run import RUN_ID, EvaluationError, Request, check, evaluate
    from builder.evaluate.swt.metrics import SwtSummary, table
    from builder.progress import Progress

    if args.swt_reports is not None:
        return _score_reports(args)
    absent = [f"--{name.replace('_', '-')}" for name in ("dataset", "predictions", "run_id")
              if getattr(args, name) is None]  # fmt: skip
    if absent:
        raise EvaluationError(f"the following arguments are required: {', '.join(absent)}")
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
        semantics=args.semantics,
        patch_types=tuple(args.patch_types),
        denominator=args.denominator,
        strict_ids=args.strict_ids,
        timeout_s=args.timeout,
    )
    check(request)
    where = config.output_dir / "evaluations" / args.run_id
    check_writable({"output dir": where, "work dir": config.work_dir})  # one line each
    with Progress("evaluate", "prediction", enabled=not args.no_progress) as bar:
        summary = evaluate(request, config, progress=bar)
    if isinstance(summary, SwtSummary):
        print(table(args.run_id, summary), end="")
        print(
            f"{summary.instances} instances ({summary.reports} with a report), semantics "
            f"swt-bench: 𝒲 {summary.applicability:.1f} %, 𝒮 {summary.success:.1f} %, "
            f"reports in {where}"
        )
        return 0
    print(
        f"{summary.instances} instances, semantics strict: 𝒜 {summary.applicability:.1f} %, "
        f"𝒮 {summary.success:.1f} %, F→P {summary.fail_to_pass:.1f} %, reports in {where}"
    )
    return 0


def _score_reports(args: argparse.Namespace) -> int:
    """``--swt-reports``: SWT-Bench's figures for report.json files; nothing runs."""
    from builder.evaluate.swt.metrics import table
    from builder.evaluate.swt.report import score_reports

    denominator = Path(args.denominator) if args.denominator else None
    summary = score_reports(
        args.swt_reports, total=args.total, denominator=denominator, gold_dir=args.gold_reports
    )
    print(table(args.swt_reports.name, summary), end="")
    print(f"{summary.reports} reports over {summary.instances} instances")
    return 0
