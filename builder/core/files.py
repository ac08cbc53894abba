"""Atomic file writes, paths kept inside their root, canonical JSON text and file hashes."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from builder.core.errors import SwtError


class OutsideRoot(SwtError, ValueError):
    """A path made from record data would leave the directory it belongs in."""


def inside(root: Path, *parts: str) -> Path:
    """``root / parts...``; raises OutsideRoot unless it lies strictly under ``root`` (both
    resolved, so ``..`` and absolute parts are caught; the path returned is not resolved).

    Every path built from record data (instance ids, repository names) goes through here, so a
    hostile value (``../x``, ``/abs/x``) cannot make the toolkit write or delete elsewhere."""
    base = Path(root).resolve()
    path = Path(root).joinpath(*parts)
    resolved = path.resolve()
    if resolved == base or not resolved.is_relative_to(base):
        raise OutsideRoot(f"{'/'.join(parts)!r} leaves {base}")
    return path


def atomic_write_text(path: Path, text: str) -> None:
    """Write a text file (UTF-8) atomically: see ``atomic_write_bytes``."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_text_if_changed(path: Path, text: str) -> bool:
    """``atomic_write_text`` unless ``path`` holds exactly ``text`` already (its mtime then stays
    as it was: a rebuild with nothing new writes nothing); whether it wrote."""
    data = text.encode("utf-8")
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    atomic_write_bytes(path, data)
    return True


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file so readers see either the old content or the whole new one, never a part.

    The file gets the permissions of any new file (0666 less the umask), as the parquet files
    beside it do: a temporary file from ``mkstemp`` would be 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = _create_temporary(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _create_temporary(path: Path) -> tuple[int, str]:
    """A new, exclusively created file beside ``path`` (the kernel applies the umask)."""
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            return os.open(temporary, flags, 0o666), str(temporary)
        except FileExistsError:
            continue


def canonical_json(value: Any) -> str:
    """A stable text form of JSON-able data: sorted keys, no whitespace variance."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
