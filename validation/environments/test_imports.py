"""What the touched test files need installed that the environment may lack.

A project's declared test requirements miss what its tests import from optional packages: an
environment built from them runs the tests with an ``ImportError`` at collection, or skips them
(``pytest.importorskip``, a project's own ``requires_dask`` marker made by its
``_importorskip("dask")``), and the record's lists differ from what the project's own CI saw.

Read statically from the test files as the test patch leaves them (never imported here):

- the module-level imports of each touched test file (``import a.b``, ``from a.b import c``;
  not those inside ``try`` or functions, which the file itself treats as optional or late);
- every ``importorskip("name")``-like call in it (a call of a name ending in ``importorskip``
  with a literal first argument);
- a flag it sets by trying an import, when a skip mark it applies to its own tests reads the
  flag (``try: import numpy; HAVE_NP = True`` … ``@pytest.mark.skipif(not HAVE_NP, ...)`` on
  a test class or function, or in ``pytestmark``; pydicom's idioms, also ``except
  ImportError: numpy = None`` then ``have_numpy = numpy is not None``): the same as an
  ``importorskip`` of that module;
- the project's skip markers it imports: ``from pkg.tests import requires_dask`` where
  ``pkg/tests`` (a module of the checkout) binds ``requires_dask`` from such a call, or as a
  skip mark whose condition reads a flag set by trying an import (``requires_tables =
  pytest.mark.skipif(not has_tables, ...)``, pvlib's ``conftest.py``); a bare module name is
  also looked for beside the test file and in the folders above it, as pytest puts them on
  ``sys.path`` (``from conftest import requires_tables``).

Standard-library modules, relative imports and any name the checkout has as a module or
package anywhere (a test helper on ``sys.path``) are left out. What remains is probed with the
environment's interpreter (:data:`PROBE`), and what it cannot find becomes distributions
(:func:`distribution`) added to the instance's environment like the base commit's own
requirements are — those :data:`DISTRIBUTIONS` maps to or the project declared up to the base
commit (``declared``) only.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import tomllib

from builder.core.python_source import parse, skip_mark

VERSION = 9
"""In the validation fingerprint: bump when what is added changes (results are recomputed)."""

_STDLIB = frozenset(sys.stdlib_module_names) | {
    # gone from the standard library by 3.13, there in the Pythons older projects test on
    "asynchat", "asyncore", "distutils", "imp", "smtpd", "cgi", "cgitb", "crypt", "imghdr",
    "mailcap", "nntplib", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib",
    "msilib", "nis", "ossaudiodev", "audioop", "chunk", "aifc", "lib2to3", "__future__",
}  # fmt: skip

IMPORT_NAMES = Path(__file__).with_name("import_names.toml")
"""The curated map of import names to the distributions that provide them (data)."""
DISTRIBUTIONS: dict[str, str] = tomllib.loads(IMPORT_NAMES.read_text(encoding="utf-8"))[
    "distributions"
]
"""Import names whose distribution is named otherwise; any other name is its own
distribution's, installed only when the project declared it (``declared``)."""


def distribution(module: str) -> str:
    """The distribution that provides top-level module ``module``."""
    top = module.split(".")[0]
    return DISTRIBUTIONS.get(top, top)


