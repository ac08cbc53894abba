"""How a text config is made, as data: the corpus, the BM25 settings, the README files, the
order of the files shown, what the budget bounds and the columns (``swe-bench`` or ``all-text``)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePosixPath
from typing import Literal

_TEST_WORDS = frozenset({"test", "tests", "testing"})


@dataclasses.dataclass(frozen=True)
class Construction:
    """One way of making a text config; ``CONSTRUCTIONS`` names the two presets."""

    name: str
    corpus: Literal["py", "text"]
    """py: the ``*.py`` files only; text: every indexable file."""
    include_tests: bool
    """False: leave out paths with a word ``test``, ``tests`` or ``testing`` (SWE-bench)."""
    k1: float
    b: float
    stem: bool
    """Porter stemming of index and query terms (Lucene's PorterStemFilter); English stop
    words are always dropped (bm25s's list is Lucene's)."""
    top_k: int | None
    """BM25 hits kept (None: every file sharing a term with the issue)."""
    readmes: bool
    """The repository's root ``README*`` files are shown (and count against the budget)."""
    order: Literal["path", "rank"]
    """The order of the files shown (selection always goes by rank)."""
    budget_scope: Literal["prompt", "files"]
    """prompt: the whole prompt is within the budget; files: only the file blocks are."""
    swap_columns: bool
    """SWT-Bench's zsb/zsp rows: ``patch`` holds the golden test patch in ``<patch>`` tags,
    ``test_patch`` the golden code patch."""

    def indexed(self, path: str) -> bool:
        """Whether ``path`` (an indexable file) is in this construction's corpus."""
        if self.corpus == "py" and not path.endswith(".py"):
            return False
        return self.include_tests or not is_test_path(path)

    def with_tests(self, include: bool) -> Construction:
        return dataclasses.replace(self, include_tests=include)


def is_test_path(path: str) -> bool:
    """SWE-bench's rule: a word of the path (split at ``/``, ``_``, ``.`` and spaces) is
    ``test``, ``tests`` or ``testing``."""
    return bool(_TEST_WORDS & set(re.split(r"[ _/.]", path.lower())))


def is_root_readme(path: str) -> bool:
    """A file at the repository's root whose name starts with ``readme`` (any case)."""
    pure = PurePosixPath(path)
    return len(pure.parts) == 1 and pure.name.lower().startswith("readme")


SWE_BENCH = Construction(
    name="swe-bench", corpus="py", include_tests=True, k1=0.9, b=0.4, stem=True,
    top_k=20, readmes=True, order="path", budget_scope="prompt",
    swap_columns=True,
)  # fmt: skip
"""SWE-bench's ``bm25_retrieval.py`` and ``create_instance.py`` (Pyserini's Lucene BM25
defaults, top 20 hits, root READMEs, files by path, ``max_context_len`` over the prompt) with
test files indexed and the columns swapped, as SWT-Bench made its zsb/zsp datasets."""

ALL_TEXT = Construction(
    name="all-text", corpus="text", include_tests=True, k1=1.5, b=0.75, stem=False,
    top_k=None, readmes=False, order="rank", budget_scope="files",
    swap_columns=False,
)  # fmt: skip
"""Every indexable text file, bm25s's defaults, every hit in rank order, the budget over the
file blocks, the release's columns."""

CONSTRUCTIONS = {c.name: c for c in (SWE_BENCH, ALL_TEXT)}
