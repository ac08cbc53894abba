"""The collection abort of a reference pytest run: whole files' tests absent from its lists (or
moved to FAIL_TO_PASS) named as ``collection_abort`` with the files and why, beside other
differences of the same record, on a real SWE-bench record's lists."""

from __future__ import annotations

import json
from pathlib import Path

from builder.compare import causes
from builder.compare.inputs import read_reference
from builder.compare.instance import compare_labels
from builder.compare.run import ALL, compare
from tests.support.instances import make_instance

SAMPLE = Path(__file__).parent / "samples" / "sqlfluff-5170.jsonl"
NEW_FILE = "test/core/parser/match_algorithms_test.py"
"""The file sqlfluff-5170's test patch adds: it imports a module the fix creates, so before the
fix it cannot be collected, and SWE-bench's run before the fix stopped there."""
REF_FILE = "test/core/parser/grammar/grammar_ref_test.py"


def _reference():
    (reference,), unusable = read_reference(str(SAMPLE))
    assert not unusable
    return reference


def _by_file(tests, path):
    return tuple(test for test in tests if test.startswith(path + "::"))


def _causes(items):
    return {item["id"]: item["cause"] for item in items}


def test_a_stop_before_the_fix_moves_other_files_tests_to_fail_to_pass() -> None:
    reference = _reference()
    assert reference.PASS_TO_PASS == ()  # the real record: its run before the fix reported none
    ours_f2p = (*_by_file(reference.FAIL_TO_PASS, NEW_FILE), f"{NEW_FILE}::test_greedy_match")
    moved = tuple(test for test in reference.FAIL_TO_PASS if not test.startswith(NEW_FILE))
    ours = make_instance(
        instance_id=reference.instance_id,
        repo=reference.repo,
        FAIL_TO_PASS=ours_f2p,
        PASS_TO_PASS=moved,
    )
    labels = compare_labels(
        ours,
        {"FAIL_TO_PASS": reference.FAIL_TO_PASS, "PASS_TO_PASS": reference.PASS_TO_PASS},
        {"before": [NEW_FILE]},
    )
    f2p, p2p = labels["FAIL_TO_PASS"], labels["PASS_TO_PASS"]
    assert len(moved) == 9
    assert _causes(f2p["missing"]) == dict.fromkeys(moved, causes.COLLECTION_ABORT)
    assert _causes(p2p["extra"]) == dict.fromkeys(moved, causes.COLLECTION_ABORT)
    # the record's other difference keeps its own cause: a test of a file the reference lists
    assert _causes(f2p["extra"]) == {
        f"{NEW_FILE}::test_greedy_match": causes.NOT_PASSED_IN_REFERENCE
    }
    assert labels["collection_abort_files"] == [
        "test/core/parser/grammar/grammar_base_test.py",
        REF_FILE,
    ]
    evidence = {item["id"]: item["evidence"] for item in p2p["extra"]}
    first = evidence[f"{REF_FILE}::test__parser__grammar__ref_eq"]
    assert f"the reference's PASS_TO_PASS has no test of {REF_FILE} (our PASS_TO_PASS has 3)" in (
        first
    )
    assert "it lists this one as FAIL_TO_PASS" in first
    assert f"our runs had collection errors in {NEW_FILE} (before the fix)" in first
    missing = {item["id"]: item["evidence"] for item in f2p["missing"]}
    assert missing[f"{REF_FILE}::test__parser__grammar__ref_eq"].startswith(
        "passes before and after the fix in our run (PASS_TO_PASS); the reference's "
        f"PASS_TO_PASS has no test of {REF_FILE}"
    )


def test_a_file_absent_from_both_reference_lists_is_a_stopped_run() -> None:
    reference = _reference()
    cut = tuple(test for test in reference.FAIL_TO_PASS if not test.startswith(REF_FILE))
    ours = make_instance(FAIL_TO_PASS=reference.FAIL_TO_PASS, PASS_TO_PASS=())
    labels = compare_labels(ours, {"FAIL_TO_PASS": cut, "PASS_TO_PASS": ()})
    extra = labels["FAIL_TO_PASS"]["extra"]
    assert _causes(extra) == dict.fromkeys(
        _by_file(reference.FAIL_TO_PASS, REF_FILE), causes.COLLECTION_ABORT
    )
    assert extra[0]["evidence"].startswith(
        f"the reference has no test of {REF_FILE} in either list (our FAIL_TO_PASS has 3); "
        "a pytest session stops at a collection error unless run with "
        "--continue-on-collection-errors"
    )
    assert labels["collection_abort_files"] == [REF_FILE]


