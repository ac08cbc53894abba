import pytest

from calc.parsing import parse_number, tokenize


def test_parse_int():
    assert parse_number("42") == 42
    assert isinstance(parse_number("42"), int)


def test_parse_float():
    assert parse_number(" 2.5 ") == 2.5


def test_parse_empty_raises():
    with pytest.raises(ValueError):
        parse_number("   ")


def test_tokenize():
    assert tokenize("12 + 3.5*(4-1)") == ["12", "+", "3.5", "*", "(", "4", "-", "1", ")"]
