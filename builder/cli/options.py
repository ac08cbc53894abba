"""Options several commands share, and the configuration they resolve to."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from builder.core.config import Config, load_config

SHORTCUTS = {
    "source": ("source.path", "SWE-bench-format JSONL/parquet/dataset dir/Hub name"),
    "output_dir": ("output_dir", "where datasets are written (default dist)"),
    "work_dir": ("work_dir", "store, environments, mirrors and logs"),
    "jobs": ("jobs", "parallel tasks (0: one per core)"),
}
"""``--name`` → the setting it overrides, and its help."""


def add_config(parser: argparse.ArgumentParser, *shortcuts: str) -> None:
    """``--config``, ``--set`` and the named shortcuts of ``SHORTCUTS``."""
    parser.add_argument("--config", type=Path, help="swt-builder.toml or pyproject.toml")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a setting, e.g. --set validation.timeout_s=60 (repeatable)",
    )  # fmt: skip
    for name in shortcuts:
        option = "--" + name.replace("_", "-")
        kind = int if name == "jobs" else str
        parser.add_argument(option, dest=name, type=kind, help=SHORTCUTS[name][1])


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def load(args: argparse.Namespace, **extra: object) -> Config:
    """The configuration file of ``args`` with its ``--set`` and shortcut overrides applied
    (``extra``: more setting → value overrides, None meaning not given)."""
    named = {setting: getattr(args, name, None) for name, (setting, _) in SHORTCUTS.items()}
    named.update(extra)
    given = [f"{key}={json.dumps(value)}" for key, value in named.items() if value is not None]
    return load_config(args.config, [*args.overrides, *given])
