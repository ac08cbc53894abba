"""Content-addressed result store: one atomically written JSON file per record per stage."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.core import __version__
from builder.core.errors import SwtError
from builder.core.files import atomic_write_text, canonical_json
from builder.core.records import SCHEMA_VERSION

log = logging.getLogger(__name__)
"""Where an unusable entry is reported (without a configured handler: stderr, once per file)."""

STALE_TEMPORARY_S = 60.0
"""A temporary file (``.*.tmp``) of an atomic write this old was left by a killed write."""


def result_key(stage: str, stage_config: Any, record_input: Any) -> str:
    """Hash of everything a stage's result depends on: inputs, config, schema and toolkit."""
    material = canonical_json(
        {
            "stage": stage,
            "config": stage_config,
            "input": record_input,
            "schema_version": SCHEMA_VERSION,
            "toolkit": __version__,
        }
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}  # fmt: skip


class CorruptEntry(SwtError, ValueError):
    """A store entry that cannot be used: its message names the file and what is wrong."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def read_entry(path: Path, stage: str, key: str) -> dict[str, Any]:
    """The result held by the entry file ``path`` of ``stage`` under ``key``.

    FileNotFoundError when there is none; CorruptEntry when it is not UTF-8, not JSON, not an
    object with ``key``, ``stage`` and an object ``result``, or is another key's or stage's.
    """
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise CorruptEntry(path, f"not UTF-8 (byte {error.start}: {error.reason})") from error
    except json.JSONDecodeError as error:
        raise CorruptEntry(path, f"not valid JSON ({error})") from error
    if not isinstance(entry, dict):
        raise CorruptEntry(path, f"holds a JSON {_JSON_TYPES[type(entry)]}, not an entry object")
    missing = [field for field in ("key", "stage", "result") if field not in entry]
    if missing:
        raise CorruptEntry(path, f"has no {', '.join(repr(field) for field in missing)} field")
    if entry["key"] != key:
        raise CorruptEntry(path, f"holds key {entry['key']!r}, not its file name's")
    if entry["stage"] != stage:
        raise CorruptEntry(path, f"holds stage {entry['stage']!r}, not its folder's {stage!r}")
    if not isinstance(entry["result"], dict):
        kind = _JSON_TYPES[type(entry["result"])]
        raise CorruptEntry(path, f"its result is a JSON {kind}, not an object")
    return entry["result"]


class ResultStore:
    """Results under ``root/<stage>/<key[:2]>/<key>.json``; a present file is a finished result.

    An entry that cannot be used (see ``read_entry``) is a miss: ``get`` logs a warning naming
    the file and the problem (once per file per store), and the record's recomputed result
    replaces the entry (``put`` writes atomically).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._warned: set[Path] = set()

    def path(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / f"{key}.json"

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        """The stored result, or None when there is none or its entry cannot be used."""
        path = self.path(stage, key)
        try:
            return read_entry(path, stage, key)
        except FileNotFoundError:
            return None
        except CorruptEntry as error:
            if path not in self._warned:
                self._warned.add(path)
                log.warning("result store: %s; the record is recomputed", error)
            return None

    def put(self, stage: str, key: str, result: dict[str, Any]) -> Path:
        path = self.path(stage, key)
        atomic_write_text(path, canonical_json({"key": key, "stage": stage, "result": result}))
        self._warned.discard(path)
        return path

    def keys(self, stage: str) -> Iterator[str]:
        """Keys of the finished results of one stage (temporary files are not results)."""
        for path in sorted((self.root / stage).glob("??/*.json")):
            yield path.stem

    def entry_files(self) -> list[Path]:
        """Every entry file of every stage (``<stage>/<folder>/<name>.json``), sorted."""
        return sorted(self.root.glob("*/*/*.json"))

    def problem(self, path: Path) -> str | None:
        """What is wrong with the entry file ``path`` (of ``entry_files``), or None if good."""
        key = path.name.removesuffix(".json")
        if path.parent.name != key[:2]:
            return f"in folder {path.parent.name!r}, not its key's {key[:2]!r}"
        try:
            read_entry(path, path.parent.parent.name, key)
        except FileNotFoundError:  # removed since it was listed: nothing wrong with it
            return None
        except CorruptEntry as error:
            return error.problem
        return None

    def stale_temporaries(self, older_than_s: float = STALE_TEMPORARY_S) -> list[Path]:
        """Temporary files of atomic writes (``.*.tmp``) not touched for ``older_than_s``:
        left by a write that was killed (a younger one may still be being written)."""
        cutoff = time.time() - older_than_s
        stale = []
        for path in sorted(self.root.glob("*/*/.*.tmp")):
            try:
                if path.stat().st_mtime < cutoff:
                    stale.append(path)
            except FileNotFoundError:  # renamed into place (or removed) since it was listed
                continue
        return stale
