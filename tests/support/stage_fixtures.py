"""The fixture project the validation-stage tests build (``make_case`` in
tests/validation/conftest.py): a package with a bug and its tests, the fix, a failing test."""

from __future__ import annotations

from pathlib import Path

from builder.core.records import RunResult, read_jsonl

BACKENDS = ("local", "docker")
"""The backends every drop reason is exercised on."""

CODE = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 2 * x\n"
TESTS = "from pkg import add, double\n\n\ndef test_double():\n    assert double(2) == 4\n"
ADD_TEST = TESTS + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
FIXED = CODE.replace("a - b", "a + b")


def runs_of(outcome) -> list[RunResult]:
    """Every run of a validation, from the runs.jsonl its verdict (kept or dropped) names."""
    return list(read_jsonl(Path(outcome.verdict.evidence["runs"]), RunResult))
