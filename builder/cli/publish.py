"""``swt-builder publish``: upload a release to the Hub in one commit and tag it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from builder.cli import options

HELP = "upload a release to the Hub and tag it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "output_dir")
    parser.add_argument("--dataset-dir", type=Path, help="release dir (default: the config's)")
    parser.add_argument("--repo-id", help="owner/name (default: HF_REPO_ID, publish.repo_id)")
    parser.add_argument("--dry-run", action="store_true", help="print what would change")


def run(args: argparse.Namespace) -> int:
    from builder.release.publish import PublishError, publish_release, resolve_target

    config = options.load(args)
    try:
        target = resolve_target(config, args.repo_id)
        outcome = publish_release(args.dataset_dir or config.dataset_dir, target, args.dry_run)
    except PublishError as error:
        print(f"swt-builder publish: {error}", file=sys.stderr)
        return 2
    print(outcome.summary())
    return 0
