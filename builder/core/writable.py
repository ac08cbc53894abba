"""Before any work: the dirs a command will write can be written, each problem one line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from builder.core.errors import SwtError


class Unwritable(SwtError, OSError):
    """A dir a command writes cannot be written (one line per dir in the message)."""


def problem(directory: Path) -> str | None:
    """Why ``directory`` cannot be written, or None when it can. Nothing is created: a dir that
    does not exist yet is checked by its nearest existing ancestor, which must be a directory
    this process may create entries in."""
    directory = Path(os.path.abspath(directory))
    for path in (directory, *directory.parents):
        if not os.path.lexists(path):
            continue
        if not path.is_dir():
            what = "is" if path == directory else f"is under {path}, which is"
            return f"{what} not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return "cannot be written" if path == directory else f"cannot be made in {path}"
        return None
    return None


def check_writable(directories: Mapping[str, Path]) -> None:
    """Raise Unwritable naming each of ``directories`` (label → dir) that cannot be written."""
    lines = []
    for label, directory in directories.items():
        found = problem(directory)
        if found is not None:
            lines.append(f"{label} {directory} {found}")
    if lines:
        raise Unwritable("\n".join(lines))
