"""``swt-builder diff``: the changelog entry of one release against another."""

from __future__ import annotations

import argparse
from pathlib import Path

from builder.core.config import ConfigError

HELP = "instance ids added/removed per split: OLD → NEW"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the older release's dataset dir")
    parser.add_argument("new", type=Path, help="the newer release's dataset dir")


def run(args: argparse.Namespace) -> int:
    from builder.release.manifest import read_manifest
    from builder.release.versions import changelog_entry

    manifests = []
    for directory in (args.old, args.new):
        try:
            manifests.append(read_manifest(directory))
        except FileNotFoundError as error:
            raise ConfigError(f"{directory} is not a release dir (no manifest.json)") from error
    print(changelog_entry(*manifests), end="")
    return 0
