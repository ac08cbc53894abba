"""The pure parts of benchmarks/swt_parity.py: cases made from an instance's fields, and
report diffs."""

from __future__ import annotations

import ast

from benchmarks import swt_parity as parity

BASE = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def check(name):\n    return name\n",
    "tests/test_core.py": (
        "import pytest\n\nfrom pkg.core import check\n\n\n"
        "def test_same():\n    assert check('a') == 'a'\n\n\n"
        "class TestCheck:\n    def test_old(self):\n        assert check('b') == 'b'\n"
    ),
}
CODE_PATCH = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,8 @@
+class EmptyName(ValueError):
+    pass
+
+
 def check(name):
+    if not name:
+        raise EmptyName(name)
     return name
"""
TEST_PATCH = """diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -7,6 +7,11 @@ def test_same():
     assert check('a') == 'a'
{BLANK}
{BLANK}
+def test_empty():
+    with pytest.raises(ValueError):
+        check('')
+
+
 class TestCheck:
     def test_old(self):
         assert check('b') == 'b'
""".replace("{BLANK}", " ")  # a context line that is empty: one space, as diff writes it
INSTANCE = {
    "instance_id": "o__p-1",
    "repo": "o/p",
    "patch": CODE_PATCH,
    "test_patch": TEST_PATCH,
    "FAIL_TO_PASS": '["tests/test_core.py::test_empty"]',
}


def _read(path: str) -> str | None:
    return BASE.get(path)


def _after(patch: str) -> dict[str, str | None]:
    return parity.apply_texts(_read, patch)


def test_every_case_is_made_from_the_instance_fields():
    cases = parity.make_cases(INSTANCE, _read)
    assert set(cases) == set(parity.CASES)
    assert cases["gold"] == parity.Case(TEST_PATCH)
    assert cases["empty"] == parity.Case("")
    made = {k: v for k, v in cases.items() if isinstance(v, parity.Case)}
    # every vanilla case but inverted (its code part undoes the fix) is a diff git applies to
    # the base files
    for name, case in made.items():
        if case.patch_types == ("vanilla",) and case.patch and name != "inverted":
            assert _after(case.patch), name


def test_inverted_undoes_the_fix_and_code_edit_makes_it():
    cases = parity.make_cases(INSTANCE, _read, ["inverted", "code-edit"])
    fixed = parity.apply_texts(_read, CODE_PATCH)["pkg/core.py"]
    inverted = cases["inverted"].patch
    assert "-    if not name:" in inverted and "+def test_empty():" in inverted
    assert parity.apply_texts(lambda p: fixed if p == "pkg/core.py" else _read(p),
                              inverted.split("diff --git a/pkg")[0])  # fmt: skip
    assert cases["code-edit"].patch == TEST_PATCH + CODE_PATCH


def test_rebinding_cases_wrap_the_right_tests():
    cases = parity.make_cases(INSTANCE, _read, ["inverted-outcome", "breaks-existing",
                                                "skip-then-pass"])  # fmt: skip
    texts = {name: _after(case.patch)["tests/test_core.py"] for name, case in cases.items()}
    assert texts["inverted-outcome"].endswith("test_empty = _swt_parity_inverted(test_empty)\n")
    # an existing test of the file, not the F2P one
    assert texts["breaks-existing"].endswith("test_same = _swt_parity_broken(test_same)\n")
    skip = texts["skip-then-pass"]
    assert "'class EmptyName(ValueError):' in handle.read()" in skip
    assert skip.endswith("test_empty = _swt_parity_skip_before_fix(test_empty)\n")
    for text in texts.values():
        ast.parse(text)


def test_custom_cases_use_their_format():
    cases = parity.make_cases(INSTANCE, _read, ["custom-insert", "custom-rewrite",
                                                "custom-method", "custom-raw"])  # fmt: skip
    insert = cases["custom-insert"]
    assert insert.patch_types == ("vanilla", "fuzzy", "custom")
    assert insert.patch == (
        "diff\ntests/test_core.py\ninsert\nEOF\ndef test_empty():\n"
        "    with pytest.raises(ValueError):\n        check('')\nend diff\n"
    )
    # the existing test before the new one, rewritten as it (renamed)
    assert cases["custom-rewrite"].patch.startswith(
        "diff\ntests/test_core.py\nrewrite\n6\ndef test_same():\n    with pytest.raises"
    )
    # made a method of the file's Test* class, at its last line
    assert cases["custom-method"].patch.startswith(
        "diff\ntests/test_core.py\ninsert\n17\ndef test_empty(self):\n"
    )
    raw = cases["custom-raw"].patch
    assert insert.patch in raw and raw.startswith("Here are tests")


def test_new_files_cases():
    cases = parity.make_cases(INSTANCE, _read, ["uncollectable", "new-api"])
    uncollectable = _after(cases["uncollectable"].patch)
    assert uncollectable["tests/test_swt_parity_uncollectable.py"].startswith(
        "from pkg.core import _swt_parity_missing_name\n"
    )
    assert uncollectable["tests/test_core.py"] == _after(TEST_PATCH)["tests/test_core.py"]
    new_api = _after(cases["new-api"].patch)
    assert set(new_api) == {"tests/test_swt_parity_new_api.py"}
    text = new_api["tests/test_swt_parity_new_api.py"]
    assert "from pkg.core import EmptyName\n" in text and "def test_empty():" in text


def test_a_case_that_cannot_be_made_says_why():
    plain = {**INSTANCE, "FAIL_TO_PASS": ["tests/test_core.py::TestCheck::test_gone"]}
    cases = parity.make_cases(plain, _read, ["custom-insert", "inverted-outcome"])
    assert cases["custom-insert"] == parity.NotMade("no F2P test is a new top-level function")
    assert isinstance(cases["inverted-outcome"], parity.NotMade)


def test_f2p_ids():
    assert parity.f2p_parts("a/t.py::C::test_x[p-1]") == ("a/t.py", "C", "test_x")
    assert parity.f2p_parts("a/t.py::test_y") == ("a/t.py", None, "test_y")
    assert parity.f2p_parts("test_issue_1") == (None, None, "test_issue_1")
    assert parity.f2p_parts("test_z (app.tests.ZTest)") == (None, "ZTest", "test_z")


def test_diff_of_two_reports():
    ours = {"resolved": True, "coverage_pred": 0.5, "tests_pred": {"FAIL_TO_PASS": ["a", "b"]}}
    theirs = {"resolved": True, "coverage_pred": 0.25, "tests_pred": {"FAIL_TO_PASS": ["b", "a"]},
              "added_f2p": 1}  # fmt: skip
    assert parity.diff_reports(ours, ours) == []
    assert parity.diff_reports(ours, theirs) == [
        {"field": "added_f2p", "ours": "<absent>", "theirs": 1},
        {"field": "coverage_pred", "ours": 0.5, "theirs": 0.25},
    ]
    theirs["tests_pred"]["FAIL_TO_PASS"] = ["a", "c"]
    assert parity.diff_reports(ours, theirs)[-1] == {
        "field": "tests_pred.FAIL_TO_PASS",
        "ours_only": ["b"],
        "theirs_only": ["c"],
    }
    assert parity.diff_reports({"x": 1}, {"x": True}) == [{"field": "x", "ours": 1, "theirs": True}]


def test_table_values_read_both_sides_tables():
    ours = "| Method | m |\n|---|---|\n| F->P | 50.0 |\n| Δ | 0.0 |\n"
    theirs = (
        "|-------------------|-----|\n| Method | m |\n| F->P              | 50.0 |\n| Δ | 0 |\n"
    )
    assert (
        parity.table_values(ours)
        == parity.table_values(theirs)
        == {"Method": "m", "F->P": "50.0", "Δ": "0.0"}
    )
    assert parity.table_cells(theirs)["Δ"] == "0"


def test_unrounded_values_are_compared_with_their_printed_floats():
    """Their report.py prints floats as tabulate does (34.04255319148936, an int 0); ours
    prints one decimal, so the values behind our table are compared with theirs unrounded."""
    theirs = (
        "|-----|-----|\n| Method | gold |\n| Applicability (W) | 100.0 |\n"
        "| Coverage Delta (Δᵃˡˡ) | 34.04255319148936 |\n"
        "| Coverage Delta Unresolved (Δⁿᵒᵗ ᔆ) | 0 |\n"
    )
    ours = {"Applicability (W)": 100.0, "Coverage Delta (Δᵃˡˡ)": 34.04255319148936,
            "Coverage Delta Unresolved (Δⁿᵒᵗ ᔆ)": 0.0}  # fmt: skip
    assert parity.same_values(ours, theirs)
    assert not parity.same_values({**ours, "Coverage Delta (Δᵃˡˡ)": 34.0}, theirs)  # as printed
    assert not parity.same_values({"Applicability (W)": 100.0}, theirs)  # a row missing
