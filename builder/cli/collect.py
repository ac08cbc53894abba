"""``swt-builder collect``: candidates from GitHub by recipes, as JSONL, with their drops."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from builder.cli import options
from builder.core.pipeline import RejectedLog
from builder.core.store import ResultStore
from builder.core.worklock import work_dir_lock

HELP = "collect candidates from GitHub by recipes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "work_dir", "jobs")
    parser.add_argument(
        "--recipe", dest="recipes", action="append", default=[], metavar="FILE",
        help="recipe TOML (repeatable; default: the config's source.recipes)",
    )  # fmt: skip
    parser.add_argument("--base-url", help="GitHub API URL (default https://api.github.com)")
    parser.add_argument("--output", type=Path, default=Path("candidates.jsonl"))
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    config = options.load(args, **{"source.base_url": args.base_url})
    return _collect(config, args.recipes, args.output, progress=not args.no_progress)


def _collect(
    config: Any,
    recipe_files: Sequence[str],
    output: Path,
    *,
    echo: Callable[[str], None] = print,
    progress: bool = False,
) -> int:
    """``swt-builder collect``: write the candidates as JSONL and the drops beside them. The
    work dir and the output file's folder are checked writable first (Unwritable: one line
    each, exit 2)."""
    from builder.core.pipeline import funnel_lines
    from builder.core.records import write_jsonl
    from builder.core.writable import check_writable
    from builder.progress import Progress

    output = Path(output)
    check_writable({"work dir": config.work_dir, "output dir": output.parent})

    if recipe_files:
        files = [str(Path(f).resolve()) for f in recipe_files]
        config = config.model_copy(
            update={"source": config.source.model_copy(update={"recipes": files})}
        )
    from recipes.github.client import GitHubUnavailable  # PyGithub: imported only here
    from recipes.github.collect import STAGE, collect_for_config
    from recipes.recipe import RecipeError

    rejected = RejectedLog()
    try:
        with (
            work_dir_lock(config.work_dir, "collect"),  # it writes the store a build reads
            Progress("collect", "PR", enabled=progress, echo=echo) as bar,
        ):
            store = ResultStore(config.work_dir / "store")
            run = collect_for_config(config, store, rejected, echo=bar.echo, progress=bar)
    except RecipeError as error:
        print(f"swt-builder collect: {error}", file=sys.stderr)
        return 2
    except GitHubUnavailable as error:
        print(f"swt-builder collect: GitHub unavailable: {error}", file=sys.stderr)
        return 1
    write_jsonl(output, run.candidates)
    rejected.write(output.parent / "rejected", [STAGE])
    echo("drop funnel:")
    for line in funnel_lines([run.stats]):
        echo("  " + line)
    echo(f"candidates: {len(run.candidates)} written to {output}")
    echo(f"GitHub API calls: {run.client.total_calls}")
    return 0
