"""``swt-builder export``: a release in another format (SWE-bench's task repo)."""

from __future__ import annotations

import argparse
from pathlib import Path

from builder.cli import options

HELP = "write a release as a SWE-bench task repo (sweb.yaml, tasks/<id>/ with eval.sh, Dockerfile)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("task-repo",), default="task-repo",
        help="task-repo: SWE-bench 5's task repo (swebench dataset check/build/push read it)",
    )  # fmt: skip
    parser.add_argument("dataset", type=Path, help="the release dir the build wrote")
    parser.add_argument("out", type=Path, help="the task repo's directory")
    options.add_config(parser, "work_dir")


def run(args: argparse.Namespace) -> int:
    """Export; ExportError (exit 2, one line) when an environment cannot be reproduced."""
    from builder.core.worklock import work_dir_lock
    from builder.task_repo.export import export_task_repo

    config = options.load(args)
    with work_dir_lock(config.work_dir, "export"):
        export_task_repo(args.dataset, args.out, config)
    return 0
