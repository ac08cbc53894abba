"""Record builders for the tests: SWE-bench rows, JSONL files of them, and candidates."""

from __future__ import annotations

import json
from pathlib import Path

from builder.core.records import Candidate
from recipes.swe_bench import make_record as swe_record

__all__ = ["SHA", "candidate", "swe_record", "write_records"]

SHA = "a" * 40


def write_records(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def candidate(**changes) -> Candidate:
    """A valid candidate of ``o/r`` (pull 1, issues 3 and 4); ``changes`` replace its fields."""
    fields = dict(
        instance_id="o__r-1", repo="o/r", base_commit=SHA, patch="p", test_patch="t",
        problem_statement="issue", created_at="2024-01-01T00:00:00Z", source="test",
        issue_numbers=(3, 4),
    )  # fmt: skip
    fields.update(changes)
    return Candidate(**fields)
