"""The SWE-bench-format source: JSONL, parquet, datasets dirs; malformed rows are named drops."""

import json

import datasets
import pytest

from builder.core.records import DropReason
from recipes.swe_bench import SourceError, swe_bench_candidates, to_candidate
from tests.support.records import swe_record, write_records

SHA = "b" * 40


def _outcomes(location, split="test"):
    return [outcome for _, outcome in swe_bench_candidates(str(location), split)]


def test_jsonl_with_malformed_and_duplicate_rows(tmp_path):
    good = swe_record("o/r", 1, SHA, "p", "t", FAIL_TO_PASS='["a.py::t"]')
    path = write_records(tmp_path / "r.jsonl", [good, {**good, "base_commit": ""}, good])
    with path.open("a") as handle:
        handle.write("not json\n[1, 2]\n")
        handle.write(json.dumps({**good, "instance_id": "o__r-9", "created_at": 5}) + "\n")
    outcomes = _outcomes(path)
    reasons = [o.verdict.reason for o in outcomes]
    assert reasons == [
        None,
        DropReason.MALFORMED_RECORD,
        DropReason.DUPLICATE_INSTANCE,
        DropReason.MALFORMED_RECORD,
        DropReason.MALFORMED_RECORD,
        DropReason.MALFORMED_RECORD,
    ]
    assert "base_commit" in outcomes[1].verdict.evidence["error"]
    assert outcomes[1].verdict.evidence["origin"] == "r.jsonl:2"
    assert "not JSON" in outcomes[3].verdict.evidence["error"]
    assert "created_at" in outcomes[5].verdict.evidence["error"]
    candidate = outcomes[0].output
    assert candidate.pull_number == 1 and candidate.reference_fail_to_pass == ("a.py::t",)


def test_lists_may_be_json_text_or_lists_and_dates_may_be_timestamps():
    import datetime as dt

    record = swe_record("o/r", 7, SHA, "p", "t", FAIL_TO_PASS=["x"], PASS_TO_PASS="")
    record["created_at"] = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    candidate = to_candidate(record)
    assert candidate.reference_fail_to_pass == ("x",)
    assert candidate.reference_pass_to_pass == ()
    assert candidate.created_at == "2024-05-06T07:08:09Z"


def test_parquet_file_and_saved_dataset_dir(tmp_path):
    rows = [swe_record("o/r", n, SHA, "p", "t") for n in (1, 2)]
    table = datasets.Dataset.from_list(rows)
    table.to_parquet(str(tmp_path / "rows.parquet"))
    datasets.DatasetDict({"dev": table}).save_to_disk(str(tmp_path / "saved"))
    assert [o.output.instance_id for o in _outcomes(tmp_path / "rows.parquet")] == [
        "o__r-1",
        "o__r-2",
    ]
    assert len(_outcomes(tmp_path / "saved", split="dev")) == 2


def test_unreadable_sources_raise(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        _outcomes(tmp_path / "absent.jsonl")
    with pytest.raises(SourceError):
        _outcomes("plainname")


def test_text_that_is_not_utf8_is_a_malformed_record_and_the_rest_is_read(tmp_path):
    good = swe_record("o/r", 1, SHA, "p", "t")
    surrogate = json.dumps({**swe_record("o/r", 2, SHA, "p", "t"), "problem_statement": "\ud800"})
    assert "\\ud800" in surrogate  # valid JSON: the lone surrogate is an escape
    hint = json.dumps({**swe_record("o/r", 3, SHA, "p", "t"), "hints_text": "x\udcff"})
    invalid = json.dumps(
        swe_record("o/r", 4, SHA, "p", "t", problem_statement="caf\u00e9"), ensure_ascii=False
    )
    invalid = invalid.encode().replace("\u00e9".encode(), b"\xe9")  # Latin-1, not UTF-8
    assert b"caf\xe9" in invalid
    path = tmp_path / "r.jsonl"
    lines = [json.dumps(good).encode(), surrogate.encode(), hint.encode(), invalid]
    lines.append(json.dumps(swe_record("o/r", 5, SHA, "p", "t")).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    outcomes = _outcomes(path)
    assert [o.verdict.reason for o in outcomes] == [None, *[DropReason.MALFORMED_RECORD] * 3, None]
    evidence = [o.verdict.evidence for o in outcomes[1:4]]
    assert [e["origin"] for e in evidence] == ["r.jsonl:2", "r.jsonl:3", "r.jsonl:4"]
    assert "problem_statement" in evidence[0]["error"] and "UTF-8" in evidence[0]["error"]
    assert "hints_text" in evidence[1]["error"]
    assert "not UTF-8" in evidence[2]["error"]
    assert [o.output.instance_id for o in (outcomes[0], outcomes[4])] == ["o__r-1", "o__r-5"]


def test_parquet_rows_follow_the_same_utf8_rule(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [swe_record("o/r", n, SHA, "p", "t") for n in (1, 2)]
    texts = [row["problem_statement"].encode() for row in rows]
    texts[0] = b"caf\xe9"  # not UTF-8, in a binary column
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    table = pa.table({**columns, "problem_statement": pa.array(texts, type=pa.binary())})
    pq.write_table(table, tmp_path / "rows.parquet")
    outcomes = _outcomes(tmp_path / "rows.parquet")
    assert [o.verdict.reason for o in outcomes] == [DropReason.MALFORMED_RECORD, None]
    assert outcomes[0].verdict.evidence["origin"] == "rows.parquet[0]"
    assert "problem_statement: not UTF-8" in outcomes[0].verdict.evidence["error"]
    assert outcomes[1].output.problem_statement == "Issue 2: something is wrong."