def test_a_file_the_reference_lists_elsewhere_or_alone_is_not_an_abort() -> None:
    base = "tests/test_stats.py::"
    other = "tests/test_other.py::"
    # our F→P test of a file the reference has in P→P: its run before the fix reached the file
    ours = make_instance(
        FAIL_TO_PASS=(base + "test_even", other + "test_new"), PASS_TO_PASS=(other + "test_old",)
    )
    labels = compare_labels(
        ours, {"FAIL_TO_PASS": (base + "test_even",), "PASS_TO_PASS": (other + "test_old",)}
    )
    assert _causes(labels["FAIL_TO_PASS"]["extra"]) == {
        other + "test_new": causes.NOT_PASSED_IN_REFERENCE
    }
    assert "collection_abort_files" not in labels
    # a reference naming one file only: nothing else shows that its run went on elsewhere, so
    # the test it lists as F→P and ours as P→P is only a difference of the runs before the fix
    ours = make_instance(FAIL_TO_PASS=(base + "test_even",), PASS_TO_PASS=(base + "test_a",))
    labels = compare_labels(
        ours, {"FAIL_TO_PASS": (base + "test_even", base + "test_a"), "PASS_TO_PASS": ()}
    )
    assert _causes(labels["FAIL_TO_PASS"]["missing"]) == {
        base + "test_a": causes.BEFORE_OUTCOME_DIFFERS
    }
    assert "collection_abort_files" not in labels


def test_django_and_sympy_names_are_never_grouped_by_file() -> None:
    ours = make_instance(
        FAIL_TO_PASS=("tests/queries/tests.py::Queries1Tests::test_ticket_1",),
        PASS_TO_PASS=("tests/other/tests.py::OtherTests::test_b",),
        run_metadata={"runner": "django"},
    )
    labels = compare_labels(
        ours,
        {"FAIL_TO_PASS": ("test_ticket_1 (queries.tests.Queries1Tests)",), "PASS_TO_PASS": ()},
    )
    assert _causes(labels["PASS_TO_PASS"]["extra"]) == {  # not a collection abort
        "tests/other/tests.py::OtherTests::test_b": causes.REFERENCE_LIST_EMPTY
    }


def test_the_totals_count_the_cause_and_the_report_row_names_the_files() -> None:
    reference = _reference()
    moved = tuple(test for test in reference.FAIL_TO_PASS if not test.startswith(NEW_FILE))
    ours = make_instance(
        instance_id=reference.instance_id,
        repo=reference.repo,
        FAIL_TO_PASS=_by_file(reference.FAIL_TO_PASS, NEW_FILE),
        PASS_TO_PASS=moved,
    )
    rows = []
    totals = compare(
        [reference],
        {reference.instance_id: ours},
        {},
        None,
        None,
        rows.append,
        {reference.instance_id: {"before": [NEW_FILE]}},
    )
    assert totals[ALL].causes == {causes.COLLECTION_ABORT: 18}
    assert totals[ALL].summary()["causes"][causes.COLLECTION_ABORT] == 18
    assert "collection errors in" in rows[0]["labels"]["PASS_TO_PASS"]["extra"][0]["evidence"]


def test_the_collection_errors_validation_recorded_are_the_evidence(tmp_path: Path) -> None:
    # what `swt-builder compare` has: a released instance, its run_metadata and no run logs
    reference = _reference()
    moved = tuple(test for test in reference.FAIL_TO_PASS if not test.startswith(NEW_FILE))
    ours = make_instance(
        instance_id=reference.instance_id,
        repo=reference.repo,
        FAIL_TO_PASS=_by_file(reference.FAIL_TO_PASS, NEW_FILE),
        PASS_TO_PASS=moved,
        run_metadata={"collection_errors": f'{{"after": [], "before": ["{NEW_FILE}"]}}'},
    )
    compare([reference], {ours.instance_id: ours}, {}, None, tmp_path / "report.json")
    report = json.loads((tmp_path / "report.json").read_text())
    (row,) = report["instances"]
    evidence = [item["evidence"] for item in row["labels"]["PASS_TO_PASS"]["extra"]]
    assert evidence and all(
        f"our runs had collection errors in {NEW_FILE} (before the fix)" in text
        for text in evidence
    )
