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


SKIP_MARKS = ("skipif", "skipIf", "skipUnless")
"""pytest's ``skipif`` mark and unittest's ``skipIf`` / ``skipUnless`` decorators."""


def skip_mark(node: ast.expr) -> tuple[str, ast.expr] | None:
    """``(name, condition)`` of a call of a skip mark (:data:`SKIP_MARKS`, by its last name:
    ``pytest.mark.skipif(...)``, ``skipIf(...)``), the condition of pytest's string form
    (``skipif("not has_x")``) parsed; None for any other node or an unreadable string."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in SKIP_MARKS:
        return None
    condition = node.args[0]
    if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
        expression = parse(condition.value.strip(), mode="eval")
        if not isinstance(expression, ast.Expression):
            return None
        condition = expression.body
    return name, condition
