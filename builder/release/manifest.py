"""The release manifest: sha256 of every file, the resolved config, toolkit version, counts and
what a rebuild needs to give the same bytes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.core import __version__
from builder.core.config import Config
from builder.core.files import atomic_write_text, canonical_json, file_sha256
from builder.core.records import SCHEMA_VERSION

MANIFEST = "manifest.json"
DIAGNOSTICS = ("rejected/",)
"""Local build diagnostics (absolute log paths, timings): not part of the release, not hashed,
not published."""


_LOOPBACK = re.compile(r"^[a-z]+://(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])(?::\d+)?", re.I)


def _portable(value: Any) -> Any:
    """Machine details out of one config value: absolute paths, loopback URLs (random ports)."""
    if isinstance(value, dict):
        return {key: _portable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_portable(item) for item in value]
    if isinstance(value, str):
        if _LOOPBACK.match(value):
            return _LOOPBACK.sub("loopback:", value)
        if value.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", value):
            return "local:" + Path(value).name
    return value


def portable_config(config: Config) -> dict[str, Any]:
    """The resolved config without machine paths: same settings → same text on any machine.

    Absolute local paths keep only their last component (``local:records.jsonl``), loopback
    URLs lose host and port; where outputs and the work dir are, and how many jobs ran on
    which executor, have no effect on the dataset and are left out.
    """
    data = config.resolved()
    for where_or_how in ("output_dir", "work_dir", "jobs", "executor", "executor_scheduler"):
        data.pop(where_or_how, None)
    return _portable(data)


def inputs_fingerprint(**parts: Any) -> str:
    """A hash of everything the release's bytes depend on (plus this toolkit's version)."""
    material = canonical_json(
        {"parts": parts, "toolkit": __version__, "schema_version": SCHEMA_VERSION}
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def hash_files(dataset_dir: Path) -> dict[str, dict[str, Any]]:
    """sha256 and size of every release file: all but the manifest, temp files, diagnostics."""
    files = {}
    for path in sorted(dataset_dir.rglob("*")):
        relative = path.relative_to(dataset_dir).as_posix()
        if not path.is_file() or relative == MANIFEST or path.name.startswith("."):
            continue
        if relative.startswith(DIAGNOSTICS):
            continue
        files[relative] = {"sha256": file_sha256(path), "bytes": path.stat().st_size}
    return files


def write_manifest(
    dataset_dir: Path,
    *,
    config: Config,
    splits: list[dict[str, Any]],
    counts: Mapping[str, Any],
    fingerprint: str,
    previous_version: str | None,
    reproduce: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Hash the finished dataset dir and write ``manifest.json`` (deterministic: no dates);
    ``reproduce``: what a rebuild needs to give the same bytes (``reproduce.rebuild_facts``)."""
    from builder.release.export import features_sha256  # imports datasets: only when writing

    manifest = {
        "name": config.name,
        "version": config.release.version,
        "previous_version": previous_version,
        "toolkit_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "features_sha256": features_sha256(),
        "inputs_fingerprint": fingerprint,
        "counts": dict(counts),
        "splits": splits,
        "config": portable_config(config),
        "files": hash_files(dataset_dir),
    }
    if reproduce is not None:
        manifest["reproduce"] = dict(reproduce)
    atomic_write_text(dataset_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def read_manifest(dataset_dir: Path) -> dict[str, Any]:
    """The manifest of a release dir; raises FileNotFoundError when it has none."""
    return json.loads((Path(dataset_dir) / MANIFEST).read_text(encoding="utf-8"))


def is_up_to_date(dataset_dir: Path, fingerprint: str) -> bool:
    """True when the dir holds a release of exactly these inputs, every file intact."""
    try:
        manifest = read_manifest(dataset_dir)
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    if manifest.get("inputs_fingerprint") != fingerprint:
        return False
    return hash_files(dataset_dir) == manifest.get("files")


def rehash(dataset_dir: Path, text: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest with ``text`` (the text configs, one entry per config and split) and the
    digests of the files as they are now; the rest (the fingerprint too) as it was."""
    manifest = read_manifest(dataset_dir)
    if text:
        manifest["text"] = text
    else:
        manifest.pop("text", None)
    manifest["files"] = hash_files(dataset_dir)
    atomic_write_text(dataset_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
