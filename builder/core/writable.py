"""Before any work: the dirs a command will write can be written, each problem one line."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from builder.core.errors import SwtError


class Unwritable(SwtError, OSError):
    """A dir a command writes cannot be written (one line per dir in the message)."""


def problem(directory: Path) -> str | None:
    """Why ``directory`` cannot be written, or None when it can. A dir that does not exist yet
    is checked by its nearest existing ancestor, which must be a directory. The check is a
    file made there and removed at once (nothing is left): permission bits say nothing of
    ``/proc``, ``/sys`` or a read-only mount, where root is refused all the same."""
    directory = Path(os.path.abspath(directory))
    for path in (directory, *directory.parents):
        if not os.path.lexists(path):
            continue
        if not path.is_dir():
            what = "is" if path == directory else f"is under {path}, which is"
            return f"{what} not a directory"
        try:
            handle, made = tempfile.mkstemp(prefix=".swt-write-check-", dir=path)
        except OSError as error:
            reason = error.strerror or type(error).__name__
            where = "cannot be written" if path == directory else f"cannot be made in {path}"
            return f"{where} ({reason})"
        os.close(handle)
        os.unlink(made)
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
