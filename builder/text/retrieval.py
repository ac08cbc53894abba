"""Which files a prompt shows, best first: BM25 over the repository's files queried with the
issue (alone, or after the files the issue names), or the files the golden patches edit."""

from __future__ import annotations

from collections.abc import Sequence

from builder.core.diffs import parse_patch
from builder.text.construction import Construction
from builder.text.files import SourceFile

RETRIEVALS = ("bm25", "issue+bm25", "oracle", "oracle+tests")
"""bm25: ranked by the issue; issue+bm25: the files the issue names, then bm25's; oracle: the
golden code patch's files; oracle+tests: those and the golden test patch's files."""


class Bm25Index:
    """A BM25 index (``bm25s``, Lucene's variant) of files, each indexed as its path and its
    text, with the construction's k1, b, stemming and stop words; built once per repository
    and commit, queried per instance."""

    def __init__(self, files: Sequence[SourceFile], construction: Construction) -> None:
        import bm25s

        self.paths = [file.path for file in files]
        self._construction = construction
        self._stemmer = None
        if construction.stem:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("porter")  # Lucene's PorterStemFilter
        self._retriever = None
        if files:
            self._retriever = bm25s.BM25(k1=construction.k1, b=construction.b)
            corpus = self._tokenize([f"{file.path}\n{file.text}" for file in files])
            self._retriever.index(corpus, show_progress=False)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        import bm25s

        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer, return_ids=False,
            show_progress=False,
        )  # fmt: skip
        return [list(words) for words in tokens]

    def rank(self, query: str) -> list[str]:
        """Paths of the files that share a term with ``query``, by descending score, at most
        the construction's ``top_k``; equal scores in path order (the same ranking on every
        run)."""
        hits = self.hits(query)
        return hits[: self._construction.top_k] if self._construction.top_k else hits

    def hits(self, query: str) -> list[str]:
        """Every file that shares a term with ``query``, ranked as ``rank`` ranks them."""
        if self._retriever is None:
            return []
        words = self._tokenize([query])[0]
        if not words:
            return []
        scores = self._retriever.get_scores(words)
        order = sorted(range(len(self.paths)), key=lambda i: (-float(scores[i]), self.paths[i]))
        return [self.paths[i] for i in order if scores[i] > 0]


def edited_paths(patch: str) -> list[str]:
    """The files a diff changes that exist before it (neither added nor, by the old side,
    created), in the diff's order."""
    if not patch.strip():
        return []
    paths = []
    for patched in parse_patch(patch):
        if patched.is_added_file:
            continue
        path = patched.source_file
        path = path[2:] if path.startswith("a/") else path
        if path not in paths:
            paths.append(path)
    return paths


def oracle(patch: str, test_patch: str, with_tests: bool) -> list[str]:
    """The golden patch's files, then (``with_tests``) the golden test patch's existing ones."""
    paths = edited_paths(patch)
    if with_tests:
        paths += [path for path in edited_paths(test_patch) if path not in paths]
    return paths
