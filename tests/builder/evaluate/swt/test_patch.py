"""SWT-Bench's patch extraction (vanilla, fuzzy, custom) reproduced, quirks included: each test
names the rule of their extract_patches.py / run_evaluation.py it pins and what their code
gives for its input."""

import tempfile

import pytest

from builder.evaluate.swt.patch import PATCH_TYPES, extract

FIVE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"


def run(text, types, files):
    return extract(text, types, files.get)


def unified(path, hunks, git_header=False):
    head = f"diff --git a/{path} b/{path}\n" if git_header else ""
    return head + f"--- a/{path}\n+++ b/{path}\n" + hunks


# --- vanilla ----------------------------------------------------------------------------------


def test_vanilla_alone_applies_the_raw_diff_with_git_apply():
    """run_instance with ["vanilla"] alone: no extraction, the diff goes to ``git apply -v``;
    theirs changes line 2 and keeps the final newline."""
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n", True)
    result = run(text, ["vanilla"], {"m.py": FIVE})
    assert result.new_texts == {"m.py": FIVE.replace("b = 2\n", "b = 20\n")}
    assert (result.succeeded, result.used) == (True, "vanilla")


def test_vanilla_alone_takes_a_hunk_at_an_offset_as_git_does():
    """git apply finds a hunk whose line numbers are off (an offset): theirs applies the hunk
    that claims lines 2-4 at lines 7-9. (A hunk claiming line 1 must match at the top.)"""
    text = unified("m.py", "@@ -2,3 +2,3 @@\n g = 7\n-h = 8\n+h = 80\n i = 9\n")
    ten = "".join(f"{name} = {n}\n" for n, name in enumerate("abcdefghij", 1))
    result = run(text, ["vanilla"], {"m.py": ten})
    assert result.new_texts == {"m.py": ten.replace("h = 8\n", "h = 80\n")}
    assert result.succeeded
    assert not run(text.replace("-2,3 +2,3", "-1,3 +1,3"), ["vanilla"], {"m.py": ten}).succeeded


def test_vanilla_alone_rejects_a_hunk_whose_lines_do_not_match():
    """git apply allows no fuzz: a removed line that is not in the file fails the patch, and
    nothing changes (theirs: git apply exits 1)."""
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 99\n+b = 20\n c = 3\n")
    result = run(text, ["vanilla"], {"m.py": FIVE})
    assert (result.new_texts, result.succeeded, result.used) == ({}, False, "")
    assert "git apply failed" in result.log


def test_binary_file_diffs_are_removed_before_git_apply():
    """remove_binary_diffs drops every ``diff --git`` part with ``Binary files`` in any line:
    the image's part goes (git apply alone would refuse it: no full index line) and the text
    part applies; a text part that mentions "Binary files" is dropped too, leaving no patch."""
    image = (
        "diff --git a/img.png b/img.png\nindex 1234567..89abcde 100644\n"
        "Binary files a/img.png and b/img.png differ\n"
    )
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n", True)
    result = run(image + text, ["vanilla"], {"m.py": FIVE, "img.png": "PNG"})
    assert result.new_texts == {"m.py": FIVE.replace("b = 2\n", "b = 20\n")}
    assert result.succeeded
    mention = unified(
        "m.py", "@@ -1,2 +1,3 @@\n a = 1\n+# Binary files are skipped\n b = 2\n", True
    )
    assert not run(mention, ["vanilla"], {"m.py": FIVE}).succeeded


def test_vanilla_in_the_script_sees_no_patch_under_8192_bytes():
    """Their apply_patch writes the patch to a NamedTemporaryFile and runs ``git apply`` on it
    unflushed: under 8192 bytes (Python's text chunk) git reads an empty file ("No valid
    patches in input"), so an exact diff that vanilla alone applies fails vanilla in the
    script; from 8192 bytes on git gets it whole. This diff is its own minimal patch."""
    for size, applies in ((8191, False), (8192, True)):
        head = "--- a/m.py\n+++ b/m.py\n@@ -1,1 +1,2 @@\n+# "
        tail = "\n a = 1\n"
        text = head + "x" * (size - len(head) - len(tail)) + tail
        assert len(text.encode()) == size and run(text, ["vanilla"], {"m.py": FIVE}).succeeded
        result = run(text, ["vanilla", "custom"], {"m.py": FIVE})
        assert (result.succeeded, bool(result.new_texts)) == (applies, applies)
    assert result.new_texts == {"m.py": text[len(head) - 2 : -len(tail)] + "\n" + FIVE}


