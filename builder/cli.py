"""The ``swt-builder`` command line: build, demo, config, diff, publish, images subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from builder.core import __version__
from builder.core.config import ConfigError, load_config

DEMO_CONFIG = """\
# The bundled offline demo: a generated repository, its pull requests and issues as GitHub
# would serve them (github/fixtures.json), and the same cases as SWE-bench-format records.
# `make build-dataset` serves the fixtures on loopback and passes source.base_url; for the
# SWE-bench path use --set source.kind=swe-bench.
name = "swt-demo"
output_dir = "dist"
work_dir = "work"

[source]
kind = "github"
recipes = ["{recipe}"]
base_url = "http://127.0.0.1:9"  # replaced by the loopback replay server's URL
path = "records.jsonl"

[repos]
"{repo}" = "github/calc.git"

[validation]
timeout_s = 20.0
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swt-builder", description="Build SWT-Bench-style test-generation benchmarks."
    )
    parser.add_argument("--version", action="version", version=f"swt-builder {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def with_config(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--config", type=Path, help="swt-builder.toml or pyproject.toml")
        sub.add_argument(
            "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
            help="override a setting, e.g. --set validation.timeout_s=60 (repeatable)",
        )  # fmt: skip
        sub.add_argument("--source", help="SWE-bench-format JSONL/parquet/dataset dir/Hub name")
        sub.add_argument("--output-dir", help="where datasets are written (default dist)")
        sub.add_argument("--work-dir", help="store, environments, mirrors and logs")
        sub.add_argument("--jobs", type=int, help="parallel tasks (0: one per core)")

    build = commands.add_parser("build", help="validate candidates and export the dataset")
    with_config(build)
    build.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = commands.add_parser("config", help="print the resolved configuration as JSON")
    with_config(show)
    demo = commands.add_parser("demo", help="write the offline demo repo, records and config")
    demo.add_argument("directory", type=Path, help="where to write the demo (recreated)")
    diff = commands.add_parser("diff", help="instance ids added/removed per split: OLD → NEW")
    diff.add_argument("old", type=Path, help="the older release's dataset dir")
    diff.add_argument("new", type=Path, help="the newer release's dataset dir")
    publish = commands.add_parser("publish", help="upload a release to the Hub and tag it")
    with_config(publish)
    publish.add_argument("--dataset-dir", type=Path, help="release dir (default: the config's)")
    publish.add_argument("--repo-id", help="owner/name (default: HF_REPO_ID, publish.repo_id)")
    publish.add_argument("--dry-run", action="store_true", help="print what would change")
    collect = commands.add_parser("collect", help="collect candidates from GitHub by recipes")
    with_config(collect)
    collect.add_argument(
        "--recipe", dest="recipes", action="append", default=[], metavar="FILE",
        help="recipe TOML (repeatable; default: the config's source.recipes)",
    )  # fmt: skip
    collect.add_argument("--base-url", help="GitHub API URL (default https://api.github.com)")
    collect.add_argument("--output", type=Path, default=Path("candidates.jsonl"))
    collect.add_argument("--no-progress", action="store_true", help="no progress bar")
    from validation.images_cli import add_images_parser

    add_images_parser(commands, with_config)
    return parser


def _overrides(args: argparse.Namespace) -> list[str]:
    named = {
        "source.path": args.source,
        "output_dir": args.output_dir,
        "work_dir": args.work_dir,
        "jobs": args.jobs,
        "source.base_url": getattr(args, "base_url", None),
    }
    extra = [f"{key}={json.dumps(value)}" for key, value in named.items() if value is not None]
    return [*args.overrides, *extra]


def _demo(directory: Path) -> int:
    from recipes.demo.generate import DEMO_REPO
    from recipes.demo.github_demo import RECIPE
    from recipes.demo.make import generate_demo

    paths = generate_demo(directory)
    config = directory / "swt-builder.toml"
    config.write_text(DEMO_CONFIG.format(repo=DEMO_REPO, recipe=RECIPE), encoding="utf-8")
    print(
        f"demo repository: {paths.repo}\n"
        f"demo records:    {paths.records}\n"
        f"config:          {config}"
    )
    return 0


def _publish(config, args: argparse.Namespace) -> int:
    from builder.release.publish import PublishError, publish_release, resolve_target

    try:
        target = resolve_target(config, args.repo_id)
        outcome = publish_release(args.dataset_dir or config.dataset_dir, target, args.dry_run)
    except PublishError as error:
        print(f"swt-builder publish: {error}", file=sys.stderr)
        return 2
    print(outcome.summary())
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "demo":
        return _demo(args.directory)
    if args.command == "diff":
        from builder.release.versions import diff_command

        try:
            print(diff_command(args.old, args.new), end="")
        except ConfigError as error:
            print(f"swt-builder diff: {error}", file=sys.stderr)
            return 2
        return 0
    try:
        config = load_config(args.config, _overrides(args))
        if args.command == "config":
            print(json.dumps(config.resolved(), indent=2, sort_keys=True))
            return 0
        if args.command == "publish":
            return _publish(config, args)
        if args.command == "collect":
            from recipes.github.collect import collect_command

            return collect_command(config, args.recipes, args.output, progress=not args.no_progress)
        if args.command == "images":
            from validation.images_cli import run_images

            return run_images(args, config)
        from builder.build import build

        build(config, progress=not args.no_progress)
    except ConfigError as error:
        print(f"swt-builder: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
