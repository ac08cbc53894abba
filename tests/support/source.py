"""The toolkit's own modules, by dotted name, read from the tree (the demo's data files are not)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("builder", "recipes", "validation")
DEMO_DATA = ROOT / "recipes" / "demo" / "data"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Dotted name → file of every module of ours (the demo repository's files are data)."""
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if DEMO_DATA not in path.parents
    }
