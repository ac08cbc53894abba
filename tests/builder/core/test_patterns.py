"""Configured patterns run by RE2: linear in the text, and what RE2 cannot run is named."""

import pytest

from builder.core.patterns import PatternError, linear


def test_a_pattern_is_compiled_once_and_finds_as_python_s_would():
    pattern = linear(r"(?i)\S+\.(?:png|gif)\b")
    assert pattern is linear(r"(?i)\S+\.(?:png|gif)\b")
    assert pattern.search("see shot.PNG now").group(0) == "shot.PNG"
    assert pattern.search("a" * 100_000) is None


def test_what_re2_cannot_run_is_a_pattern_error_naming_the_syntax():
    with pytest.raises(PatternError, match=r"'\(a\)\\\\1'.*RE2 syntax"):
        linear(r"(a)\1")