def implicated(packages: Iterable[str], build_log: str) -> list[str]:
    """Which of ``packages`` a failed build's log blames: the installer names a requirement it
    could not satisfy as ``you require NAME`` (uv's resolution report), one it could not build
    as ``Failed to build `NAME``, and the requirement that brought a dependency which failed
    in as ``was included because `NAME``` (the first name of the chain uv prints: what was
    asked for, e.g. Iris for a Cartopy that does not build)."""
    name = r"([A-Za-z0-9][A-Za-z0-9._-]*)"
    blamed = {
        _canonical(found)
        for pattern in (
            rf"you require {name}",
            rf"Failed to build `{name}",
            rf"was included because `{name}`",
        )
        for found in re.findall(pattern, build_log)
    }
    return [package for package in packages if _canonical(package) in blamed]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wanted_modules(tree: Path, test_files: Iterable[str]) -> dict[str, str]:
    """Module (dotted name) → the file and line that needs it, for the test files under
    ``tree`` (a checkout with the test patch applied); local and standard modules left out."""
    local = _local_names(tree)
    wanted: dict[str, str] = {}

    def want(module: str, where: str) -> None:
        top = module.split(".")[0]
        if top and top not in _STDLIB and top not in local and module.isascii():
            wanted.setdefault(module, where)

    for name in sorted(set(test_files)):
        path = tree / name
        module = _parse(path)
        if module is None:
            continue
        for node in module.body:  # module level, unconditional
            if isinstance(node, ast.Import):
                for alias in node.names:
                    want(alias.name, f"{name}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                want(node.module, f"{name}:{node.lineno}")
        for node, skipped in _own_flag_marks(module):
            want(skipped, f"{name}:{node.lineno}")
        for node in ast.walk(module):
            skipped = _importorskip(node)
            if skipped:
                want(skipped, f"{name}:{node.lineno}")  # type: ignore[attr-defined]
        for node in module.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            helper = _local_module(tree, name, node)
            if helper is None:
                continue
            markers = _markers(helper)
            for alias in node.names:
                if alias.name in markers:
                    want(markers[alias.name], f"{name}:{node.lineno} ({alias.name})")
    return dict(sorted(wanted.items()))


def _parse(path: Path) -> ast.Module | None:
    try:
        if path.is_symlink() or not path.is_file():
            return None
        source = path.read_bytes()
    except OSError:
        return None
    tree = parse(source)
    return tree if isinstance(tree, ast.Module) else None


def _importorskip(node: ast.AST) -> str | None:
    """The module an ``importorskip``-like call names, or None."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    if called.endswith("importorskip") and isinstance(first, ast.Constant):
        value = first.value
        return value if isinstance(value, str) and value.strip() else None
    return None


def _markers(path: Path) -> dict[str, str]:
    """Names a module binds at module level from an ``importorskip``-like call → its module
    (``has_dask, requires_dask = _importorskip("dask")``), and skip marks whose condition
    reads a flag the module sets by trying an import (``requires_tables =
    pytest.mark.skipif(not has_tables, ...)`` after ``try: import tables; has_tables = True
    except ImportError: has_tables = False``, or a ``def has_numba():`` that returns whether
    ``import numba`` worked) → that import's module."""
    module = _parse(path)
    if module is None:
        return {}
    flags = _import_flags(module)
    found: dict[str, str] = {}
    for node in module.body:
        if not isinstance(node, ast.Assign):
            continue
        skipped = _importorskip(node.value) or _flag_mark(node.value, flags)
        if skipped is None:
            continue
        for target in node.targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            for name in names:
                if isinstance(name, ast.Name):
                    found[name.id] = skipped
    return found


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def _import_flags(module: ast.Module) -> dict[str, str]:
    """Flags a module sets at module level from trying one import → that import's module:
    ``try: import m; has_m = True`` with an ``except ImportError`` that sets it False; the
    name the tried import binds when the handler sets it to None (``except ImportError: numpy
    = None``); a name then bound to a test of such a flag alone (``have_numpy = numpy is not
    None``); or a function whose ``try`` imports ``m`` and returns True (its name is the
    flag)."""
    flags: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Try):
            imported = _tried_import(node)
            if imported is None:
                continue
            for statement in node.body:
                if isinstance(statement, ast.Assign) and _is_constant(statement.value, True):
                    for target in statement.targets:
                        if isinstance(target, ast.Name):
                            flags[target.id] = imported
            bound = _bound_by_import(node)
            for handler in node.handlers:
                for statement in handler.body:
                    if isinstance(statement, ast.Assign) and _is_constant(statement.value, None):
                        for target in statement.targets:
                            if isinstance(target, ast.Name) and target.id in bound:
                                flags[target.id] = imported
        elif isinstance(node, ast.Assign) and (derived := _derived_flag(node.value, flags)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    flags[target.id] = derived
        elif isinstance(node, ast.FunctionDef):
            for statement in node.body:
                if isinstance(statement, ast.Try):
                    imported = _tried_import(statement)
                    returns = [s for s in ast.walk(statement) if isinstance(s, ast.Return)]
                    if imported and any(_is_constant(r.value, True) for r in returns):
                        flags[node.name] = imported
    return flags


def _bound_by_import(node: ast.Try) -> set[str]:
    """The names the first import statement of a ``try`` binds (``import numpy as np``: np)."""
    for statement in node.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            return {alias.asname or alias.name.split(".")[0] for alias in statement.names}
    return set()


def _derived_flag(value: ast.expr, flags: dict[str, str]) -> str | None:
    """The module of the one flag ``value`` tests, when it reads no other name (``numpy is
    not None``, ``not has_numpy``, ``bool(numpy)``); None otherwise."""
    if not isinstance(value, ast.Compare | ast.UnaryOp | ast.Name | ast.Call):
        return None
    names = [part.id for part in ast.walk(value) if isinstance(part, ast.Name)]
    if isinstance(value, ast.Call):
        if not (isinstance(value.func, ast.Name) and value.func.id == "bool"):
            return None
        names.remove("bool")
    read = set(names)
    if len(read) == 1 and (name := read.pop()) in flags:
        return flags[name]
    return None


def _tried_import(node: ast.Try) -> str | None:
    """The module a ``try`` imports first, when one of its handlers catches an import error
    (or anything)."""
    catches = any(
        handler.type is None
        or any(
            isinstance(kind, ast.Name) and kind.id in (*_IMPORT_ERRORS, "Exception")
            for kind in (
                handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            )
        )
        for handler in node.handlers
    )
    if not catches:
        return None
    for statement in node.body:
        if isinstance(statement, ast.Import):
            return statement.names[0].name
        if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            return statement.module
    return None


def _is_constant(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _own_flag_marks(module: ast.Module) -> list[tuple[ast.expr, str]]:
    """The skip marks a test module applies to its own tests whose condition reads a flag it
    sets by trying an import, each with that import's module: a decorator of a test class or
    function (the mark itself, or a name the module binds to it) and ``pytestmark``. A mark
    only defined (a ``conftest.py``'s ``requires_tables = ...``) skips nothing there."""
    flags = _import_flags(module)
    if not flags:
        return []
    named: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and (wanted := _flag_mark(node.value, flags)):
            named.update({t.id: wanted for t in node.targets if isinstance(t, ast.Name)})

    def module_of(mark: ast.expr) -> str | None:  # the mark itself, or a name bound to one
        return named.get(mark.id) if isinstance(mark, ast.Name) else _flag_mark(mark, flags)

    applied: list[ast.expr] = []
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            applied += node.decorator_list
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            applied += [part for part in ast.walk(node.value) if isinstance(part, ast.expr)]
    return [(mark, found) for mark in applied if (found := module_of(mark))]


def _flag_mark(node: ast.expr, flags: dict[str, str]) -> str | None:
    """The module of the flag a skip mark's condition reads (``skipif(not has_tables)``,
    ``skipUnless(has_numba())``, pytest's string form ``skipif("not has_tables")``)."""
    mark = skip_mark(node) if flags else None
    if mark is None:
        return None
    for part in ast.walk(mark[1]):
        if isinstance(part, ast.Name) and part.id in flags:
            return flags[part.id]
    return None


def _local_module(tree: Path, test_file: str, node: ast.ImportFrom) -> Path | None:
    """The checkout's file of the module ``node`` imports from, if the checkout has it."""
    if node.level:
        base = Path(test_file).parent
        for _ in range(node.level - 1):
            base = base.parent
        parts = [*base.parts, *((node.module or "").split(".") if node.module else [])]
        roots = [tree]
    else:
        parts = (node.module or "").split(".")
        # pytest puts a test file's folder (or the first one up without __init__.py) on
        # sys.path: ``from conftest import requires_scipy`` beside it
        folder = (tree / test_file).parent
        ancestors = [folder, *folder.parents[: len(Path(test_file).parts) - 1]]
        roots = [tree, tree / "src", tree / "lib", *(a for a in ancestors if a != tree)]
    for root in roots:
        stem = root.joinpath(*parts)
        for candidate in (stem / "__init__.py", stem.with_suffix(".py")):
            if candidate.is_file() and not candidate.is_symlink() and _inside(candidate, tree):
                return candidate
    return None


def _inside(path: Path, tree: Path) -> bool:
    try:
        path.resolve().relative_to(tree.resolve())
    except ValueError:
        return False
    return True


def _local_names(tree: Path) -> set[str]:
    """Every module and package name the checkout has, at any depth (a test helper imported
    by its bare name is on ``sys.path`` in some run; it is never a distribution)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=tree, capture_output=True, check=False
    ).stdout.decode("utf-8", "surrogateescape")
    names: set[str] = set()
    for entry in filter(None, listed.split("\0")):
        parts = entry.split("/")
        names.update(part for part in parts[:-1] if part.isidentifier())
        stem, _, suffix = parts[-1].partition(".")
        if suffix in ("py", "pyx", "pyi", "so", "pyd") or suffix.startswith("cpython-"):
            names.add(stem)
    return names


PROBE = """\
import importlib.util, json, sys
missing = []
for name in sys.argv[2:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except ImportError:
        found = False
    except Exception:
        found = True
    if not found:
        missing.append(name)
with open(sys.argv[1], "w") as handle:
    json.dump(missing, handle)
"""
"""Run by the environment's interpreter (any Python 3) in the checkout: writes to argv[1] the
modules of argv[2:] it cannot find (a parent package that fails otherwise counts as found)."""
