"""Which Pythons run the golden tests that carry a skip on the Python version.

A golden test marked ``@pytest.mark.skipif(sys.version_info < (3, 8), ...)`` is skipped on 3.7
whatever the fix: on a Python chosen among the project's (the median of its CI's) below 3.8 it
is no ``FAIL_TO_PASS`` test. Read from the test files as the test patch leaves them: every test
function whose lines (decorators included) the patch adds to, with the skips on it, on the
classes around it and in their and the module's ``pytestmark``. A skip is understood when its
condition is made of comparisons of ``sys.version_info`` (or a slice of it) with a tuple of
integers, joined by ``and``, ``or`` and ``not``; as ``pytest.mark.skipif``, ``unittest.skipIf``
or ``unittest.skipUnless``, the condition an expression or pytest's string form. Any other
condition is left out: the test is taken to run.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import unidiff

from builder.core.python_source import parse, skip_mark

Condition = tuple[Any, ...]
"""``("cmp", op, version, length)``: ``sys.version_info[:length]`` (5: all of it) compared with
``version`` by ``op``; ``("and", parts)``, ``("or", parts)`` or ``("not", part)``."""

_OPS: dict[type, str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}  # fmt: skip
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_COMPARE: dict[str, Callable[[object, object], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class VersionSkip:
    """A golden test the test patch touches, and the conditions on the Python version under
    which it is skipped (any one true skips it)."""

    test: str
    skipped_when: tuple[Condition, ...]


def golden_skips(test_patch: str, base_text: Callable[[str], str | None]) -> list[VersionSkip]:
    """The tests the patch touches that carry an understood skip on the Python version, given
    ``base_text`` (a path's text at the base commit, None when it has none). A file whose patch
    does not apply to that text, or that is not Python 3 syntax, gives none."""
    try:
        patch = unidiff.PatchSet(test_patch)
    except unidiff.UnidiffParseError:
        return []
    found: list[VersionSkip] = []
    for patched in patch:
        path = patched.path
        if patched.is_removed_file or not path.endswith(".py"):
            continue
        before = "" if patched.is_added_file else base_text(path)
        applied = None if before is None else _apply(before, patched)
        if applied is None:
            continue
        after, added = applied
        module = parse(after)
        if not isinstance(module, ast.Module):
            continue
        try:
            found.extend(_skips(module, added, path))
        except RecursionError:  # classes or conditions nested past the stack: not understood
            continue
    return found


def runnable(pythons: Iterable[str], skips: Sequence[VersionSkip]) -> list[str]:
    """The ``pythons`` (``X.Y``) that run the most of the tests of ``skips``; all of them when
    there are none, or when every one runs as many."""
    pythons = list(pythons)
    if not skips:
        return pythons
    counts = {python: sum(1 for skip in skips if not _skipped(skip, python)) for python in pythons}
    best = max(counts.values(), default=0)
    return [python for python in pythons if counts[python] == best]


def _skipped(skip: VersionSkip, python: str) -> bool:
    major, minor = (int(part) for part in python.split(".")[:2])
    try:
        return any(_holds(condition, (major, minor)) for condition in skip.skipped_when)
    except RecursionError:  # a condition nested past the stack: taken as not skipping
        return False


def _holds(condition: Condition, minor: tuple[int, int]) -> bool:
    kind = condition[0]
    if kind == "cmp":
        _, op, version, length = condition
        # a release X.Y.0 as sys.version_info gives it (major, minor, micro, level, serial); a
        # bound on a micro version other than 0, or past the micro, is never kept (_condition)
        return _COMPARE[op]((*minor, 0, "final", 0)[:length], version)
    if kind == "not":
        return not _holds(condition[1], minor)
    parts = condition[1]
    return (
        all(_holds(p, minor) for p in parts)
        if kind == "and"
        else any(_holds(p, minor) for p in parts)
    )


_SEARCH_BUDGET = 2_000_000
"""Lines compared at most while placing one file's hunks: a patch whose hunks name the wrong
lines over and over in a long file (an untrusted record's) is not applied, rather than
searched for minutes."""


def _apply(text: str, patched: unidiff.PatchedFile) -> tuple[str, list[int]] | None:
    """``text`` with the hunks of ``patched`` applied and the numbers of the lines they added
    there (sorted), or None when a hunk matches nowhere (or not within
    :data:`_SEARCH_BUDGET`). As ``git apply`` does, a hunk whose lines are not at the line it
    names is looked for at the nearest place after the previous hunk where all its lines
    match; its added lines are numbered where it lands."""
    source = text.splitlines(keepends=True)
    stripped = [line.rstrip("\r\n") for line in source]
    budget = [_SEARCH_BUDGET]
    added: list[int] = []
    out: list[str] = []
    at = 0
    for hunk in patched:
        old = [line.value.rstrip("\r\n") for line in hunk if line.is_context or line.is_removed]
        # a hunk with no old lines (``-N,0``) goes after line N; any other starts at line N
        expected = hunk.source_start if not old else max(hunk.source_start - 1, 0)
        start = _find(stripped, old, expected, at, budget)
        if start is None:
            return None
        out.extend(source[at:start])
        for line in hunk:
            if line.is_added:
                added.append(len(out) + 1)
            if line.is_context or line.is_added:
                out.append(line.value)
        at = start + len(old)
    out.extend(source[at:])
    return "".join(out), added


def _find(
    lines: list[str], old: list[str], expected: int, first: int, budget: list[int]
) -> int | None:
    """The place nearest ``expected``, not before ``first``, where ``old`` are ``lines``; None
    when there is none or ``budget`` (places and lines compared) runs out."""
    for start in _nearest(expected, first, len(lines) - len(old)):
        matched = 0
        while matched < len(old) and lines[start + matched] == old[matched]:
            matched += 1
        if matched == len(old):
            return start
        budget[0] -= matched + 1
        if budget[0] <= 0:
            return None
    return None


def _nearest(expected: int, first: int, last: int) -> Iterator[int]:
    """``first`` … ``last``, nearest to ``expected`` first."""
    if first > last:
        return
    expected = min(max(expected, first), last)
    yield expected
    for distance in range(1, last - first + 1):
        below, above = expected - distance, expected + distance
        if below < first and above > last:
            return
        if below >= first:
            yield below
        if above <= last:
            yield above


def _skips(module: ast.Module, added: list[int], path: str) -> list[VersionSkip]:
    """The tests of ``module`` with a line of ``added`` (sorted), and their skips."""
    found: list[VersionSkip] = []

    def visit(body: list[ast.stmt], outer: tuple[Condition, ...], prefix: str) -> None:
        conditions = outer + _pytestmark(body)
        for node in body:
            if isinstance(node, ast.ClassDef):
                own = tuple(c for d in node.decorator_list for c in _decorator_conditions(d))
                visit(node.body, conditions + own, f"{prefix}{node.name}::")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                at = bisect.bisect_left(added, first)
                if at == len(added) or added[at] > last:
                    continue
                own = tuple(c for d in node.decorator_list for c in _decorator_conditions(d))
                if conditions + own:
                    found.append(VersionSkip(f"{prefix}{node.name}", conditions + own))

    visit(module.body, (), f"{path}::")
    return found


def _pytestmark(body: list[ast.stmt]) -> tuple[Condition, ...]:
    conditions: list[Condition] = []
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            marks = (
                node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            )
            for mark in marks:
                conditions.extend(_decorator_conditions(mark))
    return tuple(conditions)


def _decorator_conditions(node: ast.expr) -> list[Condition]:
    """The skip condition of a ``skipif``/``skipIf``/``skipUnless`` call, when understood."""
    mark = skip_mark(node)
    condition = None if mark is None else _condition(mark[1])
    if mark is None or condition is None:
        return []
    return [("not", condition) if mark[0] == "skipUnless" else condition]


def _condition(node: ast.expr) -> Condition | None:
    if isinstance(node, ast.BoolOp):
        parts = tuple(_condition(value) for value in node.values)
        if any(part is None for part in parts):
            return None
        return ("and" if isinstance(node.op, ast.And) else "or", parts)  # type: ignore[return-value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _condition(node.operand)
        return None if inner is None else ("not", inner)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = _OPS.get(type(node.ops[0]))
        left, right = node.left, node.comparators[0]
        if op is None:
            return None
        if _version_info(right) is not None and _version_info(left) is None:
            left, right, op = right, left, _FLIPPED[op]
        length, version = _version_info(left), _int_tuple(right)
        if length is None or version is None or len(version) > 3 or any(version[2:3]):
            return None
        return ("cmp", op, version, length)
    return None


def _version_info(node: ast.expr) -> int | None:
    """How many fields of ``sys.version_info`` ``node`` is (5: all; ``[:2]``: 2), or None when
    it is something else."""
    length = 5
    if isinstance(node, ast.Subscript):
        bounds = node.slice
        if not isinstance(bounds, ast.Slice) or bounds.step is not None:
            return None
        lower, upper = bounds.lower, bounds.upper
        if lower is not None and not (isinstance(lower, ast.Constant) and lower.value == 0):
            return None
        if upper is not None:
            if not (isinstance(upper, ast.Constant) and type(upper.value) is int):
                return None
            length = min(max(upper.value, 0), 5)
        node = node.value
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "version_info"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ):
        return length
    return None


def _int_tuple(node: ast.expr) -> tuple[int, ...] | None:
    if not isinstance(node, ast.Tuple) or not node.elts:
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    if len(values) != len(node.elts) or not all(type(v) is int for v in values):
        return None
    return tuple(values)
