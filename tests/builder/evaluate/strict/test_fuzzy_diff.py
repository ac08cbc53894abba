"""Unified diffs applied with tolerance, and never past what they say."""

import subprocess

import pytest

from builder.evaluate.strict.fuzzy_diff import FuzzyPatchError, apply, parse
from builder.evaluate.unified import unified_diff
from tests.support.git import GitRepo

FILE = "".join(f"line {n}\n" for n in range(1, 41))


def patch(hunks, path="f.py"):
    return f"--- a/{path}\n+++ b/{path}\n" + hunks


def run(text, files):
    return apply(parse(text), files.get)


def test_a_correct_diff_gives_what_git_apply_gives(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.commit({"f.py": FILE})
    diff = repo.diff({"f.py": FILE.replace("line 20\n", "line twenty\nline 20.5\n")})
    assert run(diff, {"f.py": FILE})["f.py"] == FILE.replace(
        "line 20\n", "line twenty\nline 20.5\n"
    )


def test_wrong_counts_and_line_numbers_are_hints_only():
    text = patch("@@ -3,99 +3,1 @@\n line 19\n-line 20\n+line XX\n line 21\n")
    assert run(text, {"f.py": FILE})["f.py"] == FILE.replace("line 20\n", "line XX\n")


def test_the_occurrence_nearest_the_hint_wins():
    text = "".join(["x = 1\n", "a\n", "x = 1\n", "b\n"] * 2)
    new = run(patch("@@ -7,1 +7,1 @@\n-x = 1\n+x = 2\n"), {"f.py": text})["f.py"]
    assert new == "".join(["x = 1\n", "a\n", "x = 1\n", "b\n", "x = 1\n", "a\n", "x = 2\n", "b\n"])


def test_whitespace_differences_in_context_are_tolerated_and_the_file_keeps_its_own():
    text = "def f():\n    a = 1  \n    return a\n"
    diff = patch("@@ -1,3 +1,3 @@\n def f():\n     a = 1\n-    return a\n+    return a + 1\n")
    assert run(diff, {"f.py": text})["f.py"] == "def f():\n    a = 1  \n    return a + 1\n"


def test_stale_context_is_dropped_up_to_two_lines_at_each_end():
    diff = patch(
        "@@ -18,7 +18,7 @@\n stale a\n stale b\n line 20\n-line 21\n+line 21!\n"
        " line 22\n stale c\n stale d\n"
    )
    assert run(diff, {"f.py": FILE})["f.py"] == FILE.replace("line 21\n", "line 21!\n")
    too_stale = patch("@@ -18,5 +18,5 @@\n s1\n s2\n s3\n-line 21\n+line 21!\n")
    with pytest.raises(FuzzyPatchError, match="f.py: hunk 1 .*matches nowhere"):
        run(too_stale, {"f.py": FILE})


def test_removed_lines_must_be_found_so_nothing_is_deleted_by_guess():
    with pytest.raises(FuzzyPatchError, match="1 removed lines are not found"):
        run(patch("@@ -1,1 +1,1 @@\n-not in the file\n+x\n"), {"f.py": FILE})


def test_new_files_deleted_files_and_several_files(tmp_path):
    text = (
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_a():\n+    pass\n"
        "\nSome prose between files.\n\n"
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
        + patch("@@ -40 +40,2 @@\n line 40\n+line 41\n")
    )
    files = {"f.py": FILE, "old.py": "gone\n"}
    new = run(text, files)
    assert new == {
        "tests/test_new.py": "def test_a():\n    pass\n",
        "old.py": None,
        "f.py": FILE + "line 41\n",
    }
    repo = GitRepo(tmp_path / "repo")
    repo.commit(files)
    diff = unified_diff(new, files.get)
    subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=repo.path, check=True)
    assert not (repo.path / "old.py").exists()
    assert (repo.path / "f.py").read_text() == FILE + "line 41\n"


def test_a_file_without_a_final_newline_keeps_it_that_way():
    new = run(
        patch("@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"), {"f.py": "a\nb"}
    )
    assert new["f.py"] == "a\nc"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just prose", "no file header"),
        ("--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", "not a relative path"),
        ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "not a relative path"),
        ("--- a/f.py\n+++ b/f.py\nno hunk here\n", "without any '@@' hunk"),
    ],
)
def test_unreadable_diffs_are_named(text, message):
    with pytest.raises(FuzzyPatchError, match=message):
        parse(text)


def test_changing_a_missing_file_is_named():
    with pytest.raises(FuzzyPatchError, match="missing.py: the diff changes a file that does not"):
        run(patch("@@ -1 +1 @@\n-a\n+b\n", path="missing.py"), {})


