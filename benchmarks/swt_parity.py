"""Parity of ``evaluate --semantics swt-bench`` with SWT-Bench's own harness, run end to end.

    .venv/bin/python -m benchmarks.swt_parity --dataset DIR --config TOML --work-dir W --out DIR \
        [--instances ID ...] [--cases NAME ...] [--swt-bench GITDIR]

For every instance and case (below) the same prediction is scored twice:

- **ours**: ``swt-builder evaluate --semantics swt-bench`` (one run id and model per case);
- **theirs**: SWT-Bench's code (logic-star-ai/swt-bench, taken with ``git archive`` from the bare
  dir ``--swt-bench`` into ``W/parity/theirs`` at run time, never into this project): their
  extraction (``extract_patches.py``, for the cases with ``--patch-types vanilla fuzzy custom``),
  their six runs as ``run_instance`` makes them (what each applies, which test directives), each
  in OUR environment and sandbox for the instance (a session of the toolkit's backend, checkout at
  ``/testbed``), with THEIR command (``ExecSpec.test_command``: ``python3 trace.py --count -C
  coverage.cover --include-pattern '/testbed/(files)' -m pytest ...``, their ``trace.py``) run by
  bash under ``set -uxo pipefail`` as their eval script does, the patches applied with ``git
  apply -v -`` of the text and the here-document's newline, the log written as theirs is
  (``+ git apply`` output, the ``+ python3 … trace.py`` line, ``+ cat coverage.cover``); then
  their ``report_results`` (``get_logs_eval``, ``get_coverage_eval``, ``get_pred_report``) →
  ``report.json``, and their ``src/report.py`` ``main`` for the table.

sphinx: their command is ``tox -epy39 -v --``; tox cannot build its venv offline, so the
testenv's command (after their ``sed 's/pytest/pytest -rA/'``, with its ``setenv``) runs under
their tracer in the instance's environment, as ``trace.py`` would start tox's Python child.
Their ``report.py`` leaves out the ids of their filter lists (``dataset/filter_cases_*.txt``)
and divides by 500 minus them: each table is printed over the instances not in those lists
(``--denominator`` on our side, their ``TOTAL_INSTANCE_MAP`` set to that count) and over all
instances (their filter switched off, ``--total``).

Cases, made mechanically from each instance's own fields (:func:`make_cases`); a case that
cannot be made for an instance is listed with the reason.

Output: ``OUT/parity.json`` and ``OUT/parity.md``: both tables per case, every ``report.json``
field that differs per instance and case, the cases not made.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

SWT_BENCH_GIT = "/work/.mirror/logic-star-ai+swt-bench/repo"
CUSTOM_TYPES = ("vanilla", "fuzzy", "custom")
CASES = (
    "gold", "empty", "inverted", "inverted-outcome", "breaks-existing", "skip-then-pass",
    "custom-insert", "custom-rewrite", "custom-method", "custom-raw", "code-edit",
    "uncollectable", "new-api",
)  # fmt: skip
CASE_HELP = {
    "gold": "the golden test patch (`--predictions gold`)",
    "empty": "an empty prediction",
    "inverted": "the golden test patch + the golden code patch reversed, as a code edit",
    "inverted-outcome": "the golden test patch, each F2P test's outcome inverted by a wrapper",
    "breaks-existing": "the golden test patch + a module-level rebinding failing an existing "
    "test of the first golden test file",
    "skip-then-pass": "the golden test patch, each F2P test skipped unless an added line of "
    "the golden code patch is in its file",
    "custom-insert": "custom format: the top-level F2P tests (and the imports the test patch "
    "added) as `insert` at EOF",
    "custom-rewrite": "custom format: `rewrite` of a modified F2P test, of the class of a new "
    "F2P method, or of the existing test before a new F2P test (renamed to it)",
    "custom-method": "custom format: an F2P method (or a top-level F2P test made a method of "
    "a Test* class) as `insert` at the class's last line",
    "custom-raw": "the custom-insert blocks inside a prose answer with a fenced block",
    "code-edit": "the golden test patch + the golden code patch",
    "uncollectable": "the golden test patch + a new test file importing a missing name",
    "new-api": "the F2P tests moved into a new test file importing the name the fix adds",
}
MARK = "_swt_parity"


# --- Cases (pure: the instance's fields and the base commit's files) ---------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """A prediction: its raw text and the patch types both harnesses are given."""

    patch: str
    patch_types: tuple[str, ...] = ("vanilla",)


@dataclasses.dataclass(frozen=True)
class NotMade:
    """A case that cannot be made for an instance, and why."""

    reason: str


Read = Callable[[str], "str | None"]


def apply_texts(read: Read, patch: str) -> dict[str, str | None]:
    """The text of every file ``patch`` touches after it (``git apply`` in a scratch dir holding
    those files at their ``read`` text; None: deleted)."""
    paths = _patch_paths(patch)
    with tempfile.TemporaryDirectory(prefix="swt-parity-") as scratch:
        root = Path(scratch)
        for path in paths:
            text = read(path)
            if text is not None:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text, encoding="utf-8")
        subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"], input=patch.encode(), cwd=root,
            check=True, capture_output=True,
        )  # fmt: skip
        out: dict[str, str | None] = {}
        for path in paths:
            target = root / path
            out[path] = target.read_text(encoding="utf-8") if target.is_file() else None
        return out


def _patch_paths(patch: str) -> list[str]:
    found = re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, flags=re.M)
    return list(dict.fromkeys(path for pair in found for path in pair))


def unified(new_texts: Mapping[str, str | None], read: Read) -> str:
    from builder.evaluate.unified import unified_diff

    return unified_diff(new_texts, read)


@dataclasses.dataclass(frozen=True)
class Located:
    """An F2P test found in the golden test files: its file, class (or None) and name, its node
    in the file after the test patch, and whether the base file has the same definition name."""

    path: str
    cls: str | None
    name: str
    node: ast.AST
    class_node: ast.ClassDef | None
    in_base: bool
    class_in_base: bool


def f2p_parts(test_id: str) -> tuple[str | None, str | None, str]:
    """(file, innermost class, function) of an F2P id: pytest's ``path::Class::test[param]``,
    Django's ``test (module.Class)``, sympy's bare name."""
    django = re.match(r"^(\w+) \(([\w.]+)\)$", test_id)
    if django:
        return None, django.group(2).rsplit(".", 1)[-1], django.group(1)
    parts = test_id.split("::")
    name = re.sub(r"\[.*$", "", parts[-1])
    if len(parts) == 1:
        return None, None, name
    return parts[0], (parts[-2] if len(parts) > 2 else None), name


def _definitions(tree: ast.Module) -> dict[tuple[str | None, str], tuple[ast.AST, Any]]:
    found: dict[tuple[str | None, str], tuple[ast.AST, Any]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.setdefault((None, node.name), (node, None))
        elif isinstance(node, ast.ClassDef):
            found.setdefault((None, node.name), (node, None))
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.setdefault((node.name, inner.name), (inner, node))
    return found


def _parse(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def locate_f2p(
    fail_to_pass: Sequence[str], golden: Mapping[str, str | None], read: Read
) -> list[Located]:
    """Each F2P test's definition in the golden test files (``golden``: path → text after the
    test patch), in F2P order, once per definition."""
    trees = {p: _parse(t) for p, t in golden.items() if p.endswith(".py")}
    out: list[Located] = []
    seen = set()
    for test_id in fail_to_pass:
        path, cls, name = f2p_parts(test_id)
        for candidate, tree in trees.items():
            if tree is None or (path is not None and candidate != path):
                continue
            defs = _definitions(tree)
            key = (cls, name)
            if key not in defs and cls is None:
                key = next((k for k in defs if k[1] == name and k[0] is not None), key)
            if key not in defs or (candidate, key) in seen:
                continue
            seen.add((candidate, key))
            node, class_node = defs[key]
            base = _parse(read(candidate))
            base_defs = _definitions(base) if base is not None else {}
            out.append(
                Located(
                    candidate, key[0], name, node, class_node, key in base_defs,
                    key[0] is not None and (None, key[0]) in base_defs,
                )
            )  # fmt: skip
            break
    return out


def _source(text: str, node: ast.AST) -> str:
    """A definition's lines (decorators included), dedented."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    lines = text.splitlines()[first - 1 : node.end_lineno]
    return textwrap.dedent("\n".join(lines))


