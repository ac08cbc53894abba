"""Files of a source directory read without following links: nothing outside it is ever read.

A task repo is a stranger's directory, and the builder reads it as whoever runs the build
(root, a token in the environment): a ``problem_statement.md`` linked to ``~/.ssh/id_rsa`` or
``/etc/shadow`` would put that file into every split. Every path is opened one component at a
time below the source's root, each with ``O_NOFOLLOW`` relative to its parent's descriptor, and
checked with ``fstat``: a symbolic link anywhere, a device, FIFO or socket, or a name that is
not a plain component (``..``, a slash) is :class:`UnsafePath`, naming the path and why. The
root itself is the user's choice and may be a link.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from builder.core.errors import SwtError


class UnsafePath(SwtError, ValueError):
    """A path of a source directory that is a link, no regular file or directory, or would
    leave the directory."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file or directory")


def _component(part: str, shown: str) -> None:
    if part in ("", ".", "..") or "/" in part or "\0" in part:
        raise UnsafePath(shown, "not a name inside the directory")


def _open_entry(
    parent: int, name: str, shown: str, wanted: Callable[[int], bool], flags: int
) -> int:
    """A descriptor of ``name`` in the directory ``parent`` when it is of the ``wanted`` kind,
    opened without following a link (one swapped in after the check is refused too)."""
    info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not wanted(info.st_mode):
        raise UnsafePath(shown, _kind(info.st_mode))
    try:
        return os.open(name, flags | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link meanwhile
            raise UnsafePath(shown, "a symbolic link") from error
        raise


def _open_dir(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of the directory ``root/parts…``, every component checked."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    walked: list[str] = []
    try:
        for part in parts:
            walked.append(part)
            shown = "/".join(walked)
            _component(part, shown)
            child = _open_entry(fd, part, shown, stat.S_ISDIR, os.O_RDONLY | os.O_DIRECTORY)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(root: Path, *parts: str) -> bytes:
    """The bytes of the regular file ``root/parts…``; FileNotFoundError when it is absent,
    UnsafePath when it or a folder on the way is not what it must be."""
    *folders, name = parts
    shown = "/".join(parts)
    _component(name, shown)
    parent = _open_dir(root, tuple(folders))
    try:
        fd = _open_entry(parent, name, shown, stat.S_ISREG, os.O_RDONLY | os.O_NONBLOCK)
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UnsafePath(shown, "not a regular file")
        return handle.read()


def exists(root: Path, *parts: str) -> bool:
    """Whether ``root/parts…`` is there (as anything: :func:`read_bytes` judges it)."""
    *folders, name = parts
    try:
        parent = _open_dir(root, tuple(folders))
    except FileNotFoundError:
        return False
    try:
        os.stat(name, dir_fd=parent, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(parent)


def entries(root: Path, *parts: str) -> Iterator[tuple[str, str]]:
    """``(name, kind)`` of each entry of the directory ``root/parts…``, sorted: kind ``dir``,
    ``file`` or why it is neither (a link, a device, …), never followed."""
    fd = _open_dir(root, parts)
    try:
        names = sorted(os.listdir(fd))
        found = []
        for name in names:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else _kind(mode)
            found.append((name, kind))
    finally:
        os.close(fd)
    yield from found