NEW_FILE = "--- /dev/null\n+++ b/f.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    assert 3\n"
DELETE_PART = "--- a/f.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-line 1\n-line 2\n"


@pytest.mark.parametrize("exact", [True, False])
def test_a_new_file_diff_never_replaces_a_file_that_exists(exact):
    with pytest.raises(FuzzyPatchError, match="f.py: the diff creates f.py, which exists"):
        apply(parse(NEW_FILE), {"f.py": FILE}.get, exact=exact)
    renamed = "--- a/g.py\n+++ b/f.py\n@@ -1 +1 @@\n-g\n+h\n"
    with pytest.raises(FuzzyPatchError, match="renames g.py to f.py, which exists"):
        apply(parse(renamed), {"f.py": FILE, "g.py": "g\n"}.get, exact=exact)


@pytest.mark.parametrize("exact", [True, False])
def test_a_file_is_deleted_only_by_hunks_that_list_all_of_it(exact):
    with pytest.raises(FuzzyPatchError, match="do not list all of it \\(38 lines left\\)"):
        apply(parse(DELETE_PART), {"f.py": FILE}.get, exact=exact)
    whole = "--- a/f.py\n+++ /dev/null\n@@ -1,40 +0,0 @@\n" + "".join(
        f"-{line}\n" for line in FILE.splitlines()
    )
    assert apply(parse(whole), {"f.py": FILE}.get, exact=exact) == {"f.py": None}


@pytest.mark.parametrize("exact", [True, False])
def test_bytes_outside_the_hunk_stay_as_they_were(exact):
    form_feed = "import os\n\x0c\ndef a():\n    return 1\n"
    diff = patch("@@ -3,2 +3,2 @@\n def a():\n-    return 1\n+    return 2\n")
    new = apply(parse(diff), {"f.py": form_feed}.get, exact=exact)["f.py"]
    assert new == "import os\n\x0c\ndef a():\n    return 2\n"
    mixed = "a = 1\r\nb = 2\nc = 3\r\nd = 4\n"
    diff = patch("@@ -3,1 +3,2 @@\n-c = 3\n+c = 30\n+c = 31\n")
    new = apply(parse(diff), {"f.py": mixed}.get, exact=exact)["f.py"]
    assert new == "a = 1\r\nb = 2\nc = 30\nc = 31\nd = 4\n"  # as the line before them


def test_added_lines_end_as_their_neighbours_and_a_crlf_file_stays_crlf():
    crlf = FILE.replace("\n", "\r\n")
    new = run(patch("@@ -20,1 +20,2 @@\n line 20\n+line 20.5\n"), {"f.py": crlf})["f.py"]
    assert new == crlf.replace("line 20\r\n", "line 20\r\nline 20.5\r\n")
    top = run(patch("@@ -0,0 +1,1 @@\n+line 0\n"), {"f.py": crlf})["f.py"]
    assert top == "line 0\r\n" + crlf


def test_an_unended_last_line_gets_an_ending_only_when_lines_follow_it():
    new = run(patch("@@ -2,1 +2,2 @@\n b\n+c\n"), {"f.py": "a\r\nb"})["f.py"]
    assert new == "a\r\nb\r\nc"


def test_strict_mode_checks_hunk_line_counts_against_the_header():
    wrong = patch("@@ -19,4 +19,3 @@\n line 19\n-line 20\n+line XX\n line 21\n")
    with pytest.raises(FuzzyPatchError, match="hunk 1 .* has 3 old and 3 new lines, its header"):
        apply(parse(wrong), {"f.py": FILE}.get, exact=True)
    assert apply(parse(wrong), {"f.py": FILE}.get)["f.py"] == FILE.replace("line 20", "line XX")
    right = patch("@@ -19,3 +19,3 @@\n line 19\n-line 20\n+line XX\n line 21\n")
    assert apply(parse(right), {"f.py": FILE}.get, exact=True)["f.py"] == FILE.replace(
        "line 20", "line XX"
    )


def test_strict_mode_counts_a_trailing_blank_context_line_the_header_counts(tmp_path):
    text = "a = 1\n\nb = 2\n\n"
    repo = GitRepo(tmp_path / "repo")
    repo.commit({"f.py": text})
    diff = repo.diff({"f.py": "a = 1\n\nb = 3\n\n"})  # its last context line is blank
    assert apply(parse(diff), {"f.py": text}.get, exact=True)["f.py"] == "a = 1\n\nb = 3\n\n"
