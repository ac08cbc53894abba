"""The function-level diff format: parsing with precise errors, rewrite and insert semantics."""

import pytest

from builder.evaluate.strict.function_diff import FormatError, apply, looks_like, parse

MODULE = '''"""A module."""
from __future__ import annotations

import os


def helper(x):
    # keep this comment
    return x + 1


class Box:
    """A box."""

    @property
    def size(self):
        return 1

    def helper(self):
        return 2


def tail():
    return os.sep
'''


def block(path, action, position, code):
    return f"diff\n{path}\n{action}\n{position}\n{code.rstrip()}\nend diff\n"


def run(prediction, files):
    return apply(parse(prediction), files.get)


def test_rewrite_replaces_only_the_named_function():
    new = run(block("m.py", "rewrite", 7, "def helper(x):\n    return x + 2"), {"m.py": MODULE})
    old_body = "    # keep this comment\n    return x + 1"
    assert new["m.py"] == MODULE.replace(old_body, "    return x + 2")


def test_an_exact_name_wins_and_the_line_number_chooses_among_several():
    code = "def helper(self):\n    return 3"
    new = run(block("m.py", "rewrite", 19, code), {"m.py": MODULE})["m.py"]
    assert "    def helper(self):\n        return 3\n" in new  # the method, re-indented
    assert "def helper(x):\n    # keep this comment\n    return x + 1\n" in new
    near_top = run(block("m.py", "rewrite", 1, code), {"m.py": MODULE})["m.py"]
    above = MODULE.split("def helper(x)")[0]
    assert near_top.startswith(above + "def helper(self):\n    return 3\n")


def test_decorators_belong_to_the_rewritten_span():
    code = "@property\ndef size(self):\n    return 5"
    new = run(block("m.py", "rewrite", 15, code), {"m.py": MODULE})["m.py"]
    assert new.count("@property") == 1
    assert "    @property\n    def size(self):\n        return 5\n" in new


def test_no_exact_name_falls_back_to_the_definition_around_the_line():
    new = run(block("m.py", "rewrite", 24, "def tail2():\n    return 0"), {"m.py": MODULE})
    assert new["m.py"].endswith("def tail2():\n    return 0\n")
    with pytest.raises(FormatError, match="block 1: no definition named 'nothing'"):
        run(block("m.py", "rewrite", "EOF", "def nothing():\n    pass"), {"m.py": MODULE})


def test_insert_at_bof_goes_after_the_docstring_and_future_imports():
    new = run(block("m.py", "insert", "BOF", "import sys"), {"m.py": MODULE})["m.py"]
    assert new.startswith('"""A module."""\nfrom __future__ import annotations\n\nimport sys\n')


def test_insert_at_eof_and_at_a_line_lands_on_a_statement_boundary():
    new = run(block("m.py", "insert", "EOF", "def test_x():\n    assert tail()"), {"m.py": MODULE})
    assert new["m.py"] == MODULE + "\ndef test_x():\n    assert tail()\n"
    inside_a_function = run(block("m.py", "insert", 8, "X = 1"), {"m.py": MODULE})["m.py"]
    assert "\nX = 1\n\ndef helper(x):" in inside_a_function
    assert "    # keep this comment\n    return x + 1\n" in inside_a_function


def test_insert_creates_a_new_file():
    new = run(block("tests/test_new.py", "insert", "BOF", "def test_a():\n    assert 1"), {})
    assert new == {"tests/test_new.py": "def test_a():\n    assert 1\n"}


def test_blocks_of_one_file_apply_in_order_and_prose_around_them_is_ignored():
    text = (
        "Here is my change:\n```\n"
        + block("m.py", "insert", "EOF", "def test_a():\n    pass")
        + "```\nand another\n"
        + block("m.py", "rewrite", 7, "def helper(x):\n    return 0")
    )
    assert looks_like(text)
    new = run(text, {"m.py": MODULE})["m.py"]
    assert new.endswith("def test_a():\n    pass\n") and "    return 0\n" in new


