"""One build at a time per work dir: an exclusive lock on ``work_dir/.lock`` and its holder."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from builder.core.errors import SwtError
from builder.core.files import atomic_write_text

LOCK_NAME = ".lock"
"""The lock file in the work dir (an OS lock on it, released when its process ends)."""
HOLDER_NAME = ".lock.holder"
"""Beside the lock: the holder's command, pid and start time, for the message of the next."""


class WorkDirBusy(SwtError, RuntimeError):
    """Another process holds the work dir: two builds would share its store and run dirs."""


@contextlib.contextmanager
def work_dir_lock(work_dir: Path, command: str) -> Iterator[None]:
    """Hold ``work_dir``'s lock for the block; WorkDirBusy naming the holder if another has it."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(work_dir / LOCK_NAME)
    try:
        lock.acquire(timeout=0)
    except Timeout as error:
        raise WorkDirBusy(
            f"work dir {work_dir} is in use by {holder(work_dir)}; wait for it to end or use "
            "another work dir"
        ) from error
    try:
        started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        record = {"command": command, "pid": os.getpid(), "started": started}
        atomic_write_text(work_dir / HOLDER_NAME, json.dumps(record) + "\n")
        yield
    finally:
        (work_dir / HOLDER_NAME).unlink(missing_ok=True)
        lock.release()


def holder(work_dir: Path) -> str:
    """Who holds the lock, as its side file says (it may not have written it yet)."""
    path = Path(work_dir) / HOLDER_NAME
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "another process (it has not named itself yet)"
    return f"swt-builder {record['command']} (pid {record['pid']}, started {record['started']})"
