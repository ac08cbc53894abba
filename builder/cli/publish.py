"""``swt-builder publish``: upload a release to the Hub in one commit and tag it."""

from __future__ import annotations

import argparse
from pathlib import Path

from builder.cli import options
from builder.core.config import ConfigError

HELP = "upload a release to the Hub and tag it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_config(parser, "output_dir")
    parser.add_argument("--dataset-dir", type=Path, help="release dir (default: the config's)")
    parser.add_argument("--repo-id", help="owner/name (default: HF_REPO_ID, publish.repo_id)")
    parser.add_argument(
        "--dry-run", action="store_true",
        help="print what would change: files, sizes, the card's diff (offline: the release "
        "alone, its card against release.previous's)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Publish, or show what would change; PublishError (exit 2, one line) when refused or
    when the Hub cannot be reached for a publish (a dry run then shows the release alone)."""
    from builder.release.manifest import MANIFEST
    from builder.release.publish import publish_release, resolve_target

    config = options.load(args)
    target = resolve_target(config, args.repo_id)
    dataset_dir = args.dataset_dir or config.dataset_dir
    if not (dataset_dir / MANIFEST).is_file():
        raise ConfigError(f"{dataset_dir} is not a release dir (no {MANIFEST}): build it first")
    previous = Path(config.release.previous) if config.release.previous else None
    outcome = publish_release(dataset_dir, target, args.dry_run, previous)
    print(outcome.summary())
    return 0
