"""The files a verdict's evidence names (logs), carried from a cluster's worker back to the
client, so the evidence names files on the machine that keeps the results."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from builder.core.files import atomic_write_bytes, inside


def named_files(evidence: Mapping[str, str], root: Path) -> dict[str, bytes]:
    """Path under ``root`` (relative, POSIX) → bytes of each file ``evidence`` names there
    (a value that is the file's absolute path; not through a symbolic link)."""
    base = Path(os.path.abspath(root))
    files = {}
    for text in evidence.values():
        path = Path(text)
        if not path.is_absolute() or not path.is_relative_to(base) or path == base:
            continue
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(base).as_posix()] = path.read_bytes()
    return files


def place(
    evidence: Mapping[str, str], files: Mapping[str, bytes], worker_root: str, root: Path
) -> dict[str, str]:
    """Write ``files`` (from :func:`named_files` on a worker whose root was ``worker_root``)
    under ``root`` and return ``evidence`` naming them there."""
    paths = {}
    for relative, data in files.items():
        target = inside(root, *relative.split("/"))
        atomic_write_bytes(target, data)
        paths[str(Path(worker_root) / relative)] = str(target)
    return {key: paths.get(value, value) for key, value in evidence.items()}


__all__ = ["named_files", "place"]
