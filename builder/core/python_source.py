"""Python source from an untrusted repository, read as a syntax tree and never run."""

from __future__ import annotations

import ast

UNREADABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
"""What ``ast.parse`` raises on source it cannot read: bad syntax, a null byte, and nesting too
deep for the parser (``not not … x`` a few thousand times deep is a RecursionError or a
MemoryError, from a file of a few kilobytes)."""


def parse(source: str | bytes, mode: str = "exec") -> ast.AST | None:
    """The syntax tree of ``source``, or None when it cannot be read (:data:`UNREADABLE`)."""
    try:
        return ast.parse(source, mode=mode)
    except UNREADABLE:
        return None
