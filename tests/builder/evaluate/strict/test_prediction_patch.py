"""A prediction's patch: format found, test files kept, or a named reason it cannot run."""

import pytest

from builder.evaluate.strict.prediction_patch import PatchFormat, prepare

FILES = {
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    ),
}
NEW_TEST = "\ndef test_add_negative():\n    assert add(-1, -2) == -3\n"


def unified(path, old_line, new_line, start=5):
    return f"--- a/{path}\n+++ b/{path}\n@@ -{start},1 +{start},2 @@\n {old_line}\n+{new_line}\n"


def test_an_exact_unified_diff_is_read_as_unified():
    text = unified("tests/test_calc.py", "    assert add(1, 2) == 3", "    assert add(0, 0) == 0")
    prepared = prepare(text, FILES.get)
    assert prepared.applicable and prepared.format is PatchFormat.UNIFIED
    assert prepared.test_files == ("tests/test_calc.py",) and not prepared.edits_code
    assert "+    assert add(0, 0) == 0\n" in prepared.diff


def test_a_diff_that_needs_tolerance_is_fuzzy_unless_unified_is_required():
    text = unified("tests/test_calc.py", "    assert add(1,2) == 3", "    assert add(0, 0) == 0")
    assert prepare(text, FILES.get).format is PatchFormat.FUZZY
    strict = prepare(text, FILES.get, requested="unified")
    assert not strict.applicable and "hunk 1" in strict.not_applicable


def test_the_function_level_format_is_detected():
    text = f"diff\ntests/test_calc.py\ninsert\nEOF\n{NEW_TEST}end diff\n"
    prepared = prepare(text, FILES.get)
    assert prepared.format is PatchFormat.FUNCTION
    assert "+def test_add_negative():\n" in prepared.diff


def test_code_edits_are_flagged_and_left_out_unless_asked():
    text = (
        f"diff\npkg/calc.py\nrewrite\n1\ndef add(a, b):\n    return b + a\nend diff\n"
        f"diff\ntests/test_calc.py\ninsert\nEOF\n{NEW_TEST}end diff\n"
    )
    prepared = prepare(text, FILES.get)
    assert prepared.edits_code and prepared.code_files == ("pkg/calc.py",)
    assert "pkg/calc.py" not in prepared.diff and "tests/test_calc.py" in prepared.diff
    both = prepare(text, FILES.get, tests_only=False)
    assert "pkg/calc.py" in both.diff and both.edits_code


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the patch is empty"),
        ("  \n", "the patch is empty"),
        ("no diff at all", "no file header"),
        ("--- a/../../etc/x\n+++ b/../../etc/x\n@@ -1 +1 @@\n-a\n+b\n", "leaves the repository"),
        ("diff\n/etc/passwd\ninsert\nEOF\nx = 1\nend diff\n", "relative path inside"),
        (
            "diff --git a/tests/t.py b/tests/t.py\nnew file mode 120000\n--- /dev/null\n"
            "+++ b/tests/t.py\n@@ -0,0 +1 @@\n+/etc/passwd\n",
            "symbolic link",
        ),
        ("diff --git a/t.bin b/t.bin\nGIT binary patch\nliteral 3\nabc\n", "binary file"),
        ("x" * 2_000_001, "more than the 2000000 allowed"),
        ("--- a/tests/t.py\n+++ b/tests/t.py\n@@ -1 +1 @@\n-\ud800\n+b\n", "not valid UTF-8"),
        (unified("pkg/calc.py", "    return a + b", "    # more"), "changes no test file"),
        (
            "diff\ntests/test_calc.py\nrewrite\n1\ndef test_zzz():\n    pass\nend diff\n",
            "no definition",
        ),
    ],
)
def test_what_cannot_run_says_why(text, reason):
    prepared = prepare(text, FILES.get)
    assert not prepared.applicable and reason in prepared.not_applicable
    assert prepared.diff == ""


def test_a_patch_that_changes_nothing_is_not_applicable():
    header = "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
    text = header + "@@ -1 +1 @@\n from pkg.calc import add\n"
    assert prepare(text, FILES.get).not_applicable == "the patch changes nothing"


def test_an_unknown_format_request_is_a_caller_error():
    with pytest.raises(ValueError, match="patch format 'git'"):
        prepare("x", FILES.get, requested="git")
