"""Ways a result store entry file goes bad, each with the words its problem is reported in."""

from __future__ import annotations

import os
import time
from pathlib import Path

from builder.core.files import canonical_json
from builder.core.pipeline import Outcome, Stage
from builder.core.records import Candidate

RESULT = {"note": "café", "verdict": "ok"}
"""A stored result with a two-byte character, so a cut can land inside it."""


def entry_bytes(key: str, stage: str, /, **changes: object) -> bytes:
    """The bytes ``ResultStore.put`` writes for ``RESULT``, with ``changes`` to the entry (a
    value of None removes that field)."""
    entry = {"key": key, "stage": stage, "result": RESULT, **changes}
    return canonical_json({k: v for k, v in entry.items() if v is not None}).encode("utf-8")


def corruptions(key: str, stage: str) -> dict[str, tuple[bytes, str]]:
    """Name → (the bad file's bytes, a phrase of the reported problem)."""
    good = entry_bytes(key, stage)
    inside_character = good.index("é".encode()) + 1
    return {
        "empty": (b"", "not valid JSON"),
        "truncated": (good[: len(good) // 2], "not valid JSON"),
        "truncated_in_a_character": (good[:inside_character], "not UTF-8"),
        "invalid_utf8": (b"\xff" + good[1:], "not UTF-8"),
        "not_json": (b"<html>502 Bad Gateway</html>", "not valid JSON"),
        "array": (b"[1, 2]", "holds a JSON array"),
        "null": (b"null", "holds a JSON null"),
        "no_key": (entry_bytes(key, stage, key=None), "has no 'key' field"),
        "no_stage": (entry_bytes(key, stage, stage=None), "has no 'stage' field"),
        "no_result": (entry_bytes(key, stage, result=None), "has no 'result' field"),
        "other_key": (entry_bytes(key, stage, key="b" * 64), "holds key 'bbbb"),
        "other_stage": (entry_bytes(key, stage, stage="other"), "holds stage 'other'"),
        "result_not_object": (entry_bytes(key, stage, result=[1]), "result is a JSON array"),
    }


def write_temporary(path: Path, age_s: float) -> Path:
    """A temporary file beside ``path``, as an atomic write names it, last written ``age_s`` ago."""
    temporary = path.parent / f".{path.name}.0123456789ab.tmp"
    temporary.parent.mkdir(parents=True, exist_ok=True)
    temporary.write_bytes(b'{"key": "')
    then = time.time() - age_s
    os.utime(temporary, (then, then))
    return temporary


class KeepAll(Stage):
    """Keeps every record; remembers which ones it really processed (in its own process)."""

    name = "keep"
    output_model = Candidate

    def __init__(self) -> None:
        self.processed: list[int] = []

    def fingerprint(self) -> dict:
        return {}

    def process(self, record: Candidate) -> Outcome:  # type: ignore[override]
        self.processed.append(record.pull_number)
        return Outcome.keep(self.name, record)
