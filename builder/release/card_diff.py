"""What a publish would change in the dataset card: a unified diff, and file sizes as read."""

from __future__ import annotations

import difflib

CARD = "README.md"


def card_diff(old: str, new: str, old_label: str, new_label: str) -> list[str]:
    """The lines of a unified diff from ``old`` to ``new`` (empty when they are the same)."""
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_label,
            tofile=new_label,
        )
    ]


def human_size(size: int) -> str:
    """``size`` bytes as people read it: 812 B, 3.4 KiB, 12.0 MiB."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


__all__ = ["CARD", "card_diff", "human_size"]
