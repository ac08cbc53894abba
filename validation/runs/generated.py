"""Place the environment's generated project files the checkout lacks, at a session's start."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from pathlib import Path

from validation.environments.generated import INSTALLED_FILES, not_tracked_at
from validation.runs.backends.base import Session
from validation.runs.patches import PatchError

TIMEOUT_S = 300.0
_OUT = "installed-files.json"


def place_generated(
    session: Session, mirror: Path, log: Path, environment_commit: str
) -> list[str]:
    """Copy into the session's checkout the files the environment's install generated that it
    lacks (see ``validation/environments/generated.py``); the paths placed.

    A run of the environment's interpreter lists the installed project's files missing from the
    checkout, with their bytes; those the environment commit (the one the project was installed
    from) does not track are added to the checkout as a patch (``Session.apply``), so every
    backend's later runs see them. ``log`` says what was found and placed; a listing that fails
    places nothing.
    """
    folder = session.provide(INSTALLED_FILES)
    command = ["python", f"{folder}/{INSTALLED_FILES.script}", session.scratch_path(_OUT)]
    session.run(command, log, TIMEOUT_S)
    found = _read(session.read_scratch(_OUT))
    generated = not_tracked_at(mirror, environment_commit, found)
    if generated:
        try:
            session.apply(new_files_patch({p: found[p] for p in generated}), "generated files")
        except PatchError as error:
            _note(log, f"generated files not placed: {error}")
            return []
    _note(
        log, "".join(f"placed (generated, not in the environment commit): {p}\n" for p in generated)
    )
    return generated


def _read(report: bytes | None) -> dict[str, bytes]:
    try:
        entries = json.loads(report or b"[]")
        return {e["path"]: base64.b64decode(e["data"], validate=True) for e in entries}
    except (ValueError, TypeError, KeyError, binascii.Error):
        return {}


def _note(log: Path, text: str) -> None:
    if text:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")


def new_files_patch(files: dict[str, bytes]) -> str:
    """A git patch adding ``files`` (path → bytes) as binary literals: any bytes, exactly."""
    return "".join(_new_file(path, data) for path, data in sorted(files.items()))


def _new_file(path: str, data: bytes) -> str:
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    compressed = zlib.compress(data, 9)
    lines = []
    for start in range(0, len(compressed), 52):
        chunk = compressed[start : start + 52]
        size = (
            chr(ord("A") + len(chunk) - 1) if len(chunk) <= 26 else chr(ord("a") + len(chunk) - 27)
        )
        lines.append(size + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
        f"index {'0' * 40}..{blob}\nGIT binary patch\nliteral {len(data)}\n"
        + "".join(lines)
        + "\nliteral 0\nHcmV?d00001\n\n"
    )
