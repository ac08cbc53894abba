"""The fault-tolerant function-level diff format: parse its blocks, apply them to file texts.

A prediction in this format is a list of blocks::

    diff
    path/to/file.py
    rewrite            (or: insert)
    42                 (a rough line number, or BOF / EOF)
    <the whole function or class to rewrite, or the code to insert>
    end diff

``rewrite`` replaces the definition (function, method or class, with its decorators) whose name
is the block's: an exact name wins, the line number chooses among several and finds the
definition when no name matches. ``insert`` puts the code at a top-level statement boundary
nearest the line, after the module's header at ``BOF`` (shebang, encoding line, docstring,
``from __future__`` imports) or at ``EOF``; it may create a new file. A method goes into the
class instead: when the line lies in a class's body and the code is a definition (``def``,
``async def`` or ``class``, decorated or not) that is indented in the block or whose first
parameter is ``self`` or ``cls``, it is put at the member boundary of the innermost such class
nearest the line, indented as the class's members. Everything outside the replaced span stays
byte-identical; lines are counted as ``ast`` counts them (``\n``, ``\r\n``, ``\r``). Text
around the blocks (prose, code fences) is ignored.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from collections.abc import Callable
from typing import Literal

from builder.core.errors import SwtError
from builder.evaluate.lines import content, dominant_ending, ending, python_lines

Action = Literal["rewrite", "insert"]
Position = int | Literal["BOF", "EOF"]

_START = "diff"
_END = "end diff"
_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class FormatError(SwtError, ValueError):
    """A block is malformed or cannot be applied; the message names the block and what was
    expected."""


@dataclasses.dataclass(frozen=True)
class Block:
    """One ``diff`` … ``end diff`` block (``number`` counts from 1 in the prediction)."""

    number: int
    path: str
    action: Action
    position: Position
    code: str


def looks_like(text: str) -> bool:
    """Whether ``text`` holds at least one block of this format (a line ``diff`` followed by a
    path and an action line)."""
    lines = [line.strip() for line in _block_lines(text)]
    for index, line in enumerate(lines[:-2]):
        if line == _START and lines[index + 2] in ("rewrite", "insert"):
            return True
    return False


def parse(text: str) -> list[Block]:
    """Every block of ``text``; FormatError names the first malformed block."""
    lines = _block_lines(text)
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != _START:
            index += 1
            continue
        number = len(blocks) + 1
        header = [lines[i].strip() for i in range(index + 1, min(index + 4, len(lines)))]
        if len(header) < 3:
            raise FormatError(
                f"block {number}: expected a path, 'rewrite' or 'insert', and a line number "
                f"after 'diff' (line {index + 1}), found the end of the prediction"
            )
        path, action, position = header
        _check_path(number, path)
        if action not in ("rewrite", "insert"):
            raise FormatError(
                f"block {number}: expected 'rewrite' or 'insert' on line {index + 3}, "
                f"found {action!r}"
            )
        end = _end_of_block(lines, index + 4)
        if end is None:
            raise FormatError(f"block {number}: no 'end diff' after 'diff' on line {index + 1}")
        code = "\n".join(lines[index + 4 : end])
        if not code.strip():
            raise FormatError(f"block {number}: no code between line {index + 4} and 'end diff'")
        blocks.append(
            Block(number, path, action, _position(number, position, index + 4), code + "\n")
        )
        index = end + 1
    if not blocks:
        raise FormatError("no block found: a block starts with a line 'diff'")
    return blocks


def _block_lines(text: str) -> list[str]:
    """The prediction's lines (a form feed or U+2028 in the code stays in its line)."""
    return [content(line) for line in python_lines(text)]


def _end_of_block(lines: list[str], start: int) -> int | None:
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if stripped == _END:
            return index
        if stripped == _START and index + 2 < len(lines):
            if lines[index + 2].strip() in ("rewrite", "insert"):
                return None  # the next block starts: this one never ended
    return None


