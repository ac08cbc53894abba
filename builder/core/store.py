"""Content-addressed result store: one atomically written JSON file per record per stage."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.core import __version__
from builder.core.files import atomic_write_text, canonical_json
from builder.core.records import SCHEMA_VERSION


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


class ResultStore:
    """Results under ``root/<stage>/<key[:2]>/<key>.json``; a present file is a finished result."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / f"{key}.json"

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        path = self.path(stage, key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        entry = json.loads(text)
        if entry.get("key") != key:
            raise ValueError(f"result store entry {path} holds key {entry.get('key')!r}")
        return entry["result"]

    def put(self, stage: str, key: str, result: dict[str, Any]) -> Path:
        path = self.path(stage, key)
        atomic_write_text(path, canonical_json({"key": key, "stage": stage, "result": result}))
        return path

    def keys(self, stage: str) -> Iterator[str]:
        """Keys of the finished results of one stage (temporary files are not results)."""
        for path in sorted((self.root / stage).glob("??/*.json")):
            yield path.stem
