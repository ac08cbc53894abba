"""Parse unified diffs with unidiff whatever their line endings, LF or CRLF."""

from __future__ import annotations

from unidiff import PatchSet


def lf_lines(text: str) -> str:
    """``text`` with each CRLF line end read as LF: what the parsers here are given.

    A patch stored with CRLF line ends (every line, headers too) is one ``git apply`` takes
    as it is: git drops the CR of its header lines, and content lines keep theirs to match
    a CRLF file. unidiff keeps the CR in what it parses instead, so every path would end in
    ``\\r`` (``tests/test_a.py\\r`` is no ``*.py`` file). Only this parsed copy loses the CRs;
    the patch applied is the one given."""
    return text.replace("\r\n", "\n")


def parse_patch(text: str) -> PatchSet:
    """unidiff's PatchSet of ``text`` (raises unidiff's UnidiffParseError), CRLF read as LF."""
    return PatchSet(lf_lines(text))
