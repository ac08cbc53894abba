"""Keep/drop decisions of both benchmarks side by side, with our drop reason."""

from __future__ import annotations

AGREE_KEEP = "agree_keep"
AGREE_DROP = "agree_drop"
WE_KEEP_THEY_DROP = "we_keep_they_drop"
WE_DROP_THEY_KEEP = "we_drop_they_keep"
NOT_IN_OURS = "not_in_ours"
"""Our build never saw the instance (neither kept nor dropped): a different input set."""

DECISIONS = (AGREE_KEEP, AGREE_DROP, WE_KEEP_THEY_DROP, WE_DROP_THEY_KEEP, NOT_IN_OURS)


def decision(we_keep: bool, we_drop: bool, they_drop: bool) -> str:
    """The row of the agreement table one instance falls in."""
    if we_keep:
        return WE_KEEP_THEY_DROP if they_drop else AGREE_KEEP
    if we_drop:
        return AGREE_DROP if they_drop else WE_DROP_THEY_KEEP
    return NOT_IN_OURS
