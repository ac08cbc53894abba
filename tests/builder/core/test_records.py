"""Records are strict, versioned and round-trip through JSONL; Instance rows match SWE-bench."""

import json

import pytest
from pydantic import ValidationError

from builder.core.records import (
    SCHEMA_VERSION,
    SWE_BENCH_COLUMNS,
    Candidate,
    DropReason,
    Instance,
    RunResult,
    TestStatus,
    Verdict,
    read_jsonl,
    write_jsonl,
)
from tests.support.records import SHA
from tests.support.records import candidate as _candidate


def _instance():
    return Instance(
        instance_id="o__r-1", repo="o/r", base_commit=SHA, patch="p", test_patch="t",
        problem_statement="issue", hints_text="", created_at="2024-01-01T00:00:00Z",
        version="1.0", environment_setup_commit=SHA, FAIL_TO_PASS=("t.py::a",),
        PASS_TO_PASS=("t.py::b", "t.py::c"), pull_number=1, issue_numbers=(3,),
        issue_created_at=("2023-12-01T00:00:00Z",), merged_at=None, run_metadata={"k": "v"},
    )  # fmt: skip


def test_jsonl_round_trip(tmp_path):
    records = [_candidate(), _candidate(instance_id="o__r-2", hints_text="h")]
    path = tmp_path / "c.jsonl"
    assert write_jsonl(path, records) == 2
    assert list(read_jsonl(path, Candidate)) == records
    run = RunResult(
        side="before", repetition=0, command=("pytest",), exit_code=1, timed_out=False,
        duration_s=0.5, report_found=True, tests={"t.py::a": TestStatus.FAILED}, log_path="l",
    )  # fmt: skip
    assert RunResult.from_json(run.to_json()) == run
    verdict = Verdict(stage="s", reason=DropReason.TIMEOUT, evidence={"log": "x"})
    assert Verdict.from_json(verdict.to_json()) == verdict and not verdict.kept


def test_strict_types_and_unknown_fields_are_rejected():
    with pytest.raises(ValidationError):
        _candidate(pull_number="12")  # a string is not an int in strict mode
    with pytest.raises(ValidationError):
        _candidate(base_commit="not-a-sha")
    with pytest.raises(ValidationError):
        Candidate.from_json(_candidate().to_json()[:-1] + ',"surprise":1}')


def test_other_schema_version_is_refused():
    data = json.loads(_candidate().to_json())
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValidationError, match="schema_version"):
        Candidate.model_validate(data)


def test_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(_candidate().to_json() + "\n{}\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:2"):
        list(read_jsonl(path, Candidate))


def test_instance_row_has_swe_bench_columns_first_with_json_lists():
    row = _instance().to_row()
    assert tuple(row)[: len(SWE_BENCH_COLUMNS)] == SWE_BENCH_COLUMNS
    assert json.loads(row["FAIL_TO_PASS"]) == ["t.py::a"]
    assert json.loads(row["PASS_TO_PASS"]) == ["t.py::b", "t.py::c"]
    assert row["issue_numbers"] == [3] and json.loads(row["run_metadata"]) == {"k": "v"}


def test_status_classes_are_explicit():
    assert {s for s in TestStatus if s.is_pass} == {TestStatus.PASSED}
    assert {s for s in TestStatus if s.is_fail} == {
        TestStatus.FAILED, TestStatus.ERROR, TestStatus.MISSING,
    }  # fmt: skip
    assert {s for s in TestStatus if s.is_expected_outcome} == {TestStatus.XFAIL, TestStatus.XPASS}
    assert not TestStatus.SKIPPED.is_pass and not TestStatus.SKIPPED.is_fail


def test_dict_fields_serialize_in_key_order():
    first = _instance().model_copy(update={}).to_json()
    shuffled = Instance.model_validate_json(
        first.replace('"run_metadata":{"k":"v"}', '"run_metadata":{"z":"1","a":"2"}')
    )
    assert list(shuffled.run_metadata) == ["a", "z"]
    verdict = Verdict(stage="s", evidence={"z": "1", "a": "2"})
    assert verdict.to_json().index('"a"') < verdict.to_json().index('"z"')


def test_serialized_field_order_is_fixed():
    """Stored records and exported rows rely on this order: SWE-bench's columns first."""
    problem = list(SWE_BENCH_COLUMNS[:-2])
    provenance = ["pull_number", "issue_numbers", "issue_created_at", "merged_at"]
    assert list(Candidate.model_fields) == [
        "schema_version", *problem, *provenance,
        "source", "reference_fail_to_pass", "reference_pass_to_pass",
    ]  # fmt: skip
    assert list(Instance.model_fields) == [
        "schema_version", *SWE_BENCH_COLUMNS, *provenance,
        "golden_coverage", "stats", "run_metadata",
    ]  # fmt: skip
    assert list(json.loads(_instance().to_json())) == list(Instance.model_fields)


def test_an_instance_carries_its_candidates_problem_and_provenance():
    candidate = _candidate(hints_text="h", pull_number=7, merged_at="2024-01-02T00:00:00Z",
                           issue_created_at=("2023-12-01T00:00:00Z",), version="0.9",
                           reference_fail_to_pass=("t.py::a",))  # fmt: skip
    instance = Instance.from_candidate(
        candidate, version="1.0", environment_setup_commit="b" * 40,
        FAIL_TO_PASS=("t.py::a",), PASS_TO_PASS=(), golden_coverage=1.0,
    )  # fmt: skip
    assert instance.version == "1.0"  # what validation found wins
    assert instance.environment_setup_commit == "b" * 40
    shared = set(Instance.model_fields) & set(Candidate.model_fields) - {
        "version", "environment_setup_commit"
    }  # fmt: skip
    assert len(shared) == 13  # schema_version, 8 problem fields, 4 of provenance
    assert all(getattr(instance, name) == getattr(candidate, name) for name in shared)
    assert instance.hints_text == "h" and instance.pull_number == 7
    assert instance.issue_numbers == (3, 4)
    assert Instance.from_json(instance.to_json()) == instance
    with pytest.raises(ValidationError):
        Instance.from_candidate(candidate, PASS_TO_PASS=())  # FAIL_TO_PASS is required
    with pytest.raises(ValidationError):
        Instance.from_candidate(candidate, FAIL_TO_PASS=(), PASS_TO_PASS=(), source="x")


@pytest.mark.parametrize(
    "instance_id", ["../../x", "/abs/x", "a/b", "..", "a..b", ".x", "-x", "x\n", "", "a" * 201]
)
def test_instance_ids_must_be_one_safe_path_component(instance_id):
    with pytest.raises(ValidationError, match="instance_id"):
        _candidate(instance_id=instance_id)


@pytest.mark.parametrize("instance_id", ["o__r-1", "django__django-11099", "A.b_c-9", "a" * 200])
def test_swe_bench_style_ids_are_safe(instance_id):
    assert _candidate(instance_id=instance_id).instance_id == instance_id


def test_text_fields_must_be_utf8():
    for field in ("problem_statement", "patch", "hints_text"):
        with pytest.raises(ValidationError, match=f"{field}(.|\n)*UTF-8"):
            _candidate(**{field: "a\ud800"})
    with pytest.raises(ValidationError, match="reference_fail_to_pass"):
        _candidate(reference_fail_to_pass=("t\udcff",))


def test_a_line_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(_candidate().to_json().encode() + b"\n" + b'{"x": "\xff"}\n')
    with pytest.raises(ValueError, match=r"c.jsonl:2: not a valid Candidate"):
        list(read_jsonl(path, Candidate))
