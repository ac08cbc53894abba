"""Mutants of the golden patch's lines: a small fixed operator set, chosen deterministically.

Each mutant changes one expression or statement that starts on an executable line the golden
patch added or modified (as the line stands after the fix; the evaluation chooses the lines,
see :func:`statement_lines`), and leaves every other byte of the file alone. The operators:

- ``comparison``: ``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``is``/``is not``, ``in``/``not in``
  swapped;
- ``arithmetic``: ``+``/``-``, ``*``/``/``, ``//``/``*``, ``%``/``*`` swapped;
- ``boolean``: ``and``/``or`` swapped, ``not x`` → ``x``;
- ``constant``: an integer ``n`` → ``n + 1``, ``True``/``False`` swapped, a non-empty string
  → ``""`` (docstrings and f-strings are left alone);
- ``statement``: a simple statement (assignment, call, raise, augmented assignment) → ``pass``;
- ``return``: ``return x`` → ``return None``.

A mutant whose text equals the original (e.g. ``return None`` already) is never produced. The
selection keeps at most ``cap`` mutants per instance, spread evenly over the sorted candidates,
so the same patch always gives the same mutants.

A mutant whose module compiles to the same bytecode as the original (:func:`same_bytecode`:
e.g. ``...`` → ``pass``, a change inside ``if False:``, whitespace the mutation moved) is
marked ``same_bytecode``: no test can kill it, and the evaluation names it equivalent when the
tests indeed do not.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import types
from collections.abc import Iterable, Iterator

from builder.evaluate.lines import python_lines

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
OPERATORS = ("comparison", "arithmetic", "boolean", "constant", "statement", "return")

_COMPARE_SWAPS: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ARITHMETIC_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.Mult,
}
_DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise)


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutant: ``text`` is the whole mutated file."""

    path: str
    line: int
    operator: str
    description: str  # e.g. "line 12: a < b → a >= b"
    text: str
    same_bytecode: bool = False
    """The mutated module compiles to the original's bytecode: an equivalent mutant."""

    @property
    def key(self) -> str:
        """A stable name (path, line, operator, what changed)."""
        return f"{self.path}:{self.line}:{self.operator}:{self.description}"


def mutants(path: str, text: str, lines: Iterable[int]) -> list[Mutant]:
    """Every mutant of ``text`` (a file after the fix) on the given 1-based ``lines``, sorted
    by line, column and operator; none when the file is not valid Python."""
    wanted = set(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    source_lines = python_lines(text)
    skipped = _not_mutated(tree)
    found: list[tuple[int, int, str, Mutant]] = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) not in wanted or id(node) in skipped:
            continue
        for operator, replacement in _replacements(node):
            original = _segment(source_lines, node)
            if original is None:
                continue
            new_segment = replacement if isinstance(replacement, str) else ast.unparse(replacement)
            if new_segment == original or new_segment == ast.unparse(node):
                continue
            mutated = _replace(source_lines, node, new_segment)
            summary = f"line {node.lineno}: {_short(original)} → {_short(new_segment)}"
            mutant = Mutant(path, node.lineno, operator, summary, mutated)
            found.append((node.lineno, node.col_offset, operator, mutant))
    found.sort(key=lambda item: (item[0], item[1], OPERATORS.index(item[2]), item[3].description))
    unique: dict[str, Mutant] = {}
    for *_, mutant in found:
        unique.setdefault(mutant.text, mutant)
    original = _bytecode(text, path)
    return [
        dataclasses.replace(
            mutant,
            same_bytecode=original is not None and _bytecode(mutant.text, path) == original,
        )
        for mutant in unique.values()
    ]


