"""The ``swt-builder`` command line: one table of subcommands, one place that turns errors into
exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType

from builder.cli import (
    build,
    collect,
    compare,
    config,
    demo,
    diff,
    doctor,
    evaluate,
    export,
    images,
    publish,
    store,
    text,
)
from builder.core import __version__
from builder.core.errors import SwtError

COMMANDS: dict[str, ModuleType] = {
    "build": build,
    "collect": collect,
    "config": config,
    "demo": demo,
    "diff": diff,
    "compare": compare,
    "evaluate": evaluate,
    "export": export,
    "publish": publish,
    "images": images,
    "doctor": doctor,
    "store": store,
    "text": text,
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


EXIT_USAGE = 2
"""A user error (any ``SwtError``): a setting, a missing file, a service that does not answer
(one line says which)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT); finished results are kept, every file is written whole or not at all."""
EXIT_BROKEN_PIPE = 141
"""The reader of stdout went away (``| head``): 128 + SIGPIPE, as the shell reports it."""


def main(argv: list[str] | None = None) -> int:
    """Run one command; user errors, Ctrl-C and a closed stdout end in one line (or none), and
    an exit code (``EXIT_*``), never in a traceback. Bugs still raise."""
    args = parser().parse_args(argv)
    try:
        code = COMMANDS[args.command].run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except SwtError as error:  # raised on purpose, with a message for the user
        print(f"swt-builder {args.command}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"swt-builder {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


__all__ = ["COMMANDS", "main", "parser"]
