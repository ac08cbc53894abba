"""``swt-builder images``: build base images offline, list the toolkit's images, prune them."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from builder.cli import options
from builder.core.config import Config
from validation.environments.docker_engine import DockerUnavailable, connect
from validation.environments.docker_environments import ENV_SCHEMA, DockerEnvironments
from validation.environments.images import (
    SUITES,
    BaseImageError,
    base_image_name,
    base_lock,
    build_base_image,
    ensure_base_image,
    list_images,
    prune,
)

HELP = "Docker images: build base images, list, prune"


def add_arguments(images: argparse.ArgumentParser) -> None:
    """The actions of ``images``; each takes ``--config``, ``--set`` and ``--work-dir``."""
    actions = images.add_subparsers(dest="images_command", required=True)
    base = actions.add_parser("base", help="build a base image offline (debootstrap + import)")
    options.add_config(base, "work_dir")
    base.add_argument("--python", required=True, help=f"X.Y (offline: {', '.join(SUITES)})")
    base.add_argument("--suite", help="Debian suite (default: the one shipping that Python)")
    base.add_argument("--name", help="image name (default swt-base:pythonX.Y)")
    base.add_argument("--force", action="store_true", help="rebuild even if it exists")
    listing = actions.add_parser("list", help="the toolkit's images (by label)")
    options.add_config(listing, "work_dir")
    cleanup = actions.add_parser("prune", help="remove images not needed / over the disk budget")
    options.add_config(cleanup, "work_dir")
    cleanup.add_argument("--dry-run", action="store_true", help="say what would be removed")
    cleanup.add_argument("--all", action="store_true", help="remove every image of the toolkit")
    cleanup.add_argument(
        "--unused-days", type=float, help="also remove environments not used for this many days"
    )


def run(args: argparse.Namespace) -> int:
    return run_images(args, options.load(args))


def run_images(
    args: argparse.Namespace, config: Config, echo: Callable[[str], None] = print
) -> int:
    try:
        client = connect()
    except DockerUnavailable as error:
        echo(f"swt-builder images: {error}")
        return 2
    settings = config.docker
    if args.images_command == "base":
        try:
            if args.force or args.suite or args.name:
                with base_lock(config.work_dir, args.python):
                    image = build_base_image(
                        client, args.python, settings=settings, work_dir=config.work_dir,
                        suite=args.suite, name=args.name,
                    )  # fmt: skip
            else:
                image = ensure_base_image(client, args.python, settings, config.work_dir)
        except BaseImageError as error:
            echo(f"swt-builder images base: {error}")
            return 1
        name = args.name or base_image_name(args.python, settings)
        echo(f"{name}  {image.id}")
        return 0
    if args.images_command == "list":
        for row in list_images(client):
            echo(row.line())
        return 0
    used = DockerEnvironments(client, config.work_dir, settings).last_used()
    keep = None
    if args.unused_days is not None:
        horizon = time.time() - args.unused_days * 86400
        keep = {digest for digest, when in used.items() if when >= horizon}
    report = prune(
        client,
        budget_bytes=int(settings.disk_budget_gb * 2**30),
        schema=ENV_SCHEMA,
        keep=keep,
        last_used=used,
        everything=args.all,
        dry_run=args.dry_run,
    )
    verb = "would remove" if args.dry_run else "removed"
    for name in report.removed:
        echo(f"{verb} {name}: {report.reasons[name]}")
    for name in report.in_use:
        echo(f"kept {name}: a container uses it")
    echo(
        f"{verb} {len(report.removed)} images ({report.freed_bytes / 2**20:.1f} MB) and "
        f"{len(report.containers)} leftover containers; toolkit images now "
        f"{report.total_bytes / 2**30:.2f} GiB (budget {settings.disk_budget_gb} GiB)"
    )
    over = report.total_bytes - int(settings.disk_budget_gb * 2**30)
    if over > 0 and not args.all:
        echo(
            f"still {over / 2**20:.1f} MB over the budget: what is left is base images and "
            "images in use, which prune keeps (--all removes every image of the toolkit)"
        )
    return 0