def test_vanilla_in_the_script_keeps_the_changed_lines_and_one_line_after():
    """extract_minimal_patch cuts each hunk to its -/+ lines and the one line after them and
    moves its start past the cut lines: a wrong leading context line fails vanilla alone but
    not vanilla in extract_patches.py (a patch over 8192 bytes, so git sees it), which keeps
    the file's final newline (git apply)."""
    long_line = "# " + "x" * 8200
    hunk = f"@@ -1,4 +1,4 @@\n WRONG\n b = 2\n-c = 3\n+c = 30\n+{long_line}\n d = 4\n"
    text = unified("m.py", hunk)
    assert not run(text, ["vanilla"], {"m.py": FIVE}).succeeded
    result = run(text, ["vanilla", "fuzzy"], {"m.py": FIVE})
    assert result.new_texts == {"m.py": FIVE.replace("c = 3\n", f"c = 30\n{long_line}\n")}
    assert result.used == "vanilla"


# --- fuzzy ------------------------------------------------------------------------------------


def test_fuzzy_places_a_hunk_with_wrong_line_numbers_and_drops_the_final_newline():
    """apply_fuzzy_patches ignores line numbers: the change goes after the best overlap of its
    context before and removed lines, and ends at the best overlap of its context after; the
    file is written as "\\n".join(lines), so theirs has no final newline."""
    text = unified("m.py", "@@ -50,3 +50,3 @@\n b = 2\n-c = 3\n+c = 30\n d = 4\n")
    result = run(text, ["fuzzy"], {"m.py": FIVE})
    assert result.new_texts == {"m.py": "a = 1\nb = 2\nc = 30\nd = 4\ne = 5"}
    assert (result.succeeded, result.used) == (True, "fuzzy")


def test_fuzzy_without_context_after_replaces_the_rest_of_the_file():
    """With no context line after the change, its end stays at the file's end: theirs cuts
    everything after the inserted lines (lines c to e are lost)."""
    text = unified("m.py", "@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20\n")
    assert run(text, ["fuzzy"], {"m.py": FIVE}).new_texts == {"m.py": "a = 1\nb = 20"}


def test_fuzzy_reads_files_with_universal_newlines_and_writes_lf():
    """Their open(file) turns CRLF into LF and the rewrite joins with "\\n": every line of a
    CRLF file changes, the final newline goes."""
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert run(text, ["fuzzy"], {"m.py": "a\r\nb\r\nc\r\n"}).new_texts == {"m.py": "a\nB\nc"}


# --- custom -----------------------------------------------------------------------------------


def test_custom_rewrite_replaces_every_definition_of_the_name_at_any_depth():
    """ReplaceFunctionTransformer swaps every FunctionDef named as the block's function, a
    method in a class and a module-level function alike, but no AsyncFunctionDef; theirs
    re-emits the module with ast.unparse."""
    files = {
        "m.py": "class A:\n    def f(self):\n        return 1\n\n\n"
        "async def f():\n    pass\n\n\ndef f():\n    return 2\n"
    }
    block = "diff\nm.py\nrewrite\n2\n    def f(self):\n        return 3\nend diff\n"
    result = run(block, ["custom"], files)
    assert result.new_texts == {
        "m.py": "class A:\n\n    def f(self):\n        return 3\n\n"
        "async def f():\n    pass\n\ndef f(self):\n    return 3"
    }
    assert (result.succeeded, result.used) == (True, "custom")


def test_custom_insert_goes_to_the_module_end_in_string_order_of_the_line():
    """Inserts are appended to the module body whatever their line (BOF, a line inside a
    class, even for a method with ``self``), in the order of the blocks sorted by their line
    as a string: "10" < "5" < "9" < "BOF"."""
    files = {"m.py": "import os\n\n\nclass A:\n    pass\n"}
    blocks = [
        ("9", "x = 9"),
        ("10", "x = 10"),
        ("BOF", "import sys"),
        ("5", "    def g(self):\n        return 1"),
    ]
    text = "".join(f"diff\nm.py\ninsert\n{line}\n{code}\nend diff\n" for line, code in blocks)
    assert run(text, ["custom"], files).new_texts == {
        "m.py": "import os\n\nclass A:\n    pass\nx = 10\n\n"
        "def g(self):\n    return 1\nx = 9\nimport sys"
    }


