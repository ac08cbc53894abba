"""Untrusted Python source read as a syntax tree: what cannot be read is None, never a crash."""

import ast

from builder.core.python_source import parse, skip_mark


def test_source_that_parses_gives_its_tree():
    tree = parse("import os\nx = 1\n")
    assert isinstance(tree, ast.Module) and len(tree.body) == 2
    expression = parse("sys.version_info < (3, 8)", mode="eval")
    assert isinstance(expression, ast.Expression)


def test_bad_syntax_a_null_byte_and_nesting_past_the_parser_give_none():
    assert parse("def (:\n") is None
    assert parse("x = 1\0\n") is None
    assert parse("not " * 100_000 + "x") is None  # the parser's stack: MemoryError
    assert parse("not " * 5_000 + "x") is None  # RecursionError during ast construction
    assert parse("(" * 300 + "x" + ")" * 300) is None


def test_a_skip_marks_name_and_condition_in_either_form():
    def mark(source):
        found = skip_mark(parse(source, mode="eval").body)
        return None if found is None else (found[0], ast.unparse(found[1]))

    assert mark("pytest.mark.skipif(not has_x, reason='x')") == ("skipif", "not has_x")
    assert mark("pytest.mark.skipif('sys.version_info < (3, 8)')") == (
        "skipif",
        "sys.version_info < (3, 8)",
    )
    assert mark("unittest.skipUnless(HAS, 'x')") == ("skipUnless", "HAS")
    assert mark("skipIf(flag)") == ("skipIf", "flag")
    assert mark("pytest.mark.xfail(flag)") is None
    assert mark("pytest.mark.skipif()") is None
    assert mark("pytest.mark.skipif('not (')") is None  # a string that does not parse
