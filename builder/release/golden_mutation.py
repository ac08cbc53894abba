"""The golden tests' kill rate as a release statistic: its file, card section and manifest."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.core.files import atomic_write_text
from builder.release.card import with_golden_mutation
from builder.release.manifest import read_manifest, rehash

GOLDEN_MUTATION = "golden_mutation.json"
"""Per ``config/split``: how many mutants of the golden patches the golden tests kill. Written
by ``swt-builder evaluate --predictions gold --semantics strict --mutation`` on a release dir;
a rewrite of the release removes it (its instances may have changed)."""


def read_golden_mutation(dataset_dir: Path) -> dict[str, dict[str, Any]]:
    """The statistic per ``config/split`` (empty when the release has none)."""
    path = Path(dataset_dir) / GOLDEN_MUTATION
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8"))["splits"])


def write_golden_mutation(
    dataset_dir: Path, split: str, statistic: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Record ``statistic`` for ``split`` (``config/split``) beside the other splits' in
    ``golden_mutation.json``, list them in the card and rehash the manifest; returns them all.
    FileNotFoundError when ``dataset_dir`` has no manifest (no release)."""
    dataset_dir = Path(dataset_dir)
    manifest = read_manifest(dataset_dir)
    splits = {**read_golden_mutation(dataset_dir), split: dict(statistic)}
    text = json.dumps({"splits": splits}, indent=2, sort_keys=True) + "\n"
    atomic_write_text(dataset_dir / GOLDEN_MUTATION, text)
    card = dataset_dir / "README.md"
    atomic_write_text(card, with_golden_mutation(card.read_text(encoding="utf-8"), splits))
    rehash(dataset_dir, manifest.get("text", []))
    return splits