def test_custom_insert_creates_a_new_file():
    """A missing file is read as "" (their FileNotFoundError branch): an insert creates it."""
    block = "diff\ntests/test_new.py\ninsert\n1\nimport m\n\ndef test_x():\n    assert m\nend diff"
    result = run(block, ["custom"], {})
    assert result.new_texts == {"tests/test_new.py": "import m\n\ndef test_x():\n    assert m"}
    assert result.succeeded


def test_custom_block_without_end_diff_loses_its_last_line():
    """extract_custom_patches stops a block without ``end diff`` at the text's last line,
    which it leaves out: theirs inserts y and drops z."""
    text = "diff\nm.py\ninsert\nEOF\ny = 2\nz = 3"
    assert run(text, ["custom"], {"m.py": "x = 1\n"}).new_texts == {"m.py": "x = 1\ny = 2"}


def test_custom_syntax_error_in_a_block_fails_and_changes_nothing():
    """A block that does not parse makes apply_custom_patches return False before the file is
    written: no change, no success."""
    text = "diff\nm.py\ninsert\n1\ndef broken(:\nend diff\n"
    result = run(text, ["custom"], {"m.py": "x = 1\n"})
    assert (result.new_texts, result.succeeded) == ({}, False)


def test_custom_output_is_ast_unparse_so_comments_and_formatting_are_lost():
    """The file is written as ast.unparse gives it: comments, blank lines and the final newline
    go, even for a plain insert."""
    text = "diff\nm.py\ninsert\nEOF\ny = 2\nend diff\n"
    files = {"m.py": "# header\n\nx = 1  # one\n"}
    assert run(text, ["custom"], files).new_texts == {"m.py": "x = 1\ny = 2"}


def test_custom_failure_in_a_later_file_keeps_the_earlier_file_but_reports_failure():
    """Each file is written before the next is read: a rewrite of a name b.py lacks returns
    False after a.py was rewritten, and ``git diff`` still holds a.py."""
    files = {"a.py": "def f():\n    return 1\n", "b.py": "def g():\n    return 1\n"}
    text = (
        "diff\na.py\nrewrite\n1\ndef f():\n    return 2\nend diff\n"
        "diff\nb.py\nrewrite\n2\ndef h():\n    return 2\nend diff\n"
    )
    result = run(text, ["custom"], files)
    assert result.new_texts == {"a.py": "def f():\n    return 2"}
    assert (result.succeeded, result.used) == (False, "")


def test_custom_unknown_action_changes_nothing_but_the_file_is_still_unparsed():
    """A block whose action is neither rewrite nor insert is skipped, yet the file is written
    back through ast.unparse and the try succeeds: theirs reformats m.py."""
    text = "diff\nm.py\nreplace\n1\ny = 2\nend diff\n"
    result = run(text, ["custom"], {"m.py": "# c\nx  =  1\n"})
    assert (result.new_texts, result.succeeded) == ({"m.py": "x = 1"}, True)


def test_custom_writes_a_new_file_only_where_a_directory_is_or_insert_made_one():
    """Only insert mkdirs the parent: a new file with another action is written as "" where
    its directory exists, and their open() raises (the script stops, nothing is extracted)
    where it does not; a block naming a directory raises too (IsADirectoryError)."""
    text = "diff\npkg/new.py\nreplace\n1\ny = 2\nend diff\n"

    def made_dirs(path):
        return path == "pkg"

    made = extract(text, ["custom"], {}.get, is_dir=made_dirs)
    assert (made.new_texts, made.succeeded) == ({"pkg/new.py": ""}, True)
    missing = extract(text, ["custom"], {}.get, is_dir=lambda path: False)
    assert (missing.new_texts, missing.succeeded) == ({}, False)
    assert "FileNotFoundError" in missing.log
    inserted = extract(text.replace("replace", "insert"), ["custom"], {}.get)
    assert inserted.new_texts == {"pkg/new.py": "y = 2"}
    into_dir = extract(text.replace("pkg/new.py", "pkg"), ["custom"], {}.get, is_dir=made_dirs)
    assert (into_dir.new_texts, "IsADirectoryError" in into_dir.log) == ({}, True)


# --- the script's flow ------------------------------------------------------------------------


def test_types_are_tried_in_order_until_one_succeeds():
    """run() tries vanilla (git apply fails: the removed line differs) then fuzzy, which places
    the change anyway; fuzzy is the type used."""
    text = unified("m.py", "@@ -50,3 +50,3 @@\n b = 2\n-c = 33\n+c = 30\n d = 4\n")
    result = run(text, ["vanilla", "fuzzy"], {"m.py": FIVE})
    assert result.new_texts == {"m.py": "a = 1\nb = 2\nc = 30\nd = 4\ne = 5"}
    assert (result.succeeded, result.used) == (True, "fuzzy")
    assert [line.split(":")[0] for line in result.log.splitlines()] == ["vanilla", "fuzzy"]


