"""The file system a sandbox sees: the host's system directories, ``/etc`` without its secrets,
fresh ``/proc``, ``/dev``, ``/tmp`` and ``/run``, and only the paths its caller names.

Nothing else of the host is there: no home directory (``/root``, ``/home``), no work dir but the
run's own, no mount of the user's files. A path the caller names is shown at its own place with
the symbolic links met on the way to it, so an interpreter kept under a home (pyenv's, uv's) runs
while nothing else of that home is mounted.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "nix")
"""Top-level directories of the host shown read-only: programs, the interpreter's shared
libraries, the loader's cache, CA certificates, locale, time zone, users and resolver settings
(``/nix``: where Nix keeps every library). Each is shown when the host has it."""
ETC_SECRETS = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl/private",
    "security/opasswd",
)
"""Entries of ``/etc`` shown empty: password hashes, sudo rules, the host's SSH keys, TLS keys."""
RUNTIME_DIRS = ("/run",)
"""Where service sockets live (the Docker daemon's is the host's root): an empty tmpfs."""
_MAX_LINKS = 40


@dataclasses.dataclass(frozen=True)
class Mount:
    """A host path and where the sandbox sees it, read-only unless ``writable``; no source: a
    fresh, empty, writable tmpfs at ``dest``."""

    source: Path | None
    dest: str
    writable: bool = False

    def args(self) -> list[str]:
        if self.source is None:
            return ["--perms", "1777", "--tmpfs", self.dest]
        source, dest = str(self.source), self.dest
        if dest == source:  # at its own path: the real one (a symlink is no mount point)
            source = dest = os.path.realpath(source)
        return ["--bind" if self.writable else "--ro-bind", source, dest]


@dataclasses.dataclass(frozen=True)
class Link:
    """A symbolic link the sandbox shows at ``dest``, pointing to ``target`` (as the host's)."""

    target: str
    dest: str

    def args(self) -> list[str]:
        return ["--symlink", self.target, self.dest]


def reachable(path: Path | str) -> list[Link]:
    """The links met on the way to ``path`` (each shown at its own place), so that ``path`` is
    reachable by its own name once its real location is mounted."""
    links: list[Link] = []
    current, pending = "/", list(Path(os.path.abspath(path)).parts[1:])
    while pending:
        part = pending.pop(0)
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if not os.path.islink(candidate):
            current = candidate
            continue
        if len(links) >= _MAX_LINKS:
            raise OSError(f"too many levels of symbolic links resolving {path}")
        target = os.readlink(candidate)
        links.append(Link(target, candidate))
        if target.startswith("/"):
            current = "/"
        pending = list(Path(target).parts[1 if target.startswith("/") else 0 :]) + pending
    return links


def interpreter(python: Path | str) -> list[Mount | Link]:
    """What running ``python`` needs: its installation read-only at its real place, and the
    links from its name (and from a venv's ``home``) to there."""
    real = Path(os.path.realpath(python))
    shown: list[Mount | Link] = [Mount(real.parent.parent, str(real.parent.parent))]
    shown += reachable(python)
    config = Path(python).parent.parent / "pyvenv.cfg"
    if config.is_file():
        for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip().startswith("/"):
                shown += reachable(value.strip())
    return shown


def system() -> list[str]:
    """bubblewrap arguments for the system directories (read-only, ``/etc``'s secrets empty)
    and a fresh ``/proc``, ``/dev`` (its ``/dev/shm`` writable by anyone, as a host's: the
    sandbox's unprivileged uid makes multiprocessing's semaphores there), ``/tmp`` and ``/run``
    (a resolver config kept under ``/run`` bound back, read-only)."""
    args: list[str] = []
    for name in SYSTEM:
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += _hidden(Path(os.path.realpath("/etc")) / name for name in ETC_SECRETS)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--tmpfs", "/tmp"]  # /dev/shm: multiprocessing's semaphores
    args += ["--perms", "0755", "--tmpfs", "/run"]
    resolver = os.path.realpath("/etc/resolv.conf")
    if resolver.startswith(tuple(f"{d}/" for d in RUNTIME_DIRS)) and os.path.isfile(resolver):
        args += ["--ro-bind", resolver, resolver]
    return args


def _hidden(paths: Iterable[Path]) -> list[str]:
    """An empty tmpfs over each existing directory, /dev/null over each file."""
    args: list[str] = []
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", str(path)]
        elif path.exists() or path.is_symlink():
            args += ["--ro-bind", "/dev/null", str(path)]  # reads as empty
    return args


def layout(shown: Sequence[Mount | Link]) -> list[str]:
    """bubblewrap arguments for ``shown`` (in order): each place's missing parents made
    traversable (0755; bubblewrap's own are 0700, closed to an unprivileged user), the mounts,
    then the links that no mount already holds."""
    covered = [f"/{name}" for name in SYSTEM] + ["/proc", "/dev"]  # read-only, or the kernel's
    mounts = [item for item in shown if isinstance(item, Mount)]
    places = [_place(mount) for mount in mounts]
    links = [
        link
        for link in dict.fromkeys(item for item in shown if isinstance(item, Link))
        if not _inside(link.dest, [*covered, *places])
    ]
    parents: list[str] = []
    for dest in [*places, *(link.dest for link in links)]:
        for parent in reversed(Path(dest).parents[:-1] if dest != "/" else []):
            if str(parent) not in parents and not _inside(str(parent), [*covered, *places]):
                parents.append(str(parent))
    args: list[str] = []
    for parent in sorted(parents, key=lambda p: p.count("/")):
        args += ["--perms", "0755", "--dir", parent]
    for mount in mounts:
        args += mount.args()
    for link in links:
        args += link.args()
    return args


def _place(mount: Mount) -> str:
    """Where the sandbox shows ``mount`` (the real path for one at its own place)."""
    if mount.source is not None and mount.dest == str(mount.source):
        return os.path.realpath(mount.source)
    return mount.dest


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


__all__ = ["ETC_SECRETS", "SYSTEM", "Link", "Mount", "interpreter", "layout", "reachable", "system"]
