"""Release versions: the scheme, the changelog of instance ids added and removed, and diff."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.core.config import ConfigError
from builder.core.files import atomic_write_text
from builder.release.manifest import read_manifest

CHANGELOG = "CHANGELOG.md"

VERSION_SCHEME = """\
Versions are MAJOR.MINOR.PATCH and every release names the one it continues:
- MAJOR: the schema (columns, their types or meaning) or a split's definition changed; frozen
  splits cannot be carried across it, so a major release starts without `release.previous`.
- MINOR: instances were added or removed (new months, new collection, revalidation).
- PATCH: the same instances in every split; only the card, figures or metadata changed.
Released monthly splits are frozen: later releases carry their files byte for byte."""


def parse_version(text: str) -> tuple[int, int, int]:
    parts = text.split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ConfigError(f"version {text!r} is not MAJOR.MINOR.PATCH")
    major, minor, patch = map(int, parts)
    return major, minor, patch


def check_successor(previous: str, version: str) -> None:
    """A release must have a higher version than the one it continues, and the same MAJOR."""
    old, new = parse_version(previous), parse_version(version)
    if new <= old:
        raise ConfigError(f"release.version {version} must be higher than the previous {previous}")
    if new[0] != old[0]:
        raise ConfigError(
            f"release.version {version} changes MAJOR from {previous}: a major release does not "
            "continue a previous one (leave release.previous empty)"
        )


def split_ids(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """``config/split`` → instance ids, as a release recorded them."""
    return {f"{s['config']}/{s['split']}": list(s["instance_ids"]) for s in manifest["splits"]}


def diff_releases(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, dict[str, list]]:
    """Per split of either release: the instance ids added and removed from old to new."""
    before, after = split_ids(old), split_ids(new)
    changes = {}
    for key in sorted(set(before) | set(after)):
        was, now = set(before.get(key, ())), set(after.get(key, ()))
        changes[key] = {
            "status": "new" if key not in before else "gone" if key not in after else "kept",
            "added": sorted(now - was),
            "removed": sorted(was - now),
        }
    return changes


def changelog_entry(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> str:
    """The markdown entry of ``new``: per split, the ids added and removed against ``old``."""
    if old is None:
        lines = [f"## {new['version']}", "", "First release."]
        for key, ids in split_ids(new).items():
            lines.append(f"- `{key}`: {len(ids)} instances")
        return "\n".join(lines) + "\n"
    lines = [f"## {new['version']} (previous: {old['version']})", ""]
    for key, change in diff_releases(old, new).items():
        added, removed = change["added"], change["removed"]
        label = {"new": " (new split)", "gone": " (split removed)", "kept": ""}[change["status"]]
        lines.append(f"- `{key}`{label}: +{len(added)} −{len(removed)}")
        lines.extend(f"  - added `{instance_id}`" for instance_id in added)
        lines.extend(f"  - removed `{instance_id}`" for instance_id in removed)
    return "\n".join(lines) + "\n"


def write_changelog(dataset_dir: Path, entry: str, previous_dir: Path | None) -> None:
    """CHANGELOG.md: this release's entry above the previous release's changelog."""
    history = ""
    if previous_dir is not None and (previous_dir / CHANGELOG).is_file():
        history = (previous_dir / CHANGELOG).read_text(encoding="utf-8")
        history = history.removeprefix("# Changelog\n").lstrip("\n")
    text = "# Changelog\n\n" + entry + ("\n" + history if history else "")
    atomic_write_text(dataset_dir / CHANGELOG, text)


def load_previous(path: str) -> tuple[Path, dict[str, Any]] | None:
    """The previous release (``release.previous``): its dir and manifest, or None if unset."""
    if not path:
        return None
    directory = Path(path)
    try:
        return directory, read_manifest(directory)
    except FileNotFoundError as error:
        raise ConfigError(f"release.previous: {directory} holds no manifest.json") from error
