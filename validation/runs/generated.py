"""Place the environment's generated project files the checkout lacks, at a session's start."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

from validation.environments.generated import INSTALLED_FILES, tracked_at
from validation.environments.installed_files import built_from
from validation.runs.backends.base import Session
from validation.runs.patches import PatchError

TIMEOUT_S = 300.0
_OUT = "installed-files.json"


@dataclass(frozen=True)
class _Found:
    """What a listing found for a checkout key: the generated paths and their patch."""

    listing_log: str
    generated: list[str]
    patch: str


class _Memo:
    """What each checkout key's listing found, in this process: the two sides of a validation,
    its existing tests' checkouts and an evaluation's runs open the same commit in the same
    environment, and each listing plus its patch cost seconds on a project with compiled
    extensions (astropy's 15 MB of them). A key's second session waits for the first."""

    SIZE = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[tuple, threading.Lock] = {}
        self._found: dict[tuple, _Found] = {}

    def key_lock(self, key: tuple) -> threading.Lock:
        with self._lock:
            return self._keys.setdefault(key, threading.Lock())

    def get(self, key: tuple) -> _Found | None:
        with self._lock:
            return self._found.get(key)

    def put(self, key: tuple, found: _Found) -> None:
        with self._lock:
            if len(self._found) >= self.SIZE:
                oldest = next(iter(self._found))
                del self._found[oldest]
                self._keys.pop(oldest, None)
            self._found[key] = found


_MEMO = _Memo()


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

    A fresh session whose ``checkout_key`` an earlier session of this process listed gets that
    listing's patch (the same files from the same installed environment), without a run; a
    listing that failed is never reused, and a session's second call lists its checkout again.
    """
    key = None
    if session.checkout_key is not None and not session.generated_listed:
        key = (*session.checkout_key, environment_commit, _KEY_VERSION)
    session.generated_listed = True
    if key is None:
        return _place(session, _list(session, mirror, log, environment_commit)[0], log)
    with _MEMO.key_lock(key):
        found = _MEMO.get(key)
        if found is None:
            found, complete = _list(session, mirror, log, environment_commit)
            if complete:
                _MEMO.put(key, found)
        else:
            _note(log, found.listing_log + "(the listing of an earlier checkout of this commit "
                  "in this environment)\n")  # fmt: skip
    return _place(session, found, log)


_KEY_VERSION = 2
"""Part of the memo's key: bump when what a listing finds for a checkout changes."""


def _list(
    session: Session, mirror: Path, log: Path, environment_commit: str
) -> tuple[_Found, bool]:
    """What the listing of the session's checkout found, and whether its run completed (what
    an incomplete one reported is placed, never reused)."""
    folder = session.provide(INSTALLED_FILES)
    command = ["python", f"{folder}/{INSTALLED_FILES.script}", session.scratch_path(_OUT)]
    completed = session.run(command, log, TIMEOUT_S)
    report = session.read_scratch(_OUT)
    files, candidates = _read(report)
    # One look at the environment commit's tree serves both questions: which candidates were
    # installed from it, and which of the files found it does not track (generated).
    paths = {path for path, _, _ in files} | {p for listed in candidates.values() for p in listed}
    tracked = tracked_at(mirror, environment_commit, paths)
    taken = _built_here(candidates, tracked)
    for name in sorted(taken):
        _note(log, f"the project's installed files, from {name} (no PEP 610 record; it was "
              "installed from the environment commit's tree)")  # fmt: skip
    found: dict[str, bytes] = {}
    for path, data, dist in files:  # the project's first, then those taken as it
        if dist is None or dist in taken:
            found.setdefault(path, data)
    generated = sorted(path for path in found if path not in tracked)
    patch = new_files_patch({p: found[p] for p in generated}) if generated else ""
    complete = completed.exit_code == 0 and not completed.timed_out and report is not None
    listing_log = log.read_bytes().decode("utf-8", "replace") if log.exists() else ""
    return _Found(listing_log, generated, patch), complete


def _built_here(candidates: dict[str, dict[str, str]], tracked: dict[str, str]) -> set[str]:
    """The distributions with no PEP 610 record that were installed from the environment
    commit's tree ``tracked`` (``installed_files.built_from``): the project's, installed by an
    older pip."""
    return {name for name, files in candidates.items() if built_from(files, tracked)}


def _place(session: Session, found: _Found, log: Path) -> list[str]:
    if not found.generated:
        return []
    try:
        session.apply(found.patch, "generated files")
    except PatchError as error:
        _note(log, f"generated files not placed: {error}")
        return []
    _note(
        log,
        "".join(
            f"placed (generated, not in the environment commit): {p}\n" for p in found.generated
        ),
    )
    return found.generated


def _read(report: bytes | None) -> tuple[list[tuple[str, bytes, str | None]], dict]:
    """The listing's report: ``[(path, bytes, distribution or None)]`` of the files missing
    from the checkout, those of the project's distribution (None) first, and
    ``{distribution: {path: blob id}}`` of the candidates (see ``installed_files.py``);
    nothing of a report that cannot be read."""
    try:
        data = json.loads(report or b"{}")
        files = [
            (e["path"], base64.b64decode(e["data"], validate=True), e.get("dist"))
            for e in data.get("files", [])
        ]
        candidates = {
            str(name): {str(path): str(blob) for path, blob in paths.items()}
            for name, paths in data.get("candidates", {}).items()
        }
        return sorted(files, key=lambda entry: entry[2] is not None), candidates
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        return [], {}


def _note(log: Path, text: str) -> None:
    if text:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")


def new_files_patch(files: dict[str, bytes]) -> str:
    """A git patch adding ``files`` (path → bytes) as binary literals: any bytes, exactly."""
    return "".join(_new_file(path, data) for path, data in sorted(files.items()))


def _new_file(path: str, data: bytes) -> str:
    """One file's part of the patch. The deflate level is the fastest: the patch only carries
    the bytes to ``git apply`` (a level changes its size, never what it writes)."""
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    compressed = zlib.compress(data, 1)
    encoded = base64.b85encode(compressed, pad=True).decode("ascii")  # 52 bytes → 65 characters
    lines = []
    for start in range(0, len(compressed), 52):
        size = min(52, len(compressed) - start)
        line = encoded[start // 52 * 65 : start // 52 * 65 + 65]
        lines.append(
            (chr(ord("A") + size - 1) if size <= 26 else chr(ord("a") + size - 27)) + line + "\n"
        )
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
        f"index {'0' * 40}..{blob}\nGIT binary patch\nliteral {len(data)}\n"
        + "".join(lines)
        + "\nliteral 0\nHcmV?d00001\n\n"
    )
