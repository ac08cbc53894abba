"""The files an issue names: paths (tracebacks included), dotted module names, and identifiers
that are defined in exactly one file of the repository."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from builder.text.construction import is_test_path
from builder.text.files import SourceFile

_PATH = re.compile(r"[\w.\-~]*(?:[/\\][\w.\-]+)+|\b[\w\-]+\.py\b")
"""A path-like word: parts joined by ``/`` or ``\\``, or a bare ``name.py``."""
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
"""A dotted name: ``package.module.Class.method``."""
_WORD = re.compile(r"\b[A-Za-z_]\w{2,}\b")
"""An identifier of three or more characters."""
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)
"""A function, method or class defined in Python source."""
IDENTIFIER_FILES = 5
"""At most this many files are named by identifiers alone (the most identifiers first): an
issue quoting a long program would otherwise fill the budget with them."""


class NameIndex:
    """Paths, modules and definitions of a repository's files, to find the ones an issue
    names; built once per repository and commit."""

    def __init__(self, files: Sequence[SourceFile]) -> None:
        self.paths = sorted(file.path for file in files)
        self._known = set(self.paths)
        self._by_name: dict[str, list[str]] = {}
        for path in self.paths:
            self._by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        definers: dict[str, set[str]] = {}
        for file in files:
            if file.path.endswith(".py"):
                for name in set(_DEFINITION.findall(file.text)):
                    definers.setdefault(name, set()).add(file.path)
        self._defined_once = {n: next(iter(p)) for n, p in definers.items() if len(p) == 1}
        self._modules: dict[str, str] = {}
        for path in self.paths:
            if path.endswith(".py"):
                parts = path[:-3].split("/")
                if parts[-1] == "__init__":
                    parts.pop()
                for start in range(len(parts)):  # src/pkg/mod.py is pkg.mod as well
                    self._modules.setdefault(".".join(parts[start:]), path)

    def named(self, issue: str) -> list[str]:
        """The files ``issue`` names, strongest evidence first: paths (in the order they
        appear), then dotted module names, then the files defining identifiers no other
        file defines (most such identifiers first, at most IDENTIFIER_FILES)."""
        found: list[str] = []
        for word in _PATH.findall(issue):
            path = self._path(word)
            if path and path not in found:
                found.append(path)
        for word in _DOTTED.findall(issue):
            path = self._module(word)
            if path and path not in found:
                found.append(path)
        hits: Counter[str] = Counter()
        first: dict[str, int] = {}
        for position, word in enumerate(dict.fromkeys(_WORD.findall(issue))):
            path = self._defined_once.get(word)
            if path and path not in found:
                hits[path] += 1
                first.setdefault(path, position)
        ranked = sorted(hits, key=lambda p: (-hits[p], first[p]))
        return found + ranked[:IDENTIFIER_FILES]

    def _path(self, word: str) -> str | None:
        """The repository file ``word`` ends with (its longest matching tail), or the only
        file of that name."""
        parts = [part for part in word.replace("\\", "/").split("/") if part not in ("", ".")]
        for start in range(len(parts) - 1):
            tail = "/".join(parts[start:])
            if tail in self._known:
                return tail
        if parts:
            same_name = self._by_name.get(parts[-1], [])
            if len(same_name) == 1:
                return same_name[0]
        return None

    def _module(self, word: str) -> str | None:
        """The file of the longest prefix of ``word`` (two parts or more) that is a module."""
        parts = word.split(".")
        for end in range(len(parts), 1, -1):
            path = self._modules.get(".".join(parts[:end]))
            if path:
                return path
        return None


def issue_first(named: Sequence[str], ranked: Sequence[str]) -> list[str]:
    """The issue-aware ranking: the files ``named`` that are not tests, those BM25 ranks
    (``ranked``) first and in its order, then the rest as named; then BM25's hits that are
    not tests; then the test files of either. The files to fix are code, and an issue's
    traceback or example names tests as often."""
    position = {path: index for index, path in enumerate(ranked)}
    code = [path for path in named if not is_test_path(path)]
    code.sort(key=lambda path: position.get(path, len(ranked)))  # stable: named order after
    hits = [path for path in ranked if not is_test_path(path)]
    tests = [path for path in [*named, *ranked] if is_test_path(path)]
    return list(dict.fromkeys([*code, *hits, *tests]))
