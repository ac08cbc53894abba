"""Token counts with an OpenAI BPE vocabulary shipped in a package (no download at first use)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

from builder.text.errors import TextError

TOKENIZERS = ("cl100k_base", "o200k_base")
CHUNK_CHARS = 900_000
"""A longer text is counted in pieces of at most this many characters, each cut before a
space or a newline where it can be (where its words' tokens start): the package refuses a
text of a million characters."""
"""The vocabularies a budget can be counted in (``bpe-openai`` ships them)."""


@functools.cache
def token_counter(name: str) -> Callable[[str], int]:
    """A function giving the number of tokens of a text in vocabulary ``name``."""
    if name not in TOKENIZERS:
        raise TextError(f"tokenizer {name!r} is not one of {', '.join(TOKENIZERS)}")
    with warnings.catch_warnings():  # its data loader uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding(name)
        encoding.encode_ordinary("")  # loads the vocabulary now

    from bpe_openai.errors import TokenLimitError

    def count_piece(text: str) -> int:
        try:
            return len(encoding.encode_ordinary(text))
        except TokenLimitError as error:  # over the package's 200,000 tokens: counted all the same
            return error.token_count

    def count(text: str) -> int:
        return sum(count_piece(piece) for piece in pieces(text))

    return count


def pieces(text: str, most: int = CHUNK_CHARS) -> list[str]:
    """``text`` in consecutive pieces of at most ``most`` characters, each ending before its
    last space, else its last newline, when it has one in its second half."""
    found, start = [], 0
    while len(text) - start > most:
        end = start + most
        for separator in (" ", "\n"):
            cut = text.rfind(separator, start + most // 2, end)
            if cut != -1:
                end = cut
                break
        found.append(text[start:end])
        start = end
    found.append(text[start:])
    return found
