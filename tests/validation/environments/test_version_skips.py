"""The golden tests a skip on the Python version would skip, and the Pythons that run them."""

import textwrap

import pytest

from validation.environments.version_skips import VersionSkip, golden_skips, runnable

BASE = textwrap.dedent(
    """\
    import sys
    import unittest

    import pytest


    @pytest.mark.skipif(sys.version_info < (3, 8), reason="3.8+")
    def test_positional_only():
        assert True


    def test_plain():
        assert True


    class TestNew:
        pytestmark = pytest.mark.skipif("sys.version_info >= (3, 11)")

        def test_method(self):
            assert True


    @unittest.skipUnless(sys.version_info[:2] == (3, 9), "3.9 only")
    class TestOld(unittest.TestCase):
        def test_it(self):
            assert True

        @unittest.skipIf(sys.platform == "win32", "not on windows")
        def test_unknown(self):
            assert True


    def test_last():
        pass
    """
)


def _patch(old_line: int, old: str, new: str, count: int = 3, path: str = "tests/test_x.py") -> str:
    """A one-line change at ``old_line`` of BASE with one context line either side."""
    lines = BASE.splitlines()
    before, after = lines[old_line - 2], lines[old_line]
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{old_line - 1},{count} +{old_line - 1},{count} @@\n"
        f" {before}\n-{old}\n+{new}\n {after}\n"
    )


def _read(path):
    return BASE if path == "tests/test_x.py" else None


def test_a_changed_test_under_a_skipif_on_the_version_is_found_with_its_condition():
    # the body of test_positional_only changes; its decorator is no line of the patch
    skips = golden_skips(_patch(9, "    assert True", "    assert 1"), _read)
    assert skips == [
        VersionSkip("tests/test_x.py::test_positional_only", (("cmp", "<", (3, 8), 5),))
    ]
    assert runnable(["3.6", "3.7", "3.8", "3.9"], skips) == ["3.8", "3.9"]


def test_a_changed_test_with_no_skip_on_the_version_changes_nothing():
    assert golden_skips(_patch(13, "    assert True", "    assert 2"), _read) == []
    assert runnable(["3.7", "3.8"], []) == ["3.7", "3.8"]


def test_class_pytestmark_in_pytests_string_form():
    skips = golden_skips(_patch(20, "        assert True", "        assert 3"), _read)
    assert [skip.test for skip in skips] == ["tests/test_x.py::TestNew::test_method"]
    assert runnable(["3.9", "3.10", "3.11", "3.12"], skips) == ["3.9", "3.10"]


def test_unittests_skip_unless_on_a_slice_of_version_info_and_an_unknown_condition():
    skips = golden_skips(_patch(26, "        assert True", "        assert 4"), _read)
    assert runnable(["3.8", "3.9", "3.10"], skips) == ["3.9"]
    # test_unknown's own skip (the platform) is not understood: only the class's counts
    skips = golden_skips(_patch(30, "        assert True", "        assert 5"), _read)
    assert [skip.test for skip in skips] == ["tests/test_x.py::TestOld::test_unknown"]
    assert runnable(["3.8", "3.9"], skips) == ["3.9"]


def test_the_pythons_that_run_the_most_golden_tests_and_all_when_they_tie():
    newer = VersionSkip("a::new", (("cmp", "<", (3, 8), 5),))
    older = VersionSkip("a::old", (("cmp", ">=", (3, 8), 5),))
    assert runnable(["3.7", "3.8"], [newer, older]) == ["3.7", "3.8"]  # one runs on each
    both = VersionSkip("a::both", (("or", (("cmp", "<", (3, 7), 2), ("cmp", ">", (3, 9), 2))),))
    assert runnable(["3.6", "3.7", "3.9", "3.10"], [both]) == ["3.7", "3.9"]
    never = VersionSkip("a::never", (("not", ("cmp", ">=", (3,), 5)),))
    assert runnable(["3.6", "3.12"], [never]) == ["3.6", "3.12"]  # skipped nowhere


def test_a_new_test_file_and_flipped_comparisons_and_and():
    path = "tests/test_new.py"
    text = (
        "import sys, pytest\n"
        "@pytest.mark.skipif((3, 10) > sys.version_info and not sys.version_info >= (3, 2),\n"
        "                    reason='x')\n"
        "def test_new():\n"
        "    pass\n"
    )
    patch = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    patch += f"@@ -0,0 +1,{len(text.splitlines())} @@\n"
    patch += "".join(f"+{line}\n" for line in text.splitlines())
    skips = golden_skips(patch, lambda _: None)
    assert skips == [
        VersionSkip(
            f"{path}::test_new",
            (("and", (("cmp", "<", (3, 10), 5), ("not", ("cmp", ">=", (3, 2), 5)))),),
        )
    ]
    assert runnable(["3.9", "3.10"], skips) == ["3.9", "3.10"]  # 3.2+ everywhere: never skipped


