"""The ``swt-builder`` command line: one table of subcommands, one place that turns errors into
exit codes."""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from builder.cli import build, collect, config, demo, diff, images, publish
from builder.core import __version__
from builder.core.config import ConfigError

COMMANDS: dict[str, ModuleType] = {
    "build": build,
    "collect": collect,
    "config": config,
    "demo": demo,
    "diff": diff,
    "publish": publish,
    "images": images,
}
"""Each command module has ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``."""


def parser() -> argparse.ArgumentParser:
    """The whole command line: every command's own options, and only those."""
    top = argparse.ArgumentParser(
        prog="swt-builder", description="Build SWT-Bench-style test-generation benchmarks."
    )
    top.add_argument("--version", action="version", version=f"swt-builder {__version__}")
    commands = top.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_arguments(commands.add_parser(name, help=module.HELP, description=module.HELP))
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except ConfigError as error:
        print(f"swt-builder {args.command}: {error}", file=sys.stderr)
        return 2


__all__ = ["COMMANDS", "main", "parser"]
