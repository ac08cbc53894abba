"""New file texts as one git-style unified diff (what a checkout's ``git apply`` takes)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping

from builder.evaluate.lines import diff_lines

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(new_texts: Mapping[str, str | None], read: Callable[[str], str | None]) -> str:
    """A diff turning every file's current text (``read``; None: absent) into its new text
    (None: deleted); files that do not change are left out. Paths are sorted, so equal inputs
    give equal diffs."""
    parts: list[str] = []
    for path in sorted(new_texts):
        old, new = read(path), new_texts[path]
        if old == new:
            continue
        header = [f"diff --git a/{path} b/{path}\n"]
        if old is None:
            header.append("new file mode 100644\n")
        if new is None:
            header.append("deleted file mode 100644\n")
        hunks = difflib.unified_diff(
            _lines(old or ""),
            _lines(new or ""),
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile="/dev/null" if new is None else f"b/{path}",
            n=3,
        )
        body = []
        for line in hunks:
            body.append(line if line.endswith("\n") else line + "\n" + _NO_NEWLINE)
        parts.append("".join(header + body))
    return "".join(parts)


def _lines(text: str) -> list[str]:
    """Lines as git counts them: a form feed or U+2028 inside a line does not end it."""
    return diff_lines(text)
