"""Tests the harness's log parser cannot read from a run's log, found from the test files.

sympy's runner prints each test file's last test on the line of the file's verdict
(``test_x ok        [OK]``), which swebench's ``parse_log_sympy`` does not read (it takes a
line that ends with its status): that test is reported nowhere, and the harness counts it
failing. The runner orders a file's tests by the line their source starts on (a decorator's
line for a decorated one), so the last is the module-level ``test_*`` function that starts
last in the file as the golden test patch leaves it.
"""

from __future__ import annotations

import ast
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from builder.core.repos import worktree
from validation.runs.patches import apply_patch


def last_test(source: str) -> str | None:
    """The name of the module-level ``test_*`` function that starts last in ``source`` (None
    when it has none or does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    starts = {
        node.name: min([node.lineno, *(d.lineno for d in node.decorator_list)])
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }
    return max(starts, key=lambda name: (starts[name], name)) if starts else None


def sympy_unread(
    mirror: Path, base_commit: str, test_patch: str, files: Sequence[str], ids: Iterable[str]
) -> tuple[str, ...]:
    """Of ``ids`` (``path::name``), those that are the last test of their file in the
    checkout of ``base_commit`` after ``test_patch``, sorted."""
    wanted = set(ids)
    found = set()
    with tempfile.TemporaryDirectory(prefix="swt-unread-") as scratch:
        with worktree(mirror, base_commit, Path(scratch) / "tree") as tree:
            apply_patch(tree, test_patch, "golden test patch")
            for path in files:
                file = tree / path
                name = last_test(file.read_text("utf-8", "replace")) if file.is_file() else None
                if name is not None and f"{path}::{name}" in wanted:
                    found.add(f"{path}::{name}")
    return tuple(sorted(found))
