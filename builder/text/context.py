"""The repository context of a prompt: whole files with numbered lines, chosen in rank order
within a token budget."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence


def numbered(path: str, text: str) -> str:
    """One file as a prompt shows it (SWE-bench's ``make_code_text``): ``[start of path]``,
    the text split at ``\\n`` only (as git and the harness count lines) with each line's
    number from 1 in front, ``[end of path]``."""
    body = "\n".join(f"{number} {line}" for number, line in enumerate(text.split("\n"), 1))
    return f"[start of {path}]\n{body}\n[end of {path}]"


def code_text(files: Sequence) -> str:
    """The blocks of ``files`` (objects with ``path`` and ``text``) one per line, in order."""
    return "\n".join(numbered(file.path, file.text) for file in files)


@dataclasses.dataclass(frozen=True)
class Context:
    """The files chosen (in rank order) and the tokens of their blocks."""

    paths: tuple[str, ...]
    tokens: int


def select(
    ranked: Iterable[str],
    texts: Mapping[str, str],
    budget: int,
    count: Callable[[str, str], int],
) -> Context:
    """Whole files in rank order while they fit: a file whose block, with the line that
    joins it to the others, does not fit in what is left of ``budget`` is skipped and the
    next ones are tried; never a cut file. ``count`` gives the tokens of a path's block
    (``numbered``). Paths not in ``texts`` (deleted, binary, excluded) are skipped."""
    chosen, used = [], 0
    for path in ranked:
        if path not in texts or path in chosen:
            continue
        if texts[path].count("\n") > budget - used:  # a numbered line is one token at least
            continue
        tokens = count(path, numbered(path, texts[path])) + 1
        if used + tokens > budget:
            continue
        chosen.append(path)
        used += tokens
    return Context(tuple(chosen), used)
