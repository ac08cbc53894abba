"""``swt-builder text``: text configs (prompts with retrieved files) for a written release, or
a text dataset made straight from SWE-bench-format records."""

from __future__ import annotations

import argparse
from pathlib import Path

from builder.cli import options

HELP = "add text configs (issue + retrieved files + prompt) to a release for LLM baselines"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "output_dir", "work_dir")
    parser.add_argument(
        "--dataset", type=Path, help="the release dir the build wrote (default: the config's)"
    )
    parser.add_argument(
        "--source", metavar="RECORDS",
        help="SWE-bench-format records (JSONL, parquet, datasets dir or Hub name) instead "
        "of a release: writes a text dataset of them to --output",
    )  # fmt: skip
    parser.add_argument("--split", default="test", help="the split of --source (default test)")
    parser.add_argument(
        "--output", type=Path,
        help="where --source's text dataset goes (default: OUTPUT_DIR/<records name>-text)",
    )  # fmt: skip
    parser.add_argument(
        "--style", choices=("swe-bench", "all-text"),
        help="how the texts are made (default: text.style)",
    )  # fmt: skip
    parser.add_argument(
        "--retrieval", choices=("bm25", "issue+bm25", "oracle", "oracle+tests"),
        help="which files the prompts show (default: text.retrieval)",
    )  # fmt: skip
    parser.add_argument("--budget", type=int, help="prompt tokens (default: text.budget)")
    parser.add_argument(
        "--prompt", choices=("zsb", "zsp", "both"), help="prompt style (default: text.prompts)"
    )
    parser.add_argument(
        "--exclude-tests", action="store_true",
        help="leave test files out of the index, as SWE-bench's retrieval did",
    )  # fmt: skip
    parser.add_argument(
        "--templates", type=Path,
        help="a directory with zsb.jinja and zsp.jinja replacing the bundled prompts",
    )  # fmt: skip
    parser.add_argument(
        "--tokenizer", choices=("cl100k_base", "o200k_base"),
        help="what counts tokens (default: text.tokenizer)",
    )  # fmt: skip
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Write the text configs; TextError (exit 2, one line) on a bad release dir or records,
    or an instance without text."""
    from builder.core.repos import RepoCache
    from builder.core.store import ResultStore
    from builder.core.worklock import work_dir_lock
    from builder.text.configs import add_text_configs, settings_of
    from builder.text.records import add_record_configs, read_records

    prompts = {"both": ["zsb", "zsp"], "zsb": ["zsb"], "zsp": ["zsp"]}.get(args.prompt)
    config = options.load(
        args,
        **{
            "text.style": args.style,
            "text.retrieval": [args.retrieval] if args.retrieval else None,
            "text.budget": args.budget,
            "text.prompts": prompts,
            "text.include_tests": False if args.exclude_tests else None,
            "text.templates": str(args.templates) if args.templates else None,
            "text.tokenizer": args.tokenizer,
        },
    )
    settings = settings_of(config.text)
    repos = RepoCache(config.work_dir / "repos", config.repos)
    progress = not args.no_progress
    with work_dir_lock(config.work_dir, "text"):
        store = ResultStore(config.work_dir / "store")
        if args.source:
            records = read_records(args.source, args.split)
            name = Path(args.source.rstrip("/")).name.removesuffix(".jsonl")
            output = args.output or config.output_dir / f"{name.replace('.', '_')}-text"
            add_record_configs(output, records, args.split, settings, repos, store,
                               progress=progress)  # fmt: skip
        else:
            dataset_dir = args.dataset or config.dataset_dir
            add_text_configs(dataset_dir, settings, repos, store, progress=progress)
    return 0