def test_a_hunk_away_from_the_line_it_names_is_found_as_git_apply_finds_it():
    # the base commit has two lines more above the test than the patch was made on
    shifted = "# one\n# two\n" + BASE
    skips = golden_skips(_patch(9, "    assert True", "    assert 1"), lambda _: shifted)
    assert [skip.test for skip in skips] == ["tests/test_x.py::test_positional_only"]
    # forty lines more: the line the header names is no test's; the added line is numbered
    # where the hunk lands, in test_positional_only
    padded = "# pad\n" * 40 + BASE
    skips = golden_skips(_patch(9, "    assert True", "    assert 1"), lambda _: padded)
    assert [skip.test for skip in skips] == ["tests/test_x.py::test_positional_only"]


def test_a_hunk_with_no_context_goes_after_the_line_it_names():
    # diff -U0: "@@ -9,0 +10,1 @@" adds a line after line 9 (test_positional_only's body)
    # and "@@ -12,0 +14,1 @@" one after line 12, the first line of test_plain
    patch = "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -9,0 +10,1 @@\n+    assert 1\n"
    skips = golden_skips(patch, _read)
    assert [skip.test for skip in skips] == ["tests/test_x.py::test_positional_only"]
    plain = "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -12,0 +13,1 @@\n+    assert 2\n"
    assert golden_skips(plain, _read) == []


def test_what_cannot_be_read_gives_nothing():
    change = _patch(9, "    assert True", "    assert 1")
    assert golden_skips(change, lambda _: None) == []  # no such file at the base commit
    assert golden_skips(change, lambda _: BASE.replace("assert True", "assert 0", 1)) == []
    assert golden_skips(change, lambda _: "print 'python 2'\n" + "\n" * 20) == []
    assert golden_skips("not a patch", _read) == []
    # a micro-version bound (3.7.2) says nothing about a minor: not understood
    micro = BASE.replace("(3, 8)", "(3, 7, 2)")
    assert golden_skips(change, lambda _: micro) == []


def test_a_condition_nested_past_the_stack_is_not_understood_and_nothing_crashes():
    # a hostile test patch: a skipif whose condition is 2,000 nested nots parses, but reading
    # it recursively would exhaust the stack; 100,000 do not parse at all
    for depth in (2_000, 100_000):
        condition = "not " * depth + "sys.version_info < (3, 8)"
        text = f"import sys, pytest\n@pytest.mark.skipif({condition})\ndef test_x():\n    pass\n"
        path = "tests/test_deep.py"
        patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,4 @@\n"
        patch += "".join(f"+{line}\n" for line in text.splitlines())
        assert golden_skips(patch, lambda _: None) == []


@pytest.mark.slow
def test_hunks_that_name_the_wrong_lines_over_and_over_are_not_searched_without_end():
    # an untrusted record: twelve hunks near the top of a file of 200,000 lines, each naming
    # its last line; placing them all would compare millions of lines, so the file is taken
    # as not applying (no skips read) instead
    marks = [f"# mark {i}" for i in range(12)]
    test = ["@pytest.mark.skipif(sys.version_info < (3, 8), reason='new')", "def test_x():"]
    filler = ["x = 1"] * 200_000
    text = "\n".join(["import sys, pytest", *marks, *test, "    pass", *filler, ""])
    path = "tests/test_far.py"
    far = len(filler)
    patch = f"--- a/{path}\n+++ b/{path}\n"
    patch += "".join(f"@@ -{far},1 +{far},1 @@\n {mark}\n" for mark in marks)
    patch += f"@@ -{far},2 +{far},3 @@\n def test_x():\n+    y = 1\n     pass\n"
    assert golden_skips(patch, lambda _: text) == []
    # the same change with its hunk at the right line is read
    line = len(marks) + 3
    right = f"--- a/{path}\n+++ b/{path}\n"
    right += f"@@ -{line},2 +{line},3 @@\n def test_x():\n+    y = 1\n     pass\n"
    assert [skip.test for skip in golden_skips(right, lambda _: text)] == [f"{path}::test_x"]
