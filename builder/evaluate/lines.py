"""A text's lines, with their own endings, split the way the reader of the text counts them.

Python's tokenizer (so ``ast``'s line numbers) ends a line at ``\\n``, ``\\r\\n`` or ``\\r``
only; ``str.splitlines`` also splits at form feeds, ``\\x1c``-``\\x1e``, ``\\x85`` and
U+2028/U+2029, which shifts every later line off the numbers ``ast`` gives. git and unified
diffs end a line at ``\\n`` only (a ``\\r`` before it is part of the line's ending here)."""

from __future__ import annotations

import io
import re

_DIFF_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def python_lines(text: str) -> list[str]:
    """``text``'s lines as ``ast`` numbers them (line ``n`` is item ``n - 1``), each with its
    ending; joined they give ``text`` back."""
    return io.StringIO(text, newline="").readlines()


def diff_lines(text: str) -> list[str]:
    """``text``'s lines as git counts them (ended by ``\\n``), each with its ending; joined
    they give ``text`` back."""
    return _DIFF_LINE.findall(text)


def ending(line: str) -> str:
    """The line's ending: ``\\r\\n``, ``\\n``, ``\\r`` or "" (the last line, unended)."""
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def content(line: str) -> str:
    """The line without its ending."""
    return line[: len(line) - len(ending(line))]


def dominant_ending(lines: list[str], default: str = "\n") -> str:
    """The ending most of ``lines`` have (``default`` when none has one; a tie goes to the
    first line's)."""
    counts: dict[str, int] = {}
    for line in lines:
        end = ending(line)
        if end:
            counts[end] = counts.get(end, 0) + 1
    return max(counts, key=lambda end: counts[end]) if counts else default
