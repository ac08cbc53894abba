"""``swt-builder build``: validate the candidates and write the release."""

from __future__ import annotations

import argparse

from builder.cli import options

HELP = "validate candidates and export the dataset"

EXIT_NO_INSTANCE = 1
"""The build ran but kept no instance: its release is empty (and not published)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "source", "output_dir", "work_dir", "jobs")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    from builder.build import build

    result = build(options.load(args), progress=not args.no_progress)
    return 0 if result.instances else EXIT_NO_INSTANCE
