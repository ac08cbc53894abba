"""``swt-builder store check``: find (and with ``--fix`` remove) unusable result store entries."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from builder.cli import options
from builder.core.config import ConfigError
from builder.core.store import STALE_TEMPORARY_S, ResultStore
from builder.core.worklock import work_dir_lock
from builder.progress import Progress

HELP = "the result store: check every entry, remove unusable ones (--fix)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="store_command", required=True)
    check = actions.add_parser(
        "check",
        help="verify every entry of every stage; exit 1 when unusable ones remain",
        description=(
            "Verify every entry of WORK_DIR/store: UTF-8, a JSON object with key, stage and "
            "result, its key its file name's and its stage its folder's; temporary files of "
            f"writes older than {STALE_TEMPORARY_S:.0f} s are reported too. A build treats an "
            "unusable entry as missing and recomputes its record."
        ),
    )
    options.add_config(check, "work_dir")
    options.add_progress(check)
    check.add_argument(
        "--fix", action="store_true", help="remove the unusable entries and stale temporary files"
    )


def run(args: argparse.Namespace) -> int:
    work_dir = options.load(args).work_dir
    store = ResultStore(work_dir / "store")
    if not args.fix:
        return check(store, progress=not args.no_progress)
    with work_dir_lock(work_dir, "store check --fix"):  # never remove what a build is writing
        return check(store, fix=True, progress=not args.no_progress)


def check(
    store: ResultStore,
    *,
    fix: bool = False,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> int:
    """One line per unusable entry and stale temporary file, then a summary; removes them with
    ``fix``. 1 when any remain, else 0."""
    if not store.root.is_dir():
        raise ConfigError(f"no result store at {store.root} (nothing was built in this work dir)")
    entries = store.entry_files()
    bad: list[tuple[Path, str]] = []
    with Progress("store check", "entry", enabled=progress, echo=echo) as bar:
        bar.reset(total=len(entries))
        for path in entries:
            problem = store.problem(path)
            if problem is not None:
                bad.append((path, problem))
            bar.update(1)
    stale = store.stale_temporaries()
    for path, problem in bad:
        echo(f"{path}: {problem}")
    for path in stale:
        echo(f"{path}: temporary file of a write that did not finish")
    echo(f"{len(entries)} entries checked, {len(bad)} bad, {len(stale)} stale temporary files")
    if not (bad or stale):
        return 0
    if not fix:
        echo("run `swt-builder store check --fix` to remove them; their records are recomputed")
        return 1
    for path in [path for path, _ in bad] + stale:
        _remove(path)
    echo(
        f"removed {len(bad)} bad entries and {len(stale)} stale temporary files; "
        "the next build recomputes their records"
    )
    return 0


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot remove {path}: {error.strerror}") from error