def statement_lines(text: str, lines: Iterable[int]) -> set[int]:
    """Those of ``lines`` that hold code ``ast`` would execute: part of a simple statement or
    of a compound statement's header (``def``/``if``/… up to its body), not blank, not only a
    comment, not a docstring. All of ``lines`` when the file is not valid Python."""
    wanted = set(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return wanted
    source = [line.strip() for line in python_lines(text)]
    code: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or _docstring(node, tree):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            last = max(body[0].lineno - 1, node.lineno)
        else:
            first, last = node.lineno, node.end_lineno or node.lineno
        code.update(range(first, last + 1))
    return {
        n
        for n in wanted & code
        if n <= len(source) and source[n - 1] and not source[n - 1].startswith("#")
    }


def _docstring(node: ast.stmt, tree: ast.Module) -> bool:
    """Whether ``node`` is the docstring of the module, a class or a function of ``tree``."""
    if not (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return False
    owners = [tree, *(n for n in ast.walk(tree) if isinstance(n, (*_FUNCTIONS, ast.ClassDef)))]
    return any(owner.body and owner.body[0] is node for owner in owners)  # type: ignore[attr-defined]


def same_bytecode(original: str, mutated: str, path: str = "<mutant>") -> bool:
    """Whether two module texts compile to the same code: instructions, constants (by type and
    value), names, flags and signatures of every code object, line and column positions left
    out. False when either does not compile."""
    first = _bytecode(original, path)
    return first is not None and first == _bytecode(mutated, path)


def _bytecode(text: str, path: str) -> tuple | None:
    try:
        code = compile(text, path, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    return _normalised(code)


def _normalised(code: types.CodeType) -> tuple:
    consts = tuple(
        _normalised(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
        for c in code.co_consts
    )
    return (
        code.co_code,
        code.co_exceptiontable if hasattr(code, "co_exceptiontable") else b"",
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_name,
    )


def select(candidates: list[Mutant], cap: int) -> list[Mutant]:
    """At most ``cap`` of ``candidates``, spread evenly over their order (deterministic)."""
    if cap <= 0:
        return []
    if len(candidates) <= cap:
        return list(candidates)
    step = len(candidates) / cap
    return [candidates[int(i * step)] for i in range(cap)]


def _replacements(node: ast.AST) -> Iterator[tuple[str, ast.AST | str]]:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap = _COMPARE_SWAPS.get(type(node.ops[0]))
        if swap is not None:
            mutated = copy.deepcopy(node)
            mutated.ops = [swap()]
            yield "comparison", mutated
    if isinstance(node, ast.BinOp):
        swap = _ARITHMETIC_SWAPS.get(type(node.op))
        if swap is not None:
            mutated = copy.deepcopy(node)
            mutated.op = swap()
            yield "arithmetic", mutated
    if isinstance(node, ast.BoolOp):
        mutated = copy.deepcopy(node)
        mutated.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolean", mutated
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "boolean", copy.deepcopy(node.operand)
    if isinstance(node, ast.Constant):
        yield from _constant(node)
    if isinstance(node, _DELETABLE):
        yield "statement", "pass"
    if isinstance(node, ast.Return) and node.value is not None:
        yield "return", "return None"


def _constant(node: ast.Constant) -> Iterator[tuple[str, ast.AST | str]]:
    value = node.value
    if isinstance(value, bool):
        yield "constant", ast.Constant(not value)
    elif isinstance(value, int):
        yield "constant", ast.Constant(value + 1)
    elif isinstance(value, str) and value:
        yield "constant", ast.Constant("")


def _not_mutated(tree: ast.AST) -> set[int]:
    """Docstrings (and bare string statements) and everything inside f-strings, whose parts
    carry no reliable positions."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        bare_string = (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if bare_string or isinstance(node, ast.JoinedStr):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _segment(lines: list[str], node: ast.AST) -> str | None:
    """The node's source text; ast columns count UTF-8 bytes."""
    end_line = getattr(node, "end_lineno", None)
    end_col = getattr(node, "end_col_offset", None)
    if end_line is None or end_col is None:
        return None
    start = lines[node.lineno - 1].encode("utf-8")
    if node.lineno == end_line:
        return start[node.col_offset : end_col].decode("utf-8")
    middle = [line.encode("utf-8") for line in lines[node.lineno : end_line - 1]]
    end = lines[end_line - 1].encode("utf-8")
    return b"".join([start[node.col_offset :], *middle, end[:end_col]]).decode("utf-8")


def _replace(lines: list[str], node: ast.AST, new: str) -> str:
    start = lines[node.lineno - 1].encode("utf-8")
    end = lines[node.end_lineno - 1].encode("utf-8")  # type: ignore[attr-defined]
    end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
    merged = (start[: node.col_offset] + new.encode("utf-8") + end[end_col:]).decode("utf-8")
    return "".join(lines[: node.lineno - 1] + [merged] + lines[end_line:])


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
