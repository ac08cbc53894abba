"""``swt-builder demo``: write the offline demo repository, its records and a config for it."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write the offline demo repo, records and config"

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, help="where to write the demo (recreated)")


def run(args: argparse.Namespace) -> int:
    from recipes.demo.generate import DEMO_REPO
    from recipes.demo.github_demo import RECIPE
    from recipes.demo.make import generate_demo

    paths = generate_demo(args.directory)
    config = args.directory / "swt-builder.toml"
    config.write_text(DEMO_CONFIG.format(repo=DEMO_REPO, recipe=RECIPE), encoding="utf-8")
    print(
        f"demo repository: {paths.repo}\n"
        f"demo records:    {paths.records}\n"
        f"config:          {config}"
    )
    return 0