def _check_path(number: int, path: str) -> None:
    if not path or path.startswith("/") or "\\" in path or ".." in path.split("/"):
        raise FormatError(
            f"block {number}: expected a relative path inside the repository, found {path!r}"
        )


def _position(number: int, text: str, line: int) -> Position:
    upper = text.upper()
    if upper in ("BOF", "EOF"):
        return upper  # type: ignore[return-value]
    if re.fullmatch(r"\d+", text):
        return int(text)
    raise FormatError(
        f"block {number}: expected a line number, BOF or EOF on line {line}, found {text!r}"
    )


def apply(blocks: list[Block], read: Callable[[str], str | None]) -> dict[str, str]:
    """The new text of every file the blocks touch; ``read(path)`` gives a file's current text
    (None: it does not exist). Blocks of one file apply in order, each to the previous result."""
    texts: dict[str, str | None] = {}
    for block in blocks:
        if block.path not in texts:
            texts[block.path] = read(block.path)
        texts[block.path] = apply_block(block, texts[block.path])
    return {path: text for path, text in texts.items() if text is not None}


def apply_block(block: Block, text: str | None) -> str:
    """``text`` (None: a new file) with one block applied."""
    if block.action == "insert":
        return _insert(block, text or "")
    if text is None:
        raise FormatError(f"block {block.number}: rewrite in {block.path}, which does not exist")
    return _rewrite(block, text)


def _newline(text: str) -> str:
    return dominant_ending(python_lines(text))


def _lines(text: str) -> list[str]:
    """The file's lines as ``ast`` numbers them, each with its ending."""
    return python_lines(text)


def _code_lines(code: str, indent: str, newline: str) -> list[str]:
    body = textwrap.dedent(code).strip("\n")
    return [(indent + line if line.strip() else "") + newline for line in body.split("\n")]


def _rewrite(block: Block, text: str) -> str:
    names = _defined_names(block)
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise FormatError(
            f"block {block.number}: {block.path} is not valid Python ({error.msg}, line "
            f"{error.lineno}), so its definitions cannot be found"
        ) from error
    target = _target(block, tree, names)
    lines = _lines(text)
    first = min([target.lineno, *(d.lineno for d in target.decorator_list)])
    last = target.end_lineno or target.lineno
    indent = re.match(r"[ \t]*", lines[first - 1]).group(0)  # type: ignore[union-attr]
    replacement = _code_lines(block.code, indent, _newline(text))
    if last == len(lines) and not ending(lines[-1]):
        replacement[-1] = replacement[-1].rstrip("\r\n")
    return "".join(lines[: first - 1] + replacement + lines[last:])


def _defined_names(block: Block) -> list[str]:
    """The names the block's code defines at its top level (what it rewrites)."""
    try:
        tree = ast.parse(textwrap.dedent(block.code))
    except SyntaxError as error:
        raise FormatError(
            f"block {block.number}: the code to rewrite is not valid Python "
            f"({error.msg}, line {error.lineno} of the block)"
        ) from error
    names = [node.name for node in tree.body if isinstance(node, _DEFINITION)]
    if not names:
        raise FormatError(
            f"block {block.number}: rewrite needs a whole function or class, "
            "found no 'def' or 'class' at the top of the block"
        )
    return names


def _target(block: Block, tree: ast.Module, names: list[str]) -> ast.AST:
    definitions = [node for node in ast.walk(tree) if isinstance(node, _DEFINITION)]
    named = [node for node in definitions if node.name == names[0]]
    hint = block.position if isinstance(block.position, int) else None
    if named:
        if hint is None:
            return min(named, key=lambda node: node.lineno)
        return min(named, key=lambda node: (abs(node.lineno - hint), node.lineno))
    if hint is not None:
        enclosing = [
            node
            for node in definitions
            if node.lineno <= hint <= (node.end_lineno or node.lineno)
            and isinstance(node, ast.ClassDef) == _is_class(block)
        ]
        if enclosing:
            return max(enclosing, key=lambda node: node.lineno)  # the innermost
    raise FormatError(
        f"block {block.number}: no definition named {names[0]!r} in {block.path}"
        + ("" if hint is None else f" and none of that kind around line {hint}")
    )


