"""What a test file's source tells a comparison: the modules it imports only when installed, and
its last test function."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Callable, Iterable

from builder.core.python_source import parse

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_MODULE_SETUP = frozenset({"setup_module", "setUpModule"})
"""Functions run once for the whole module: an ``importorskip`` there skips every test of it
(pytest's own ``test_nose.py``: ``mod.nose = pytest.importorskip("nose")``)."""
VERSION = 3
"""Bump when what these facts say changes (in the validation stage's fingerprint). 2: an
``importorskip`` in ``setup_module`` guards the module too. 3: a module-level ``find_spec``."""


def optional_imports(source: str) -> list[str]:
    """The top-level modules ``source`` imports at module level only when they are installed:
    inside ``try`` with an ``except ImportError`` (or ``ModuleNotFoundError``) handler, or
    through ``pytest.importorskip("name")`` (also in ``setup_module``, which runs for the whole
    module), or asked of ``importlib.util.find_spec("name")`` at module level (astroid's
    ``HAS_PYQT6 = find_spec("PyQt6")``, which its skip marks read); standard library modules
    (a fallback for an older Python) left out. Empty for a file that does not parse."""
    tree = parse(source)
    if not isinstance(tree, ast.Module):
        return []
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            found |= {name for statement in node.body for name in _imported(statement)}
        module_wide = not isinstance(node, ast.FunctionDef | ast.ClassDef) or (
            isinstance(node, ast.FunctionDef) and node.name in _MODULE_SETUP
        )
        # a find_spec counts in a module-level statement only, not in setup_module
        probe = _is_importorskip if isinstance(node, ast.FunctionDef) else _guards
        for call in ast.walk(node) if module_wide else ():
            if isinstance(call, ast.Call) and probe(call.func) and call.args:
                first = call.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value.split(".")[0])
    return sorted(found - sys.stdlib_module_names)


def recorded(
    read: Callable[[str], str | None], files: Iterable[str], runner: str
) -> dict[str, str]:
    """The run metadata of the test ``files`` (``read``: a file's text, None when absent):
    ``optional_imports`` (file → :func:`optional_imports`, files with some) and, for sympy's
    runner, ``last_tests`` (file → :func:`last_test`)."""
    guarded: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    for path in sorted(set(files)):
        source = read(path)
        if source is None:
            continue
        if modules := optional_imports(source):
            guarded[path] = modules
        if runner == "sympy" and (name := last_test(source)):
            last[path] = name
    metadata = {}
    if guarded:
        metadata["optional_imports"] = json.dumps(guarded, sort_keys=True)
    if last:
        metadata["last_tests"] = json.dumps(last, sort_keys=True)
    return metadata


def last_test(source: str) -> str | None:
    """The name of the last module-level ``test*`` function of ``source`` (sympy's runner runs
    a file's tests in the order of their lines); None when it has none or does not parse."""
    tree = parse(source)
    if not isinstance(tree, ast.Module):
        return None
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]
    return names[-1] if names else None


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(name, ast.Name) and name.id in _IMPORT_ERRORS for name in names)


def _imported(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Import):
        return [alias.name.split(".")[0] for alias in statement.names]
    if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
        return [statement.module.split(".")[0]]
    return []


def _guards(func: ast.expr) -> bool:
    """An ``importorskip`` or a ``find_spec`` (``importlib.util.find_spec``, or imported bare)."""
    named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return named == "find_spec" or _is_importorskip(func)


def _is_importorskip(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "importorskip") or (
        isinstance(func, ast.Name) and func.id == "importorskip"
    )
