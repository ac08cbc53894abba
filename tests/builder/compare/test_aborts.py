"""A reference pytest run that stopped part way: whole files' tests absent from its lists named
``collection_abort`` when our runs' collection errors show why, every test listed as failing
named ``reference_run_crashed``, beside other differences of the same record, on a real
SWE-bench record's lists."""

from __future__ import annotations

import dataclasses
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


def test_a_reference_listing_every_test_as_failing_is_a_crashed_run() -> None:
    """sqlfluff-5170: the reference's run before the fix stopped at the new file's collection
    error and reported nothing, so it lists all 14 tests (three files) as FAIL_TO_PASS."""
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
    )
    f2p, p2p = labels["FAIL_TO_PASS"], labels["PASS_TO_PASS"]
    assert len(moved) == 9
    assert _causes(f2p["missing"]) == dict.fromkeys(moved, causes.REFERENCE_RUN_CRASHED)
    assert _causes(p2p["extra"]) == dict.fromkeys(moved, causes.REFERENCE_RUN_CRASHED)
    # the record's other difference keeps its own cause: a test of a file the reference lists
    assert _causes(f2p["extra"]) == {
        f"{NEW_FILE}::test_greedy_match": causes.NOT_PASSED_IN_REFERENCE
    }
    assert f2p["missing"][0]["evidence"].startswith(
        "the reference lists all 14 of its tests (3 files) as FAIL_TO_PASS and none as "
        "PASS_TO_PASS, 9 of which our runs pass before the fix: its run before the fix crashed"
    )
    assert "collection_abort_files" not in labels
    # an artifact: the list agrees as defined
    assert f2p["jaccard_as_defined"] < 1.0  # the not-passed test stays a difference
    assert p2p["jaccard_as_defined"] == 1.0


def _stopped_after():
    """The record with the tests of grammar_ref_test.py absent from both reference lists (a
    stop after the fix), ours listing them all as FAIL_TO_PASS."""
    reference = _reference()
    cut = tuple(test for test in reference.FAIL_TO_PASS if not test.startswith(REF_FILE))
    ours = make_instance(
        instance_id=reference.instance_id,
        repo=reference.repo,
        FAIL_TO_PASS=reference.FAIL_TO_PASS,
        PASS_TO_PASS=(),
    )
    return dataclasses.replace(reference, FAIL_TO_PASS=cut), ours


def test_a_file_absent_from_both_reference_lists_is_a_stopped_run_with_evidence() -> None:
    reference, ours = _stopped_after()
    lists = {"FAIL_TO_PASS": reference.FAIL_TO_PASS, "PASS_TO_PASS": ()}
    labels = compare_labels(ours, lists, {"after": [NEW_FILE]})
    extra = labels["FAIL_TO_PASS"]["extra"]
    assert _causes(extra) == dict.fromkeys(
        _by_file(ours.FAIL_TO_PASS, REF_FILE), causes.COLLECTION_ABORT
    )
    assert extra[0]["evidence"].startswith(
        f"the reference has no test of {REF_FILE} in either list (our FAIL_TO_PASS has 3); "
        f"our runs had collection errors in {NEW_FILE} (after the fix): a pytest session "
        "stops at a collection error unless run with --continue-on-collection-errors"
    )
    assert labels["collection_abort_files"] == [REF_FILE]
    # the same shape where our runs collected everything: nothing proves a stopped run
    labels = compare_labels(ours, lists)
    extra = labels["FAIL_TO_PASS"]["extra"]
    assert _causes(extra) == dict.fromkeys(
        _by_file(ours.FAIL_TO_PASS, REF_FILE), causes.UNEXPLAINED
    )
    assert "our runs had no collection error, so nothing shows" in extra[0]["evidence"]
    assert "collection_abort_files" not in labels


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
    reference, ours = _stopped_after()
    rows = []
    totals = compare(
        [reference],
        {reference.instance_id: ours},
        {},
        None,
        None,
        rows.append,
        {reference.instance_id: {"after": [NEW_FILE]}},
    )
    assert totals[ALL].causes == {causes.COLLECTION_ABORT: 3}
    assert totals[ALL].summary()["causes"][causes.COLLECTION_ABORT] == 3
    assert rows[0]["labels"]["collection_abort_files"] == [REF_FILE]
    assert "collection errors in" in rows[0]["labels"]["FAIL_TO_PASS"]["extra"][0]["evidence"]


def test_the_collection_errors_validation_recorded_are_the_evidence(tmp_path: Path) -> None:
    # what `swt-builder compare` has: a released instance, its run_metadata and no run logs
    reference, ours = _stopped_after()
    ours = ours.model_copy(
        update={"run_metadata": {"collection_errors": f'{{"after": ["{NEW_FILE}"], "before": []}}'}}
    )
    compare([reference], {ours.instance_id: ours}, {}, None, tmp_path / "report.json")
    report = json.loads((tmp_path / "report.json").read_text())
    (row,) = report["instances"]
    evidence = [item["evidence"] for item in row["labels"]["FAIL_TO_PASS"]["extra"]]
    assert len(evidence) == 3 and all(
        f"our runs had collection errors in {NEW_FILE} (after the fix)" in text for text in evidence
    )