def _is_class(block: Block) -> bool:
    tree = ast.parse(textwrap.dedent(block.code))
    return isinstance(tree.body[0], ast.ClassDef)


def _insert(block: Block, text: str) -> str:
    newline = _newline(text)
    lines = _lines(text)
    if lines and not ending(lines[-1]):
        lines[-1] += newline
    at, indent = _insertion_line(block, text, lines)
    code = _code_lines(block.code, indent, newline)
    before = lines[:at]
    if before and before[-1].strip():
        code = [newline, *code]
    after = lines[at:]
    if after and after[0].strip():
        code = [*code, newline]
    return "".join(before + code + after)


def _insertion_line(block: Block, text: str, lines: list[str]) -> tuple[int, str]:
    """How many of the file's lines stay above the inserted code, and its indentation."""
    if block.position == "EOF" or not lines:
        return len(lines), ""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if block.position == "BOF":
        return _header_end(tree, lines), ""
    if tree is None:
        return min(max(block.position - 1, 0), len(lines)), ""
    wanted = block.position - 1
    owner = _owning_class(tree, block.position) if _is_member(block) else None
    if owner is not None:
        boundaries = {_end(owner.body[-1])}
        for node in owner.body:
            if not _is_docstring(node, owner.body):
                boundaries.add(_start(node) - 1)
        first = lines[owner.body[0].lineno - 1]
        indent = re.match(r"[ \t]*", first).group(0)  # type: ignore[union-attr]
        return min(boundaries, key=lambda b: (abs(b - wanted), b)), indent
    boundaries = {_header_end(tree, lines), len(lines)}
    for node in tree.body:
        boundaries.add(_start(node) - 1)
    boundaries = {b for b in boundaries if b >= _header_end(tree, lines)}
    return min(boundaries, key=lambda b: (abs(b - wanted), b)), ""


def _start(node: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _is_docstring(node: ast.stmt, body: list[ast.stmt]) -> bool:
    return (
        node is body[0]
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_member(block: Block) -> bool:
    """Whether the code to insert is a class member: a definition that is indented in the
    block, or a function whose first parameter is ``self`` or ``cls``."""
    try:
        tree = ast.parse(textwrap.dedent(block.code))
    except SyntaxError:
        return False
    if not tree.body or not isinstance(tree.body[0], _DEFINITION):
        return False
    first_line = next(line for line in block.code.split("\n") if line.strip())
    if first_line[:1] in (" ", "\t"):
        return True
    node = tree.body[0]
    if isinstance(node, ast.ClassDef):
        return False
    arguments = [*node.args.posonlyargs, *node.args.args]
    return bool(arguments) and arguments[0].arg in ("self", "cls")


def _owning_class(tree: ast.Module, line: int) -> ast.ClassDef | None:
    """The innermost class whose body (below its ``class`` line) holds ``line``, when its
    members sit on lines of their own."""
    found = None
    nodes: list[ast.AST] = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.ClassDef) and node.lineno < line <= _end(node):
            if node.body[0].lineno > node.lineno:
                if found is None or node.lineno > found.lineno:
                    found = node
        nodes.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found


def _header_end(tree: ast.Module | None, lines: list[str]) -> int:
    """The lines of shebang, encoding comment, docstring and ``from __future__`` imports."""
    end = 0
    for index, line in enumerate(lines[:2]):
        if line.startswith("#!") or re.match(r"^#.*coding[:=]", line):
            end = index + 1
    if tree is None:
        return end
    for node in tree.body:
        docstring = _is_docstring(node, tree.body)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        end = node.end_lineno or node.lineno
    return end
