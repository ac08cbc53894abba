"""The build requirements of a project built the pre-PEP 518 way: its ``setup_requires``.

A project with a ``setup.py`` and no ``[build-system]`` in a ``pyproject.toml`` was built by the
pip of its era in the environment itself, with what was already installed there. What it needs
to build it names in ``setup_requires`` (numpy and Cython for a compiled one), which setuptools
fetches by itself when they are missing — with easy_install, from the index, newest first:
outside the resolver and its date (Cython 3 and a MarkupSafe that no longer builds for a
project of 2019). Such a project's environment installs its ``setup_requires`` first, dated
with the rest, and builds the project without isolation (see ``install_steps``).
"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import tomllib
from packaging.requirements import InvalidRequirement, Requirement

from validation.environments.requirement_files import logical_lines
from validation.environments.versioning import show

_OPERATOR = re.compile(r"\s*(==|>=|<=|~=|!=|>|<)\s*$")


def legacy_setup_requires(mirror: Path, commit: str) -> tuple[str, ...]:
    """The ``setup_requires`` of the project at ``commit`` when it builds without a
    ``[build-system]`` (a ``setup.py`` and no such table in ``pyproject.toml``), else none:
    setup.cfg's ``[options] setup_requires`` and the string literals setup.py gives its
    ``setup_requires`` (assigned, extended, appended or passed; ``'numpy>=' + MINIMUM`` is
    ``numpy``), each once, in the order found."""
    setup_py = show(mirror, commit, "setup.py")
    if setup_py is None or _has_build_system(show(mirror, commit, "pyproject.toml")):
        return ()
    found: dict[str, None] = {}
    for line in logical_lines(_setup_cfg_value(show(mirror, commit, "setup.cfg"))):
        parts = [line] if _valid(line) else re.split(r"[;,]", line)
        found.update((part.strip(), None) for part in parts)
    for text in _from_setup_py(setup_py):
        found[text.strip()] = None
    return tuple(text for text in found if _valid(text))


def _has_build_system(pyproject: str | None) -> bool:
    try:
        return "build-system" in tomllib.loads(pyproject or "")
    except tomllib.TOMLDecodeError:
        return True  # not ours to judge: the installer reads it as it is


def _setup_cfg_value(text: str | None) -> str:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return ""
    return parser.get("options", "setup_requires", fallback="")


def _from_setup_py(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: set[str] = set()
    values: list[ast.AST] = []
    assigned = {
        node.targets[0].id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "setup_requires":
            values.append(node.value)
            if isinstance(node.value, ast.Name):
                names.add(node.value.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets) and node.value:
                values.append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("extend", "append", "insert")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
        ):
            values += node.args
    texts: list[str] = []
    for value in values:
        texts += _strings(value, assigned)
    return texts


def _strings(node: ast.AST, assigned: dict[str, ast.AST], depth: int = 0) -> list[str]:
    """The requirement strings an expression spells out literally (a name in a list: what it
    was assigned)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        found = []
        for element in node.elts:
            if isinstance(element, ast.Name) and element.id in assigned and depth < 3:
                element = assigned[element.id]
            found += _strings(element, assigned, depth + 1)
        return found
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = node.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            if not isinstance(node.right, ast.Constant):  # 'numpy>=' + a computed minimum
                return [_OPERATOR.sub("", left.value)]
            return [left.value + str(node.right.value)]
        return _strings(node.left, assigned, depth) + _strings(node.right, assigned, depth)
    return []


def _valid(text: str) -> bool:
    try:
        Requirement(text)
    except InvalidRequirement:
        return False
    return bool(text)