def _target(found: Located) -> str:
    return f"{found.cls}.{found.name}" if found.cls else found.name


def _appended(text: str, block: str) -> str:
    return text.rstrip("\n") + "\n\n\n" + block.strip("\n") + "\n"


_INVERT = f"""
def {MARK}_inverted(function):
    import functools

    @functools.wraps(function)
    def inverted(*args, **kwargs):
        try:
            function(*args, **kwargs)
        except BaseException:
            return None
        raise AssertionError("passes: inverted by the prediction")

    return inverted
"""
_BREAK = f"""
def {MARK}_broken(function):
    import functools

    @functools.wraps(function)
    def broken(*args, **kwargs):
        raise AssertionError("broken by the prediction")

    return broken
"""
_SKIP = f"""
def {MARK}_skip_before_fix(function):
    import functools
    import os

    root = os.path.dirname(os.path.abspath(__file__))
    while not os.path.exists(os.path.join(root, {{path!r}})) and os.path.dirname(root) != root:
        root = os.path.dirname(root)
    try:
        with open(os.path.join(root, {{path!r}}), encoding="utf-8") as handle:
            fixed = {{line!r}} in handle.read()
    except OSError:
        fixed = False
    if fixed:
        return function
{{skipper}}
"""
_SKIP_UNITTEST = """    import unittest

    return unittest.skipIf(True, "skipped before the fix")(function)"""
_SKIP_SYMPY = """    try:
        from sympy.testing.pytest import skip
    except ImportError:
        from sympy.utilities.pytest import skip

    @functools.wraps(function)
    def skipped(*args, **kwargs):
        skip("skipped before the fix")

    return skipped"""


def _module_of(path: str) -> str:
    """The import name of a repository file (``src/`` and ``lib/`` left out)."""
    parts = path[: -len(".py")].split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _code_files(patch: str) -> list[str]:
    return [p for p in _patch_paths(patch) if p.endswith(".py")]


def added_public_names(patch: str, read: Read) -> list[tuple[str, str]]:
    """(file, name) of every public top-level function, class or assignment the golden code
    patch adds to a module."""
    fixed = apply_texts(read, patch)
    found = []
    for path in _code_files(patch):
        after, before = _parse(fixed.get(path)), _parse(read(path)) if read(path) else None
        if after is None:
            continue
        old = _top_names(before) if before is not None else set()
        for name in sorted(_top_names(after) - old):
            if not name.startswith("_"):
                found.append((path, name))
    return found


def _top_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _added_line(patch: str, read: Read) -> tuple[str, str] | None:
    """(file, text) of the golden code patch's first added line whose text the base file lacks
    (a check true after the fix and false before it)."""
    path = None
    for line in patch.splitlines():
        header = re.match(r"^\+\+\+ b/(\S+)", line)
        if header:
            path = header.group(1)
            continue
        if path and path.endswith(".py") and line.startswith("+") and line[1:].strip():
            text = line[1:].strip()
            if text not in (read(path) or ""):
                return path, text
    return None


def _custom_block(path: str, kind: str, where: str | int, code: str) -> str:
    return f"diff\n{path}\n{kind}\n{where}\n{code.rstrip()}\nend diff\n"


def _new_imports(golden_text: str, base_text: str | None) -> list[str]:
    """The module-level import statements of the file after the test patch that the base file
    does not have (as text)."""
    tree = _parse(golden_text)
    old = set()
    if base_text is not None and _parse(base_text) is not None:
        old = {
            ast.unparse(n)
            for n in _parse(base_text).body
            if isinstance(n, ast.Import | ast.ImportFrom)
        }
    if tree is None:
        return []
    return [
        ast.unparse(n) for n in tree.body
        if isinstance(n, ast.Import | ast.ImportFrom) and ast.unparse(n) not in old
    ]  # fmt: skip


def make_cases(
    instance: Mapping[str, Any], read: Read, cases: Iterable[str] = CASES
) -> dict[str, Case | NotMade]:
    """Each case's prediction for ``instance`` (``repo``, ``patch``, ``test_patch``,
    ``FAIL_TO_PASS``; ``read``: the base commit's files), or why it cannot be made."""
    test_patch = instance["test_patch"]
    sympy = instance["repo"] == "sympy/sympy"
    golden = apply_texts(read, test_patch)
    f2p = instance["FAIL_TO_PASS"]
    located = locate_f2p(json.loads(f2p) if isinstance(f2p, str) else list(f2p), golden, read)
    golden_py = [p for p in _patch_paths(test_patch) if p.endswith(".py") and golden.get(p)]
    test_dir = os.path.dirname(golden_py[0]) if golden_py else ""
    out: dict[str, Case | NotMade] = {}
    for name in cases:
        if name not in CASES:
            raise ValueError(f"unknown case {name!r} (known: {', '.join(CASES)})")
        maker = _MAKERS[name]
        out[name] = maker(_Inputs(instance, read, golden, located, golden_py, test_dir, sympy))
    return out


