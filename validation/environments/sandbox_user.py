"""The host user a sandbox runs untrusted code as when the builder is root: unprivileged, and
one of its own per sandbox running at the same time (claimed by a lock for the sandbox's life).

The kernel exempts uid 0 from ``RLIMIT_NPROC``, and a user namespace whose uid 0 is the host's
root changes nothing about that: the limit holds only for a process whose uid on the host is
not 0. A uid per concurrent sandbox keeps one run's processes from counting against another's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

FIRST_UID = 2_100_000_000
"""The first uid (and gid) sandboxes run as: far above any user's or subordinate range's."""
SLOTS = 256
"""How many sandboxes can run as root at once (a uid each)."""
_LOCK_DIRS = (Path("/run/swt-builder-users"), Path(tempfile.gettempdir()) / "swt-builder-users")


@dataclasses.dataclass(frozen=True)
class User:
    """An unprivileged host uid and gid a sandbox runs as."""

    uid: int
    gid: int

    def lend(self, *folders: Path) -> None:
        """Give the user ``folders`` and everything in them (symlinks themselves, not their
        targets): what the sandbox may write."""
        _chown_tree(folders, self.uid, self.gid)


def needed() -> bool:
    """The builder is root: sandboxes run as one of these users."""
    return os.geteuid() == 0


@contextlib.contextmanager
def claimed() -> Iterator[User | None]:
    """A user no other sandbox runs as while this one does (None: the builder is no root, and
    sandboxes run as the builder's own uid, which the limits hold for)."""
    if not needed():
        yield None
        return
    folder = _lock_dir()
    for slot in range(SLOTS):
        uid = FIRST_UID + slot
        handle = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            continue
        try:
            yield User(uid, uid)
        finally:
            os.close(handle)  # releases the lock
        return
    raise RuntimeError(f"all {SLOTS} sandbox users are in use (locks in {folder})")


def restore(*folders: Path) -> None:
    """Give ``folders`` and everything in them back to the builder (root)."""
    _chown_tree(folders, os.geteuid(), os.getegid())


def _lock_dir() -> Path:
    """A directory for the claims that only root can write (not one a user made first)."""
    for folder in _LOCK_DIRS:
        with contextlib.suppress(FileExistsError, FileNotFoundError, PermissionError):
            folder.mkdir(mode=0o700)
        try:
            info = folder.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return folder
    raise RuntimeError(f"no directory for sandbox user claims: {', '.join(map(str, _LOCK_DIRS))}")


def _chown_tree(folders: tuple[Path, ...], uid: int, gid: int) -> None:
    for folder in folders:
        if not folder.exists() or any(folder.is_relative_to(f) for f in folders if f != folder):
            continue  # walked with the folder it lies in
        os.chown(folder, uid, gid, follow_symlinks=False)
        for parent, dirs, files in os.walk(folder):
            for name in dirs + files:
                os.chown(os.path.join(parent, name), uid, gid, follow_symlinks=False)


__all__ = ["FIRST_UID", "SLOTS", "User", "claimed", "needed", "restore"]
