"""Which tests a patch of test files wrote: those it defines or changes.

A test counts as the patch's when its file is new, or when an added or changed line of the file
(as the patch leaves it) lies inside the test's function, its class, or their decorators. Tests
of the file the patch left as they were are context: they run (the whole file runs) but are not
the patch's. One rule for a prediction's tests (the evaluation scores and credits only those)
and for the golden test patch's (validation's golden ΔC credits only those), so that the golden
tests evaluated as a prediction score what validation recorded. Test ids are our runners'
(``path::Class::name[params]``).
"""

from __future__ import annotations

import ast
import difflib
import io
import re
from collections.abc import Callable, Iterable, Mapping

_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_PARAMS = re.compile(r"\[.*\]$")


def changed_definitions(old: str | None, new: str) -> set[str] | None:
    """Qualified names (``Class.method``, ``function``) of the definitions in ``new`` that
    the change from ``old`` touches; None when every test in the file counts (a new file, or
    a file that is no longer valid Python, whose tests then all fail to collect)."""
    if old is None:
        return None
    try:
        tree = ast.parse(new)
    except SyntaxError:
        return None
    touched = _touched_lines(old, new)
    spans = list(_spans(tree.body, ""))
    names = set()
    for line in touched:
        inside = [(start, name) for start, end, name in spans if start <= line <= end]
        names.update(name for _, name in inside)
    return names


def _touched_lines(old: str, new: str) -> set[int]:
    """1-based lines of ``new`` that are added or replaced, and for a pure deletion the lines
    on either side of where the deleted lines were."""
    matcher = difflib.SequenceMatcher(None, _numbered(old), _numbered(new), autojunk=False)
    touched: set[int] = set()
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            touched.update(range(start + 1, end + 1))
        elif tag == "delete":
            touched.update(line for line in (start, start + 1) if line >= 1)
    return touched


def _numbered(text: str) -> list[str]:
    """The lines of ``text`` as ``ast`` numbers them (ended by ``\\n``, ``\\r\\n`` or ``\\r``
    only, unlike ``str.splitlines``), without their endings."""
    return [line.rstrip("\r\n") for line in io.StringIO(text, newline="").readlines()]


def _spans(body: Iterable[ast.stmt], prefix: str):
    for node in body:
        if isinstance(node, _DEFINITION):
            name = f"{prefix}{node.name}"
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield start, node.end_lineno or node.lineno, name
            if isinstance(node, ast.ClassDef):
                yield from _spans(node.body, f"{name}.")


def patch_changes(
    old: Callable[[str], str | None], new_texts: Mapping[str, str | None]
) -> dict[str, set[str] | None]:
    """The definitions a patch changed, per file it leaves in place: ``new_texts`` are the
    files it changes as it leaves them (None: deleted), ``old`` reads a file before it (None:
    the file is new)."""
    return {
        path: changed_definitions(old(path), text)
        for path, text in new_texts.items()
        if text is not None
    }


def generated(test_ids: Iterable[str], changes: Mapping[str, set[str] | None]) -> list[str]:
    """The ids among ``test_ids`` that the patch wrote, in their order; ``changes`` maps each
    test file the patch changed to its changed definitions (None: all of the file)."""
    chosen = []
    for test_id in test_ids:
        path, _, rest = test_id.partition("::")
        if path not in changes:
            continue
        names = changes[path]
        if names is None:
            chosen.append(test_id)
            continue
        qualified = _PARAMS.sub("", rest).replace("::", ".")
        parts = qualified.split(".")
        enclosing = {".".join(parts[: i + 1]) for i in range(len(parts))}
        if enclosing & names:
            chosen.append(test_id)
    return chosen
