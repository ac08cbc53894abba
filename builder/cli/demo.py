"""``swt-builder demo``: write the offline demo repository, its records and a config for it."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write the offline demo repo, records and config"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, help="where to write the demo (recreated)")


def run(args: argparse.Namespace) -> int:
    from recipes.demo.cases import DATA, DEMO_REPO
    from recipes.demo.github_demo import RECIPE
    from recipes.demo.make import generate_demo

    paths = generate_demo(args.directory)
    config = args.directory / "swt-builder.toml"
    template = (DATA / "swt-builder.toml").read_text(encoding="utf-8")
    config.write_text(template.format(repo=DEMO_REPO, recipe=RECIPE), encoding="utf-8")
    print(
        f"demo repository: {paths.repo}\n"
        f"demo records:    {paths.records}\n"
        f"config:          {config}"
    )
    return 0