def test_a_failed_try_leaves_its_writes_in_the_extracted_patch():
    """The checkout is not reset between tries and ``git diff`` is taken whatever the flag:
    fuzzy rewrites m.py, fails on the missing gone.py, custom finds no block; the extracted
    patch still changes m.py."""
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n") + unified(
        "gone.py", "@@ -1,1 +1,1 @@\n-x\n+y\n z\n"
    )
    result = run(text, ["fuzzy", "custom"], {"m.py": FIVE})
    assert result.new_texts == {"m.py": "a = 1\nb = 20\nc = 3\nd = 4\ne = 5"}
    assert (result.succeeded, result.used) == (False, "")


def test_a_try_that_would_raise_extracts_nothing():
    """A rewrite block without code makes their ``patch_ast.body[0]`` raise IndexError: the
    script exits non-zero, so the harness extracts "" and fuzzy's earlier write is lost."""
    text = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n") + unified(
        "gone.py", "@@ -1,1 +1,1 @@\n-x\n+y\n z\n"
    )
    result = run(text + "diff\nm.py\nrewrite\n1\nend diff\n", ["fuzzy", "custom"], {"m.py": FIVE})
    assert (result.new_texts, result.succeeded, result.used) == ({}, False, "")
    assert "IndexError" in result.log


def test_a_new_file_diff_is_applied_by_vanilla_alone_but_lost_in_the_script():
    """Their file-diff pattern needs ``--- a/``: a ``--- /dev/null`` diff is invisible to the
    minimal patch and to fuzzy, so the script extracts only the other file's change, while
    vanilla alone gives both to git apply."""
    new_file = (
        "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    pass\n"
    )
    change = unified("m.py", "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n", True)
    alone = run(change + new_file, ["vanilla"], {"m.py": FIVE})
    assert sorted(alone.new_texts) == ["m.py", "tests/test_new.py"]
    script = run(change + new_file, ["vanilla", "fuzzy", "custom"], {"m.py": FIVE})
    assert (sorted(script.new_texts), script.used) == (["m.py"], "fuzzy")


def test_new_files_git_ignores_are_left_out():
    """The extracted patch is ``git add -A; git diff``: a new file that .gitignore ignores is
    not in it, though the custom try succeeded."""
    text = "diff\nbuild/gen.py\ninsert\n1\nx = 1\nend diff\n"
    result = run(text, ["custom"], {".gitignore": "build/\n"})
    assert (result.new_texts, result.succeeded) == ({}, True)
    assert run(text, ["custom"], {}).new_texts == {"build/gen.py": "x = 1"}


@pytest.mark.parametrize(
    "types, text",
    [
        (["vanilla"], unified("../../evil.py", "@@ -1,1 +1,1 @@\n-x = 0\n+x = 1\n")),
        (["fuzzy"], unified("../../evil.py", "@@ -1,1 +1,1 @@\n-x = 0\n+x = 1\n")),
        (["custom"], "diff\n../../evil.py\ninsert\n1\nx = 1\nend diff\n"),
        (["custom"], "diff\n{tmp}/evil.py\ninsert\n1\nx = 1\nend diff\n"),
    ],
)
def test_a_path_leaving_the_repository_fails_without_writing_outside(
    types, text, tmp_path, monkeypatch
):
    """Their code would write ../../evil.py (or an absolute path) outside the checkout; ours
    fails the prediction and writes nothing, not even beside its scratch repositories (made
    in tmp_path here, so ../../evil.py from one of them is tmp_path/evil.py)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = extract(text.format(tmp=tmp_path), types, lambda path: "x = 0\n")
    assert (result.new_texts, result.succeeded, result.used) == ({}, False, "")
    assert list(tmp_path.iterdir()) == []


def test_unknown_or_missing_patch_types_are_refused():
    """Their extract_patches.py takes ``--patch_type`` with nargs="+" and choices vanilla,
    fuzzy, custom: anything else, or none, never runs (argparse exits), so it is an error."""
    assert PATCH_TYPES == ("vanilla", "fuzzy", "custom")
    with pytest.raises(ValueError, match="unknown patch type"):
        extract("", ["exact"], {}.get)
    with pytest.raises(ValueError, match="no patch type"):
        extract("", [], {}.get)
