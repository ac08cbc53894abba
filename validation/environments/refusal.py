"""Output shaped like a sandbox's or launcher's refusal: the cue to check the launchers."""

from __future__ import annotations

from pathlib import Path

from builder.core.faults import InfrastructureError

LAUNCHERS = frozenset({"bwrap", "setpriv", "prlimit", "unshare"})
"""The programs that start a build step or a run (the sandbox, the parent-death signal, the
limits, the network namespace): each says ``<name>: <why>`` and exits 1 when it cannot."""
REFUSED_EXIT = 1
_READ_LIMIT = 4096
"""A launcher's complaint is one short line: output longer than this is a command's own."""


class SandboxRefused(InfrastructureError):
    """The sandbox (or another launcher) did not start the command: nothing of the instance ran
    (e.g. bubblewrap cannot mount over a home entry, or cannot execute the interpreter)."""

    fault = "sandbox"


def refusal(exit_code: int | None, output: str) -> str | None:
    """The launcher's complaint when ``output`` (all a command printed) is one line of a
    launcher's own error and the exit code is a launcher's; None when the command itself ran.

    Code under test can print such a line and exit 1 itself, so this decides nothing alone: it
    only makes the caller check the launchers with no record's code (``sandbox.attempt`` of
    ``true`` in the same sandbox), and the refusal is a fault of the machine only when that
    check fails too (its own complaint is the evidence)."""
    if exit_code != REFUSED_EXIT:
        return None
    lines = output.strip().splitlines()
    if len(lines) != 1:
        return None
    name, separator, _ = lines[0].partition(": ")
    return lines[0] if separator and Path(name).name in LAUNCHERS else None


def refused_run(exit_code: int | None, log_path: Path, start: int = 0) -> str | None:
    """:func:`refusal` of the output a command wrote to ``log_path`` from byte ``start`` on."""
    if exit_code != REFUSED_EXIT:
        return None
    try:
        with log_path.open("rb") as log:
            log.seek(start)
            output = log.read(_READ_LIMIT + 1)
    except FileNotFoundError:
        return None
    if len(output) > _READ_LIMIT:
        return None
    return refusal(exit_code, output.decode("utf-8", errors="replace"))
