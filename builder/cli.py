"""The ``swt-builder`` command line: build, demo and config subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from builder import __version__
from builder.config import ConfigError, load_config

DEMO_CONFIG = """\
# The bundled offline demo: a generated repository and SWE-bench-format candidate records.
name = "swt-demo"
output_dir = "dist"
work_dir = "work"

[source]
kind = "swe-bench"
path = "records.jsonl"

[repos]
"{repo}" = "repo"

[validation]
timeout_s = 8.0
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
    return parser


def _overrides(args: argparse.Namespace) -> list[str]:
    named = {
        "source.path": args.source,
        "output_dir": args.output_dir,
        "work_dir": args.work_dir,
        "jobs": args.jobs,
    }
    extra = [f"{key}={json.dumps(value)}" for key, value in named.items() if value is not None]
    return [*args.overrides, *extra]


def _demo(directory: Path) -> int:
    from recipes.demo.generate import DEMO_REPO, generate_demo

    paths = generate_demo(directory)
    config = directory / "swt-builder.toml"
    config.write_text(DEMO_CONFIG.format(repo=DEMO_REPO), encoding="utf-8")
    print(
        f"demo repository: {paths.repo}\n"
        f"demo records:    {paths.records}\n"
        f"config:          {config}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "demo":
        return _demo(args.directory)
    try:
        config = load_config(args.config, _overrides(args))
        if args.command == "config":
            print(json.dumps(config.resolved(), indent=2, sort_keys=True))
            return 0
        from builder.build import build

        build(config, progress=not args.no_progress)
    except ConfigError as error:
        print(f"swt-builder: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