@dataclasses.dataclass(frozen=True)
class _Inputs:
    instance: Mapping[str, Any]
    read: Read
    golden: Mapping[str, str | None]
    located: list[Located]
    golden_py: list[str]
    test_dir: str
    sympy: bool

    @property
    def test_patch(self) -> str:
        return self.instance["test_patch"]

    @property
    def code_patch(self) -> str:
        return self.instance["patch"]


def _joined(*patches: str) -> str:
    return "".join(p if p.endswith("\n") else p + "\n" for p in patches if p)


def _gold(i: _Inputs) -> Case:
    return Case(i.test_patch)


def _empty(i: _Inputs) -> Case:
    return Case("")


def _inverted(i: _Inputs) -> Case:
    fixed = apply_texts(i.read, i.code_patch)
    reverse = unified({p: i.read(p) for p in fixed}, lambda p: fixed.get(p))
    return Case(_joined(i.test_patch, reverse))


def _rebinding_case(i: _Inputs, helper: str, wrapper: str, targets: dict[str, list[str]]) -> Case:
    texts = {}
    for path, names in targets.items():
        lines = [f"{t} = {wrapper}({t})" for t in names]
        texts[path] = _appended(i.golden[path] or "", helper + "\n\n" + "\n".join(lines))
    return Case(unified({**{p: i.golden[p] for p in _patch_paths(i.test_patch)}, **texts}, i.read))


