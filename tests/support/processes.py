"""Whether a process is still alive, for tests that check a run's descendants were killed."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie is dead for our purpose)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split()[2] != "Z"
