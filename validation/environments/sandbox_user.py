"""The host user a sandbox runs untrusted code as when the builder is root: unprivileged, and
one of its own per sandbox running at the same time (claimed by a lock for the sandbox's life).

The kernel exempts uid 0 from ``RLIMIT_NPROC``, and a user namespace whose uid 0 is the host's
root changes nothing about that: the limit holds only for a process whose uid on the host is
not 0. A uid per concurrent sandbox keeps one run's processes from counting against another's.

Environment builds run as such a uid too, with one group for all of them (:data:`BUILD_GID`):
uv's cache is shared by every build, so it is that group's, group-writable, its directories
set-group-ID (:func:`share`), and builds write with umask 002 (:data:`SHARED_UMASK`).
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
BUILD_GID = FIRST_UID + SLOTS
"""The group every environment build runs as (its only one): the group of uv's shared cache."""
SHARED_UMASK = 0o002
"""A build's umask: what it adds to the cache, the rest of that group may read and write."""
_LOCK_DIRS = (Path("/run/swt-builder-users"), Path(tempfile.gettempdir()) / "swt-builder-users")


@dataclasses.dataclass(frozen=True)
class User:
    """An unprivileged host uid and gid a sandbox runs as."""

    uid: int
    gid: int

    def building(self) -> User:
        """This uid with the builds' group (:data:`BUILD_GID`): what an environment build runs
        as."""
        return dataclasses.replace(self, gid=BUILD_GID)

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


def restore(*folders: Path, keep_group: bool = False) -> None:
    """Give ``folders`` and everything in them back to the builder (root); ``keep_group``: the
    owner only (an environment whose files are hardlinks of the shared cache's keeps them in
    the builds' group)."""
    _chown_tree(folders, os.geteuid(), -1 if keep_group else os.getegid())


def share(cache: Path) -> None:
    """Make the uv cache ``cache`` usable by every build (each its own uid, all in
    :data:`BUILD_GID`): every entry in that group and readable and writable by it (a build
    hardlinks cache files into its environment, which ``protected_hardlinks`` allows a user
    only for files it may write), every directory set-group-ID (what is added there is that
    group's). Entries already so are only looked at: what builds added is (they write with
    :data:`SHARED_UMASK`); what others added (root's own uv on the same cache) is put right."""
    cache.mkdir(parents=True, exist_ok=True)
    _shared(cache, is_dir=True)
    for parent, dirs, files in os.walk(cache):
        for name in dirs:
            _shared(os.path.join(parent, name), is_dir=True)
        for name in files:
            _shared(os.path.join(parent, name), is_dir=False)


def traversable(folder: Path) -> None:
    """Let the builds' group pass through ``folder`` (not list it): a build's own folders, lent
    to it, lie in the environments' folder, which the sandbox shows with its host rights."""
    info = folder.stat()
    if info.st_gid != BUILD_GID and not info.st_mode & stat.S_IXOTH:
        os.chown(folder, -1, BUILD_GID)
        info = folder.stat()
    if info.st_gid == BUILD_GID and not info.st_mode & stat.S_IXGRP:
        os.chmod(folder, stat.S_IMODE(info.st_mode) | stat.S_IXGRP)


_SHARED_DIR = stat.S_ISGID | stat.S_IRWXG
_SHARED_FILE = stat.S_IRGRP | stat.S_IWGRP


def _shared(path: Path | str, *, is_dir: bool) -> None:
    """``path`` in the builds' group with its rights (gone meanwhile: a build renamed it)."""
    try:
        info = os.lstat(path)
        if info.st_gid != BUILD_GID:
            os.chown(path, -1, BUILD_GID, follow_symlinks=False)
        wanted = _SHARED_DIR if is_dir and stat.S_ISDIR(info.st_mode) else _SHARED_FILE
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & wanted != wanted:
            os.chmod(path, stat.S_IMODE(info.st_mode) | wanted)
    except FileNotFoundError:
        pass


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


__all__ = [
    "BUILD_GID",
    "FIRST_UID",
    "SHARED_UMASK",
    "SLOTS",
    "User",
    "claimed",
    "needed",
    "restore",
    "share",
    "traversable",
]