def _by_file(located: list[Located]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for found in located:
        out.setdefault(found.path, []).append(_target(found))
    return out


def _inverted_outcome(i: _Inputs) -> Case | NotMade:
    if not i.located:
        return NotMade("no F2P test found in the golden test files")
    return _rebinding_case(i, _INVERT, f"{MARK}_inverted", _by_file(i.located))


def _breaks_existing(i: _Inputs) -> Case | NotMade:
    f2p = {(f.path, f.cls, f.name) for f in i.located}
    for path in i.golden_py:
        base = _parse(i.read(path))
        if base is None:
            continue
        for (cls, name), (node, _class_node) in _definitions(base).items():
            if not name.startswith("test") or isinstance(node, ast.ClassDef):
                continue
            if cls is not None and not cls.startswith("Test"):
                continue
            if (path, cls, name) in f2p:
                continue
            target = f"{cls}.{name}" if cls else name
            return _rebinding_case(i, _BREAK, f"{MARK}_broken", {path: [target]})
    return NotMade("no golden test file exists before the patch with a test that is not F2P")


def _skip_then_pass(i: _Inputs) -> Case | NotMade:
    if not i.located:
        return NotMade("no F2P test found in the golden test files")
    added = _added_line(i.code_patch, i.read)
    if added is None:
        return NotMade("the golden code patch adds no line its base file lacks")
    skipper = _SKIP_SYMPY if i.sympy else _SKIP_UNITTEST
    helper = _SKIP.format(path=added[0], line=added[1], skipper=skipper)
    return _rebinding_case(i, helper, f"{MARK}_skip_before_fix", _by_file(i.located))


def _insert_blocks(i: _Inputs) -> str | None:
    top = [f for f in i.located if f.cls is None and not f.in_base]
    if not top:
        return None
    blocks = []
    for path in dict.fromkeys(f.path for f in top):
        text = i.golden[path] or ""
        code = [*_new_imports(text, i.read(path))]
        code += [_source(text, f.node) for f in top if f.path == path]
        blocks.append(_custom_block(path, "insert", "EOF", "\n\n\n".join(code)))
    return "\n".join(blocks)


def _custom_insert(i: _Inputs) -> Case | NotMade:
    blocks = _insert_blocks(i)
    if blocks is None:
        return NotMade("no F2P test is a new top-level function")
    return Case(blocks, CUSTOM_TYPES)


def _custom_raw(i: _Inputs) -> Case | NotMade:
    blocks = _insert_blocks(i)
    if blocks is None:
        return NotMade("no F2P test is a new top-level function")
    text = (
        "Here are tests that reproduce the issue.\n\n```\n" + blocks + "```\n\n"
        "They fail before the fix and pass after it.\n"
    )
    return Case(text, CUSTOM_TYPES)


def _custom_rewrite(i: _Inputs) -> Case | NotMade:
    for f in i.located:
        text = i.golden[f.path] or ""
        if f.in_base:
            base_node = _definitions(_parse(i.read(f.path)))[(f.cls, f.name)][0]
            where = base_node.lineno
            return Case(
                _custom_block(f.path, "rewrite", where, _source(text, f.node)), CUSTOM_TYPES
            )
    for f in i.located:
        if f.cls is not None and f.class_in_base:
            text = i.golden[f.path] or ""
            base_node = _definitions(_parse(i.read(f.path)))[(None, f.cls)][0]
            code = _source(text, f.class_node)
            return Case(_custom_block(f.path, "rewrite", base_node.lineno, code), CUSTOM_TYPES)
    for f in i.located:
        if f.cls is not None:
            continue
        base = _parse(i.read(f.path))
        golden = _parse(i.golden[f.path] or "")
        if base is None or golden is None:
            continue
        base_tests = {
            n.name: n for n in base.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
        }  # fmt: skip
        before = [
            n for n in golden.body
            if isinstance(n, ast.FunctionDef) and n.name in base_tests
            and n.lineno < f.node.lineno
        ]  # fmt: skip
        if not before:
            continue
        existing = base_tests[before[-1].name]
        code = _source(i.golden[f.path] or "", f.node)
        code = re.sub(rf"\bdef {re.escape(f.name)}\(", f"def {existing.name}(", code, count=1)
        return Case(_custom_block(f.path, "rewrite", existing.lineno, code), CUSTOM_TYPES)
    return NotMade("no F2P test is modified, a method of an existing class, or preceded by a test")


def _custom_method(i: _Inputs) -> Case | NotMade:
    for f in i.located:
        if f.cls is not None and not f.in_base and f.class_node is not None:
            text = i.golden[f.path] or ""
            code = _source(text, f.node)
            where = f.class_node.end_lineno
            return Case(_custom_block(f.path, "insert", where, code), CUSTOM_TYPES)
    for f in i.located:
        if f.cls is not None:
            continue
        text = i.golden[f.path] or ""
        tree = _parse(text)
        classes = [
            n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")
        ]
        if not classes:
            continue
        code = _source(text, f.node)
        code = re.sub(
            rf"\bdef {re.escape(f.name)}\((\s*\)?)",
            lambda m, name=f.name: f"def {name}(self"
            + (")" if m.group(1).strip() == ")" else ", "),
            code, count=1,
        )  # fmt: skip
        return Case(_custom_block(f.path, "insert", classes[0].end_lineno, code), CUSTOM_TYPES)
    return NotMade("no F2P test is a method, and no golden test file has a Test* class")


def _code_edit(i: _Inputs) -> Case:
    return Case(_joined(i.test_patch, i.code_patch))


def _uncollectable(i: _Inputs) -> Case | NotMade:
    code_files = [p for p in _code_files(i.code_patch) if "test" not in p.split("/")[-1]]
    if not code_files:
        return NotMade("the golden code patch changes no module to import from")
    path = f"{i.test_dir}/test{MARK}_uncollectable.py".lstrip("/")
    module = _module_of(code_files[0])
    text = (
        f"from {module} import {MARK}_missing_name\n\n\n"
        f"def test{MARK}_uncollectable():\n    assert {MARK}_missing_name\n"
    )
    return Case(_joined(i.test_patch, unified({path: text}, lambda p: None)))


def _new_api(i: _Inputs) -> Case | NotMade:
    names = added_public_names(i.code_patch, i.read)
    if not names:
        return NotMade("the golden code patch adds no public top-level name")
    if not i.located:
        return NotMade("no F2P test found in the golden test files")
    path, name = names[0]
    parts: list[str] = []
    for source in dict.fromkeys(f.path for f in i.located):
        tree = _parse(i.golden[source] or "")
        parts += [
            ast.unparse(n) for n in tree.body
            if isinstance(n, ast.Import | ast.ImportFrom) and getattr(n, "level", 0) == 0
        ]  # fmt: skip
    parts.append(f"from {_module_of(path)} import {name}")
    body, classes = [], set()
    for f in i.located:
        text = i.golden[f.path] or ""
        if f.cls is None:
            body.append(_source(text, f.node))
        elif f.cls not in classes:
            classes.add(f.cls)
            body.append(_source(text, f.class_node))
    text = "\n".join(dict.fromkeys(parts)) + "\n\n\n" + "\n\n\n".join(body) + "\n"
    new = f"{i.test_dir}/test{MARK}_new_api.py".lstrip("/")
    return Case(unified({new: text}, lambda p: None))


_MAKERS: dict[str, Callable[[_Inputs], Case | NotMade]] = {
    "gold": _gold, "empty": _empty, "inverted": _inverted,
    "inverted-outcome": _inverted_outcome, "breaks-existing": _breaks_existing,
    "skip-then-pass": _skip_then_pass, "custom-insert": _custom_insert,
    "custom-rewrite": _custom_rewrite, "custom-method": _custom_method,
    "custom-raw": _custom_raw, "code-edit": _code_edit, "uncollectable": _uncollectable,
    "new-api": _new_api,
}  # fmt: skip


# --- Comparing reports (pure) -----------------------------------------------------------------


def diff_reports(ours: Any, theirs: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Every field where two ``report.json`` entries differ (dotted paths; lists of test ids
    compared as sets, with what each side alone has)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = []
        for key in sorted(set(ours) | set(theirs)):
            field = f"{prefix}.{key}" if prefix else key
            if key not in ours or key not in theirs:
                out.append({"field": field, "ours": ours.get(key, "<absent>"),
                            "theirs": theirs.get(key, "<absent>")})  # fmt: skip
                continue
            out += diff_reports(ours[key], theirs[key], field)
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        a, b = set(map(str, ours)), set(map(str, theirs))
        if a == b:
            return []
        return [{"field": prefix, "ours_only": sorted(a - b), "theirs_only": sorted(b - a)}]
    if isinstance(ours, float) and isinstance(theirs, float) and abs(ours - theirs) < 1e-12:
        return []
    if ours != theirs or type(ours) is not type(theirs):
        return [{"field": prefix, "ours": ours, "theirs": theirs}]
    return []


def table_values(text: str) -> dict[str, str]:
    """``| key | value |`` rows of a printed table (either side's), numbers to one decimal
    (their ``report.py`` prints an int 0 as ``0``, ours ``0.0``: the same value)."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not set(cells[0]) <= set("-:"):
            try:
                out[cells[0]] = f"{float(cells[1]):.1f}"
            except ValueError:
                out[cells[0]] = cells[1]
    return out


def table_cells(text: str) -> dict[str, str]:
    """The cells as printed (text), to tell a format difference from a value difference."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not set(cells[0]) <= set("-:"):
            out[cells[0]] = cells[1]
    return out


# --- Their code -------------------------------------------------------------------------------


def their_code(git_dir: str, scratch: Path) -> types.SimpleNamespace:
    """SWT-Bench's ``src/``, ``figures/`` and ``dataset/`` from ``git archive`` into ``scratch``
    and the modules used here imported from it (``fire``, which ``src/report.py`` imports for
    its command line only, is a stub)."""
    scratch.mkdir(parents=True, exist_ok=True)
    if not (scratch / "src" / "grading.py").is_file():
        archive = subprocess.run(
            ["git", "--git-dir", git_dir, "archive", "HEAD", "src", "figures", "dataset"],
            check=True, capture_output=True,
        ).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    commit = subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip
    for path in (str(scratch), str(scratch / "src")):  # figures/util.py: `from constants import`
        if path not in sys.path:
            sys.path.insert(0, path)
    if "fire" not in sys.modules:
        sys.modules["fire"] = types.SimpleNamespace(Fire=lambda *a, **k: None)  # stub: fire
    with _cwd(scratch):  # figures/util.py reads dataset/filter_cases_*.txt when imported
        import src.exec_spec as exec_spec
        import src.grading as grading
        import src.report as report
        import src.utils as utils
        from src.auxillary_src import extract_patches

    return types.SimpleNamespace(
        exec_spec=exec_spec, grading=grading, utils=utils, report=report,
        extract_patches=extract_patches, root=scratch, commit=commit,
    )  # fmt: skip


@contextlib.contextmanager
def _cwd(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


# --- Their six runs in our environment --------------------------------------------------------


class TheirHarness:
    """SWT-Bench's run_instance for one prediction, each run a session of our backend."""

    def __init__(self, code: types.SimpleNamespace, stage: Any, timeout_s: float) -> None:
        self.code, self.stage, self.timeout_s = code, stage, timeout_s
        self.root = code.root
        self._contexts: dict[str, Any] = {}

    def _context(self, candidate: Any) -> Any:
        key = candidate.instance_id
        if key not in self._contexts:
            stage = self.stage
            mirror = stage.repos.mirror(candidate.repo, candidate.base_commit)
            resolution = stage.environments.resolve(candidate, mirror)
            spec = stage._measurable(resolution.spec)
            environment = stage.backend.prepare(spec)
            self._contexts[key] = types.SimpleNamespace(
                mirror=mirror, spec=spec, environment=environment
            )
        return self._contexts[key]

    def extract(self, candidate: Any, raw: str, patch_types: Sequence[str], logs: Path) -> str:
        """run_instance's model patch: vanilla alone → their ``remove_binary_diffs``; else their
        ``extract_patches.py`` in a fresh checkout of the base commit (as in their container)."""
        if list(patch_types) == ["vanilla"]:
            return self.code.extract_patches.remove_binary_diffs(raw)
        context = self._context(candidate)
        logs.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="swt-parity-extract-") as scratch:
            testbed = Path(scratch) / "testbed"
            subprocess.run(
                ["git", "clone", "--quiet", "--shared", "--no-checkout", str(context.mirror),
                 str(testbed)], check=True, capture_output=True,
            )  # fmt: skip
            subprocess.run(
                ["git", "-c", "advice.detachedHead=false", "checkout", "--quiet",
                 candidate.base_commit], cwd=testbed, check=True, capture_output=True,
            )  # fmt: skip
            raw_file = Path(scratch) / "raw_model_patch.txt"
            raw_file.write_text(raw, encoding="utf-8")
            target = Path(scratch) / "extracted_patch.diff"
            script = self.root / "src" / "auxillary_src" / "extract_patches.py"
            done = subprocess.run(
                [sys.executable, str(script), "--model_output_file", str(raw_file),
                 "--testbed", str(testbed), "--patch_type", *patch_types,
                 "--reference_commit", candidate.base_commit, "--target_file", str(target)],
                capture_output=True, text=True,
            )  # fmt: skip
            (logs / "extraction.log").write_text(
                f"exit {done.returncode}\n{done.stdout}\n{done.stderr}", encoding="utf-8"
            )
            if done.returncode != 0 or not target.is_file():
                return ""
            return target.read_text(encoding="utf-8")

    def command(
        self, instance: dict[str, Any], directives: list[str], trace: str, read: Read
    ) -> tuple[str, dict[str, str]]:
        """Their ``ExecSpec.test_command`` for these directives, with coverage, their trace.py
        at ``trace``; sphinx: the tox testenv's command in its place (and its setenv)."""
        spec = self.code.exec_spec.make_exec_spec(instance)
        spec.test_directives = directives
        spec.compute_coverage = True
        command = spec.test_command.replace("/root/trace.py", trace)
        env: dict[str, str] = {}
        if instance["repo"] == "sphinx-doc/sphinx":
            from builder.evaluate.swt.commands import tox_commands

            words, setenv = tox_commands(read("tox.ini") or "")
            env = dict(setenv)
            at = words.index("{posargs}") if "{posargs}" in words else len(words)
            head, tail = words[:at], words[at + 1 :]
            python_options: list[str] = []
            if head[0].startswith("python"):
                rest = head[1:]
                while rest and rest[0] != "-m":  # `python -X dev -m pytest ...`: options first
                    python_options.append(rest.pop(0))
            else:  # `pytest -rA ...`: tox's child is that script, a Python child
                rest = ["-m", head[0], *head[1:]]
            trace_pattern = command.split(" -m tox", 1)[0].removeprefix("python3 ")
            command = " ".join(
                ["python3", *python_options, trace_pattern, *rest, *directives, *tail]
            )
        return command, env

    def run(
        self, candidate: Any, instance: dict[str, Any], name: str, patch_list: list[Any],
        directives: list[str], log_dir: Path, skip_unapplied: bool = False,
    ) -> Path:  # fmt: skip
        """One run as their eval script makes it; its ``test_output.txt`` (reused when there,
        as run_eval_exec_spec does; absent when the run timed out). ``skip_unapplied``: when
        no patch applied, the tests are not run (their report of a prediction whose pred_pre
        patch did not apply reads no run)."""
        output = log_dir / "test_output.txt"
        if output.is_file() or (log_dir / "timed_out").is_file():
            return output
        log_dir.mkdir(parents=True, exist_ok=True)
        context = self._context(candidate)
        stage = self.stage
        run_dir = stage.work_dir / "runs" / "swt-parity" / hashlib.sha256(
            str(log_dir).encode()).hexdigest()[:16]  # fmt: skip
        shutil.rmtree(run_dir, ignore_errors=True)
        from validation.runs.generated import place_generated

        try:
            with stage.backend.session(
                context.environment, context.mirror, candidate.base_commit, run_dir
            ) as session:
                session.services = context.spec.services
                place_generated(session, context.mirror, log_dir / "generated.log",
                                context.spec.project_commit)  # fmt: skip
                tools = run_dir / "their"
                tools.mkdir(parents=True, exist_ok=True)
                shutil.copy(self.root / "src" / "auxillary_src" / "trace.py", tools / "trace.py")
                from builder.core.gitutil import file_reader

                read = file_reader(context.mirror, candidate.base_commit)
                trace = f"{session.inside}/their/trace.py"
                command, env = self.command(instance, directives, trace, read)
                session.extra_env = tuple(sorted(env.items()))
                head = [self._git_info(session.tree, candidate.base_commit)]
                for patch in patch_list:  # `git apply -v - <<'EOF'\n{patch}\nEOF`, never stopping
                    done = subprocess.run(
                        ["git", "apply", "-v", "-"], input=f"{patch}\n".encode(),
                        cwd=session.tree, capture_output=True,
                    )  # fmt: skip
                    head.append("+ git apply -v -\n" + (done.stdout + done.stderr).decode(
                        "utf-8", errors="replace"))  # fmt: skip
                if skip_unapplied and "applied patch" not in "".join(head).lower():
                    output.write_text("".join(head) + NOT_RUN_NOTE, encoding="utf-8")
                    return output
                script = (
                    "#!/bin/bash\nset -uxo pipefail\n"
                    f"cd {session.testbed}\n{command}\ncat coverage.cover\n"
                    f"git checkout {candidate.base_commit}\n"
                )
                (run_dir / "their_eval.sh").write_text(script, encoding="utf-8")
                (log_dir / "eval.sh").write_text(script, encoding="utf-8")
                sandbox_log = log_dir / "sandbox.log"
                completed = session.run(
                    ["bash", f"{session.inside}/their_eval.sh"], sandbox_log, self.timeout_s
                )
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        if completed.timed_out:  # their exec_run_with_timeout: no test_output.txt
            (log_dir / "timed_out").write_text("", encoding="utf-8")
            return output
        body = sandbox_log.read_text(encoding="utf-8", errors="replace")
        output.write_text("".join(head) + body, encoding="utf-8")
        return output

    @staticmethod
    def _git_info(tree: Path, base: str) -> str:
        """The informational part of their eval script (``git status``, ``git show``,
        ``git diff BASE``) before any patch is applied."""
        parts = []
        for args in (["status"], ["show"], ["diff", base]):
            done = subprocess.run(["git", *args], cwd=tree, capture_output=True)
            parts.append(f"+ git {' '.join(args)}\n" + (done.stdout + done.stderr).decode(
                "utf-8", errors="replace"))  # fmt: skip
        return "".join(parts)

    def instance_report(
        self, candidate: Any, instance: dict[str, Any], model: str, run_id: str,
        raw: str, patch_types: Sequence[str],
    ) -> dict[str, Any] | None:  # fmt: skip
        """run_instance, then make_run_report's call of report_results: the report.json entry
        (None: their harness has none — nothing ran, an error instance)."""
        code = self.code
        with _cwd(self.root):
            get_log_dir = code.utils.get_log_dir
            get_directives = code.utils.get_test_directives
            patch_id_base = model.replace("/", "__")
            instance_id, repo = instance["instance_id"], instance["repo"]
            pre_dir = get_log_dir(run_id, "pred_pre__" + patch_id_base, instance_id)
            model_patch = self.extract(candidate, raw, patch_types, self.root / pre_dir)
            if not model_patch:
                return None
            names = ["pred_pre__" + patch_id_base, "pred_post__" + patch_id_base,
                     "gold_pre", "gold_post", "base_pre", "base_post"]  # fmt: skip
            cached = [False, False, True, True, True, True]
            tests = [model_patch, model_patch, instance["golden_test_patch"],
                     instance["golden_test_patch"], None, None]  # fmt: skip
            codes = [None, instance["golden_code_patch"], None, instance["golden_code_patch"],
                     None, instance["golden_code_patch"]]  # fmt: skip
            outputs: list[Path] = []
            for cld, test_patch, code_patch, patch_id in zip(
                cached, tests, codes, names, strict=True
            ):
                if outputs and NOT_RUN_NOTE in _text(outputs[0]):
                    break  # get_pred_report returns before reading any other run
                directives = get_directives(model_patch if test_patch is None else test_patch, repo)
                patch_list = ([] if code_patch is None else [code_patch]) + [test_patch]
                if cld:
                    log_dir = get_log_dir(patch_id, instance_id, _directive_id(directives))
                else:
                    log_dir = get_log_dir(run_id, patch_id, instance_id)
                (self.root / log_dir).mkdir(parents=True, exist_ok=True)
                (self.root / log_dir / "model_patch.diff").write_text(model_patch, encoding="utf-8")
                outputs.append(
                    self.run(
                        candidate,
                        instance,
                        patch_id,
                        patch_list,
                        directives,
                        self.root / log_dir,
                        skip_unapplied=not outputs,
                    )  # fmt: skip
                )
            # make_run_report: which logs report_results reads
            model_dirs = _directive_id(get_directives(model_patch, repo))
            gold_dirs = _directive_id(get_directives(instance["golden_test_patch"], repo))
            paths = [get_log_dir(run_id, n, instance_id) / "test_output.txt" for n in names[:2]]
            paths += [
                get_log_dir(n, instance_id, d) / "test_output.txt"
                for n, d in zip(
                    names[2:], [gold_dirs, gold_dirs, model_dirs, model_dirs], strict=True
                )
            ]
            if not (pre_dir / "test_output.txt").exists():
                return None
            report = code.grading.report_results(
                patch_id_base, run_id, instance["golden_code_patch"], [str(p) for p in paths],
                instance_id, repo, "unit_test",
            )  # fmt: skip
            return report[instance_id]

    def table(self, run_id: str, model: str, gold_run: str, total: int, filtered: bool) -> str:
        """Their ``src/report.py`` ``main`` over ``run_instance_swt_logs/RUN_ID/MODEL`` (total and
        gold run set; ``filtered``: their filter lists as they are, else switched off)."""
        report = self.code.report
        util = sys.modules["figures.util"]
        report.TOTAL_INSTANCE_MAP["verified"] = total
        report.GOLD_RUN_MAP["verified"] = gold_run
        original = util._filter_cases
        if not filtered:
            util._filter_cases = lambda dataset="all": frozenset()
        buffer = io.StringIO()
        try:
            with _cwd(self.root), contextlib.redirect_stdout(buffer):
                report.main(
                    f"run_instance_swt_logs/{run_id}/{model}", name=model, dataset="verified"
                )
        except (ZeroDivisionError, FileNotFoundError) as error:
            buffer.write(f"(their report.py raised {type(error).__name__}: {error})\n")
        finally:
            util._filter_cases = original
        return buffer.getvalue()


NOT_RUN_NOTE = (
    "\n(swt_parity: the tests were not run — the prediction did not apply, and their report "
    "of such a prediction reads no run)\n"
)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def _directive_id(directives: list[str]) -> str:
    """run_evaluation.test_directive_id."""
    return hashlib.sha256("__".join(directives).encode()).hexdigest()


# --- Our side ---------------------------------------------------------------------------------


def ours(
    args: argparse.Namespace, case: str, predictions: Path | str, ids: list[str],
    patch_types: Sequence[str], work: Path,
) -> tuple[Path, str]:  # fmt: skip
    """``swt-builder evaluate --semantics swt-bench`` for one case: its reports' folder and the
    command's output."""
    run_id = f"parity-{case}"
    command = [
        str(Path(sys.executable).parent / "swt-builder"), "evaluate", "--semantics", "swt-bench",
        "--settings", str(args.config), "--dataset", str(args.dataset),
        "--predictions", str(predictions), "--run-id", run_id,
        "--output-dir", str(work / "ours"), "--work-dir", str(args.work_dir), "--no-progress",
        "--instances", *ids, "--patch-types", *patch_types,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    model = "gold" if predictions == "gold" else model_name(case)
    folder = work / "ours" / "evaluations" / run_id / "run_instance_swt_logs" / run_id / model
    return folder, f"$ {' '.join(command)}\nexit {done.returncode}\n{done.stdout}{done.stderr}"


def model_name(case: str) -> str:
    return f"parity-{case}"


def our_table(
    folder: Path, gold: Path, total: int | None, denominator: Path | None, model: str
) -> tuple[str, dict[str, float]]:
    """Our printed table of the reports in ``folder`` and its values unrounded, by row."""
    from builder.evaluate.swt.metrics import table
    from builder.evaluate.swt.report import IdListError, score_reports

    if not folder.is_dir():
        return "(no reports)\n", {}
    try:
        summary = score_reports(
            folder, total=total, denominator=denominator, gold_dir=gold if gold.is_dir() else None
        )
    except IdListError as error:
        return f"({error})\n", {}
    rows = {row: getattr(summary, field) for row, field in ROW_FIELDS.items()}
    return table(model, summary), {row: value for row, value in rows.items() if value is not None}


ROW_FIELDS = {
    "Applicability (W)": "applicability", "Success Rate (S)": "success", "F->X": "fail_to_any",
    "F->P": "fail_to_pass", "P->P": "pass_to_pass", "Coverage Delta (Δᵃˡˡ)": "coverage",
    "Coverage Delta Resolved (Δᔆ)": "coverage_resolved",
    "Coverage Delta Unresolved (Δⁿᵒᵗ ᔆ)": "coverage_unresolved",
}  # fmt: skip
"""Each row of the table and the summary's field it prints."""


def same_values(ours: Mapping[str, float], theirs: str) -> bool:
    """Whether their printed table (its numbers unrounded, as ``tabulate`` prints them) holds
    our unrounded values, row by row, to floating-point noise."""
    cells = {row: cell for row, cell in table_cells(theirs).items() if row in ROW_FIELDS}
    if set(cells) != set(ours):
        return False
    return all(abs(float(cells[row]) - value) <= 1e-9 * max(1.0, abs(value))
               for row, value in ours.items())  # fmt: skip


# --- Main -------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="a release dir or a records file")
    parser.add_argument("--config", required=True, type=Path, help="the toolkit's settings")
    parser.add_argument("--work-dir", required=True, type=Path, help="the toolkit's work dir")
    parser.add_argument("--out", required=True, type=Path, help="parity.json and parity.md")
    parser.add_argument("--instances", nargs="+", default=[])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--swt-bench", default=SWT_BENCH_GIT, help="SWT-Bench's bare git dir")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per run (theirs: 1800)")
    args = parser.parse_args(argv)
    args.work_dir = args.work_dir.resolve()
    args.config = args.config.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work_dir / "parity"
    code = their_code(args.swt_bench, work / "theirs")

    from builder.core.config import load_config
    from builder.core.gitutil import file_reader
    from builder.evaluate.dataset import load_instances
    from builder.evaluate.stage import EvaluateStage

    config = load_config(args.config, [f"work_dir={json.dumps(str(args.work_dir))}"])
    settings = config.validation.model_copy(update={"timeout_s": args.timeout})
    stage = EvaluateStage(settings, config.work_dir, config.repos, config.docker)
    harness = TheirHarness(code, stage, args.timeout)
    instances = load_instances(str(args.dataset), only=args.instances)
    ids = [i.instance_id for i in instances]
    filtered_out = _their_filter(code)

    cases = ["gold", *[c for c in args.cases if c != "gold"]]  # gold first: ΔC's reference
    made: dict[str, dict[str, Case | NotMade]] = {}
    records: dict[str, dict[str, Any]] = {}
    for instance in instances:
        c = instance.candidate
        mirror = stage.repos.mirror(c.repo, c.base_commit)
        read = file_reader(mirror, c.base_commit)
        fields = {"instance_id": c.instance_id, "repo": c.repo, "patch": c.patch,
                  "test_patch": c.test_patch,
                  "FAIL_TO_PASS": list(instance.fail_to_pass)}  # fmt: skip
        made[c.instance_id] = make_cases(fields, read, cases)
        records[c.instance_id] = {
            "instance_id": c.instance_id, "repo": c.repo, "version": c.version,
            "base_commit": c.base_commit, "environment_setup_commit": c.environment_setup_commit,
            "golden_code_patch": c.patch, "golden_test_patch": c.test_patch,
        }  # fmt: skip

    result: dict[str, Any] = {
        "swt_bench_commit": code.commit, "dataset": str(args.dataset), "instances": ids,
        "filtered_by_their_lists": sorted(filtered_out & set(ids)), "cases": {},
        "not_made": {}, "date": time.strftime("%Y-%m-%d %H:%M"),
    }  # fmt: skip
    gold_ours = (
        work
        / "ours"
        / "evaluations"
        / "parity-gold"
        / "run_instance_swt_logs"
        / "parity-gold"
        / "gold"
    )
    for case in cases:
        started = time.monotonic()
        entries = {i: made[i][case] for i in ids if isinstance(made[i][case], Case)}
        for i in ids:
            if isinstance(made[i][case], NotMade):
                result["not_made"].setdefault(case, {})[i] = made[i][case].reason
        if not entries:
            continue
        types_ = next(iter(entries.values())).patch_types
        model = "gold" if case == "gold" else model_name(case)
        predictions: Path | str = "gold"
        if case != "gold":
            predictions = work / "predictions" / f"{case}.jsonl"
            predictions.parent.mkdir(parents=True, exist_ok=True)
            predictions.write_text("".join(
                json.dumps({"instance_id": i, "model_name_or_path": model,
                            "model_patch": entry.patch}) + "\n"
                for i, entry in entries.items()), encoding="utf-8")  # fmt: skip
        print(f"[{time.strftime('%H:%M:%S')}] {case}: ours on {len(entries)}", flush=True)
        folder, output = ours(args, case, predictions, list(entries), types_, work)
        print(f"[{time.strftime('%H:%M:%S')}] {case}: theirs", flush=True)
        run_id = f"parity-{case}"
        for i, entry in entries.items():  # a changed prediction runs again (their cache)
            raw = work / "predictions" / case / f"{i}.raw"
            raw.parent.mkdir(parents=True, exist_ok=True)
            if raw.is_file() and raw.read_text(encoding="utf-8") == entry.patch:
                continue
            for folder_name in (model, f"pred_pre__{model}", f"pred_post__{model}"):
                shutil.rmtree(code.root / "run_instance_swt_logs" / run_id / folder_name / i,
                              ignore_errors=True)  # fmt: skip
            raw.write_text(entry.patch, encoding="utf-8")
        reports_theirs: dict[str, Any] = {}
        for i, entry in entries.items():
            candidate = next(x.candidate for x in instances if x.instance_id == i)
            try:
                reports_theirs[i] = harness.instance_report(
                    candidate, records[i], model, run_id, entry.patch, entry.patch_types
                )
            except Exception as error:  # noqa: BLE001 — recorded, the others go on
                reports_theirs[i] = {"<their harness raised>": f"{type(error).__name__}: {error}"}
        reports_ours = {}
        for i in entries:
            path = folder / i / "report.json"
            reports_ours[i] = json.loads(path.read_text())[i] if path.is_file() else None
        differences = {}
        for i in entries:
            a, b = reports_ours[i], reports_theirs[i]
            if a is None or b is None:
                if (a is None) != (b is None):
                    differences[i] = [{"field": "<report>", "ours": a is not None and "present",
                                       "theirs": b is not None and "present"}]  # fmt: skip
                continue
            found = diff_reports(a, b)
            if found:
                differences[i] = found
        total = len(entries)
        kept_here = [i for i in entries if i not in filtered_out]
        local_denominator = work / f"denominator-{case}.txt"
        local_denominator.write_text("\n".join(kept_here) + "\n", encoding="utf-8")
        gold_run = "parity-gold"
        ours_all, values_all = our_table(folder, gold_ours, total, None, model)
        ours_filtered, values_filtered = (
            our_table(folder, gold_ours, None, local_denominator, model)
            if kept_here
            else ("(no instance left)\n", {})
        )
        tables = {
            "all": {
                "ours": ours_all,
                "theirs": harness.table(run_id, model, gold_run, total, filtered=False),
            },
            "their_filter": {
                "ours": ours_filtered,
                "theirs": harness.table(run_id, model, gold_run, len(kept_here), filtered=True)
                if kept_here
                else "(no instance left)\n",
            },
        }
        identical = {
            name: table_values(t["ours"]) == table_values(t["theirs"]) for name, t in tables.items()
        }
        unrounded = {
            "all": same_values(values_all, tables["all"]["theirs"]),
            "their_filter": same_values(values_filtered, tables["their_filter"]["theirs"])
            if kept_here
            else True,
        }
        printed = {
            name: {k: [v, table_cells(t["theirs"]).get(k)]
                   for k, v in table_cells(t["ours"]).items()
                   if v != table_cells(t["theirs"]).get(k)}
            for name, t in tables.items()
        }  # fmt: skip
        result["cases"][case] = {
            "description": CASE_HELP[case], "patch_types": list(types_),
            "instances": list(entries), "tables": tables, "tables_identical": identical,
            "values_identical": unrounded,
            "cells_printed_differently": printed,
            "differences": differences, "ours_output": output[-4000:],
            "their_reports": reports_theirs, "our_reports": reports_ours,
            "seconds": round(time.monotonic() - started, 1),
        }  # fmt: skip
        print(f"[{time.strftime('%H:%M:%S')}] {case}: tables identical {identical}; values "
              f"unrounded identical {unrounded}; reports differing: {sorted(differences)}",
              flush=True)  # fmt: skip
        _write(args.out, result)
    _write(args.out, result)
    return 0


def _their_filter(code: types.SimpleNamespace) -> set[str]:
    util = sys.modules.get("figures.util")
    with _cwd(code.root):
        return set(util._filter_cases()) if util is not None else set()


def _write(out: Path, result: dict[str, Any]) -> None:
    (out / "parity.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    lines = [
        "# evaluate --semantics swt-bench beside SWT-Bench's harness\n",
        f"SWT-Bench commit {result['swt_bench_commit']}, dataset {result['dataset']}, "
        f"{result['date']}; instances: {', '.join(result['instances'])}; in their filter "
        f"lists: {', '.join(result['filtered_by_their_lists']) or 'none'}.\n",
        "| case | instances | tables (all) | tables (their filter) | values unrounded | "
        "reports differing |",
        "|---|---|---|---|---|---|",
    ]
    for case, data in result["cases"].items():
        same = data["tables_identical"]
        unrounded = data.get("values_identical", {})
        lines.append(
            f"| {case} | {len(data['instances'])} | {'identical' if same['all'] else 'DIFFER'} | "
            f"{'identical' if same['their_filter'] else 'DIFFER'} | "
            f"{'identical' if all(unrounded.values()) else 'DIFFER'} | "
            f"{', '.join(sorted(data['differences'])) or 'none'} |"
        )
    for case, data in result["cases"].items():
        lines.append(f"\n## {case}\n\n{data['description']} (`--patch-types "
                     f"{' '.join(data['patch_types'])}`)\n")  # fmt: skip
        for name, pair in data["tables"].items():
            lines.append(
                f"Tables over {name}: ours\n\n{pair['ours']}\ntheirs\n\n```\n{pair['theirs']}```\n"
            )
        for instance, found in data["differences"].items():
            lines.append(f"- {instance}:")
            for item in found:
                lines.append(
                    f"  - `{item['field']}`: "
                    + json.dumps({k: v for k, v in item.items() if k != "field"}, default=str)[
                        :1500
                    ]
                )
    if result["not_made"]:
        lines.append("\n## Cases not made\n")
        for case, reasons in result["not_made"].items():
            for instance, reason in reasons.items():
                lines.append(f"- {case}, {instance}: {reason}")
    (out / "parity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
