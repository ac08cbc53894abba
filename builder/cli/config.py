"""``swt-builder config``: print the resolved configuration."""

from __future__ import annotations

import argparse
import json

from builder.cli import options

HELP = "print the resolved configuration as JSON"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "source", "output_dir", "work_dir", "jobs")


def run(args: argparse.Namespace) -> int:
    print(json.dumps(options.load(args).resolved(), indent=2, sort_keys=True))
    return 0
