"""Token counts from vocabularies shipped with a package (no network)."""

import pytest

from builder.text.errors import TextError
from builder.text.tokens import TOKENIZERS, token_counter


@pytest.mark.parametrize("name", TOKENIZERS)
def test_counts_are_the_vocabulary_s(name):
    count = token_counter(name)
    assert count("") == 0
    assert count("hello world") == 2  # " world" is one token in both vocabularies
    assert count("def median(values):\n") < len("def median(values):\n")


def test_a_text_past_the_package_s_chunk_limit_is_counted_not_refused():
    # a file of under 1 MB can pass bpe_openai's 200,000-token limit (sympy's rubi rules do)
    assert token_counter("cl100k_base")("a" + " a" * 250_000) == 250_001


def test_an_unknown_tokenizer_is_a_text_error():
    with pytest.raises(TextError, match="not one of cl100k_base, o200k_base"):
        token_counter("gpt2-large")