def test_crlf_files_keep_their_line_endings():
    crlf = MODULE.replace("\n", "\r\n")
    new = run(block("m.py", "rewrite", 7, "def helper(x):\n    return 9"), {"m.py": crlf})["m.py"]
    assert "def helper(x):\r\n    return 9\r\n" in new and "\n" not in new.replace("\r\n", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nothing here", "no block found"),
        ("diff\nm.py\n", "block 1: expected a path, 'rewrite' or 'insert', and a line number"),
        (
            "diff\nm.py\nreplace\n3\ncode\nend diff\n",
            "block 1: expected 'rewrite' or 'insert' on line 3, found 'replace'",
        ),
        (
            "diff\nm.py\ninsert\nnear the top\ncode\nend diff\n",
            "block 1: expected a line number, BOF or EOF on line 4",
        ),
        ("diff\nm.py\ninsert\n3\ncode\n", "block 1: no 'end diff'"),
        (
            block("m.py", "insert", 1, "x = 1") + "diff\nm.py\ninsert\n2\ny\n",
            "block 2: no 'end diff'",
        ),
        (
            "diff\n../etc/passwd\ninsert\nEOF\nx\nend diff\n",
            "block 1: expected a relative path inside",
        ),
        ("diff\n/abs/m.py\ninsert\nEOF\nx\nend diff\n", "block 1: expected a relative path inside"),
        ("diff\nm.py\ninsert\nEOF\n\nend diff\n", "block 1: no code"),
    ],
)
def test_malformed_blocks_are_named_with_what_was_expected(text, message):
    with pytest.raises(FormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


def test_rewrite_errors_name_the_block():
    with pytest.raises(FormatError, match="block 1: rewrite in new.py, which does not exist"):
        run(block("new.py", "rewrite", 1, "def f():\n    pass"), {})
    with pytest.raises(FormatError, match="block 1: rewrite needs a whole function or class"):
        run(block("m.py", "rewrite", 1, "x = 1"), {"m.py": MODULE})
    with pytest.raises(FormatError, match="block 1: the code to rewrite is not valid Python"):
        run(block("m.py", "rewrite", 1, "def f(:\n"), {"m.py": MODULE})
    with pytest.raises(FormatError, match="block 1: broken.py is not valid Python"):
        run(block("broken.py", "rewrite", 1, "def f():\n    pass"), {"broken.py": "def (\n"})


@pytest.mark.parametrize("separator", ["\x0c", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x85"])
def test_lines_are_counted_as_ast_counts_them(separator):
    text = (
        f'X = "a{separator}b"\n# {separator}\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n'
    )
    new = run(block("m.py", "rewrite", 3, "def b():\n    return 20"), {"m.py": text})["m.py"]
    assert new == text.replace("return 2\n", "return 20\n")


def test_a_form_feed_line_between_definitions_stays():
    text = "import os\n\x0c\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    new = run(block("m.py", "rewrite", 7, "def b():\n    return 20"), {"m.py": text})["m.py"]
    assert new == text.replace("return 2\n", "return 20\n")
    inserted = run(block("m.py", "insert", 7, "Y = 2"), {"m.py": text})["m.py"]
    assert inserted == text.replace("\n\n\ndef b", "\n\n\nY = 2\n\ndef b")


TESTS = '''import pytest


class TestA:
    """Tests of A."""

    def test_one(self):
        assert 1

    @staticmethod
    def helper():
        return 1


def test_module():
    pass
'''


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("    def test_two(self):\n        assert 3", ""),  # indented in the block
        ("def test_two(self):\n    assert 3", ""),  # takes self
        ("@pytest.mark.slow\ndef test_two(cls):\n    assert 3", "    @pytest.mark.slow\n"),
    ],
)
def test_a_method_inserted_at_a_line_in_a_class_goes_into_the_class(code, expected):
    new = run(block("t.py", "insert", 9, code), {"t.py": TESTS})["t.py"]
    signature = "    def test_two(cls):\n" if "cls" in code else "    def test_two(self):\n"
    method = expected + signature + "        assert 3\n"
    # line 9 is the blank line after test_one; the nearest member boundary is below it
    assert new == TESTS.replace("        assert 1\n\n", "        assert 1\n\n" + method + "\n")


def test_a_method_goes_to_the_member_boundary_nearest_the_line():
    code = "def test_two(self):\n    assert 3"
    at_end = run(block("t.py", "insert", 12, code), {"t.py": TESTS})["t.py"]
    assert "        return 1\n\n    def test_two(self):\n        assert 3\n\n\ndef test_module" in (
        at_end
    )
    after_docstring = run(block("t.py", "insert", 5, code), {"t.py": TESTS})["t.py"]
    assert '"""Tests of A."""\n\n    def test_two(self):\n        assert 3\n\n    def test_one' in (
        after_docstring
    )


def test_module_level_code_at_a_line_in_a_class_stays_at_the_top_level():
    new = run(block("t.py", "insert", 8, "def test_free():\n    assert 3"), {"t.py": TESTS})
    assert "\ndef test_free():\n    assert 3\n\nclass TestA:" in new["t.py"]
    at_module = run(
        block("t.py", "insert", 16, "    def test_two(self):\n        pass"), {"t.py": TESTS}
    )["t.py"]
    assert "\ndef test_two(self):\n    pass\n\ndef test_module" in at_module
