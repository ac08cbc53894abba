"""The files an issue names — paths (tracebacks included), dotted module names, and identifiers
written as code that are defined in exactly one file of the repository — and the issue-aware
ranking that puts them before BM25's other hits."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

from builder.text.construction import is_test_path
from builder.text.files import SourceFile

_PATH = re.compile(r"(?<![\w.\-~])[\w.\-~]*(?:[/\\][\w.\-]+)+|(?<![\w\-])-*(\b[\w\-]+\.py\b)")
"""A path-like word: parts joined by ``/`` or ``\\``, or a bare ``name.py`` (the group).
Each alternative starts only where its run of characters starts (the look-behinds): tried
from every place inside a run, a megabyte without a space would take hours, not milliseconds;
the run's start finds what any place inside it would."""
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
"""A dotted name: ``package.module.Class.method``."""
_WORD = re.compile(r"\b[A-Za-z_]\w{2,}\b")
"""An identifier of three or more characters."""
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)
"""A function, method or class defined in Python source."""
_CODE_CONTEXT = re.compile(r"[`.]([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\(")
"""A word written as code: opening a backtick span, after a ``.`` (an attribute, a module's
member) or before a ``(`` (a call)."""
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
        self._depth = max((name.count(".") + 1 for name in self._modules), default=0)

    def named(self, issue: str) -> list[str]:
        """The files ``issue`` names, strongest evidence first: paths (in the order they
        appear), then dotted module names, then the files defining identifiers no other
        file defines (most such identifiers first, at most IDENTIFIER_FILES). An identifier
        counts only when it is written as code: shaped as code (``_code_shaped``) or in a
        code context (``_CODE_CONTEXT``); a plain word (``time``, ``index``, ``Sphinx``) that
        one file happens to define as a function or class names nothing."""
        found: list[str] = []
        for match in _PATH.finditer(issue):
            word = match.group(1) or match.group(0)
            path = self._path(word)
            if path and path not in found:
                found.append(path)
        for word in _DOTTED.findall(issue):
            path = self._module(word)
            if path and path not in found:
                found.append(path)
        hits: Counter[str] = Counter()
        first: dict[str, int] = {}
        in_code = {word for match in _CODE_CONTEXT.findall(issue) for word in match if word}
        for position, word in enumerate(dict.fromkeys(_WORD.findall(issue))):
            path = self._defined_once.get(word)
            if path and path not in found and (word in in_code or _code_shaped(word)):
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
        parts = word.split(".", self._depth)[: self._depth]  # a module has no more parts
        for end in range(len(parts), 1, -1):
            path = self._modules.get(".".join(parts[:end]))
            if path:
                return path
        return None


def _code_shaped(word: str) -> bool:
    """An identifier no English word looks like: with an underscore, or with a capital
    letter after a lower-case one's place (``simplify_twice``, ``DataArray``, ``QTable``)."""
    return "_" in word or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word))


AUXILIARY_DIRS = frozenset(
    {"doc", "docs", "example", "examples", "ci", "benchmark", "benchmarks", "bench",
     "asv_bench", "scripts", "tools", "tutorials"}
)  # fmt: skip
"""A directory of one of these names holds files around the package, not the package."""
BM25_HITS = 50
"""BM25's hits the issue-aware ranking considers (the construction's ``top_k`` bounds only
plain ``bm25``): with files ranked by size as well, the 20th hit is not the last that fits."""
SIZE_WEIGHT = 4.0
"""A file *e* times (2.7×) larger must rank this many places higher in BM25 to be shown
before: a large file spends the budget of several smaller ones that BM25 ranks close by."""


TITLE_WEIGHT = 1.0
"""The weight of the hits of the issue's title beside the whole issue's (1.0) in
``fused_hits``."""
FUSION_K = 10
"""Reciprocal rank fusion's constant: a file's share of a list is ``weight / (FUSION_K +
place)``, so the first places of either list count most."""

RULES_VERSION = 4
"""Raised whenever the rules of ``NameIndex.named``, ``fused_hits`` or ``issue_first``
change. 3: BM25's hits are the issue's fused with its title's. 4: a path starts where its run
of path characters starts (linear time; ``a/b~c/d`` no longer also names ``~c/d``)."""


def rules() -> dict[str, object]:
    """What the issue-aware ranking depends on besides its inputs (for the store's key): the
    version of its rules and its constants."""
    return {"version": RULES_VERSION, "identifier_files": IDENTIFIER_FILES,
            "bm25_hits": BM25_HITS, "size_weight": SIZE_WEIGHT,
            "title_weight": TITLE_WEIGHT, "fusion_k": FUSION_K,
            "auxiliary_dirs": sorted(AUXILIARY_DIRS)}  # fmt: skip


def title(issue: str) -> str:
    """The issue's first non-empty line: its title, as SWE-bench's problem statements begin."""
    return next((line.strip() for line in issue.splitlines() if line.strip()), "")


def fused_hits(search: Callable[[str], list[str]], issue: str) -> list[str]:
    """BM25's hits for the whole issue fused with those for its title alone (reciprocal rank
    fusion: each file scores ``weight / (FUSION_K + place)`` in each list, the issue's weight
    1, the title's TITLE_WEIGHT; equal scores in path order). A long issue's template, program
    and traceback outweigh the few words that say what is wrong; the title is those words.
    ``search`` gives a query's hits, best first (``Bm25Index.hits``)."""
    scores: dict[str, float] = {}
    for query, weight in ((issue, 1.0), (title(issue), TITLE_WEIGHT)):
        for place, path in enumerate(search(query) if query else []):
            scores[path] = scores.get(path, 0.0) + weight / (FUSION_K + place)
    return sorted(scores, key=lambda path: (-scores[path], path))


def is_package_code(path: str) -> bool:
    """Not a test file (``is_test_path``), not under an AUXILIARY_DIRS directory, not at the
    repository's root (``setup.py``, ``conftest.py``): where the files to fix are."""
    parts = PurePosixPath(path).parts
    if len(parts) == 1 or is_test_path(path):
        return False
    return not any(part.lower() in AUXILIARY_DIRS for part in parts[:-1])


def issue_first(named: Sequence[str], ranked: Sequence[str], texts: Mapping[str, str]) -> list[str]:
    """The issue-aware ranking, given the files ``named`` (``NameIndex.named``), every BM25
    hit (``ranked``, best first) and the files' ``texts``: the named files that are package
    code (``is_package_code``), then BM25's first BM25_HITS hits that are package code, each
    group by BM25 place plus SIZE_WEIGHT × the natural log of the file's size in
    characters (a named file BM25 does not rank comes after those it does); then the named
    files and hits that are not package code (tests, docs, examples), in that order. The
    files to fix are the package's, and an issue's traceback or example names tests as
    often."""
    place = {path: index for index, path in enumerate(ranked)}

    def key(path: str) -> float:
        size = max(len(texts.get(path, "")), 1)
        return place.get(path, len(ranked)) + SIZE_WEIGHT * math.log(size)

    hits = ranked[:BM25_HITS]
    code = sorted((p for p in named if is_package_code(p)), key=key)
    code += sorted((p for p in hits if is_package_code(p)), key=key)
    other = [path for path in [*named, *hits] if not is_package_code(path)]
    return list(dict.fromkeys([*code, *other]))
