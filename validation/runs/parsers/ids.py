"""Our test ids in the forms SWE-bench's FAIL_TO_PASS / PASS_TO_PASS lists use, per runner."""

from __future__ import annotations

from validation.runs.parsers import django, sympy, unittest


def swe_bench_id(test_id: str, kind: str) -> str:
    """Our test id in the form SWE-bench's FAIL_TO_PASS lists use for runner ``kind``
    (pytest node ids are already that form), for comparing with official records."""
    converters = {"django": django.swe_bench_id, "sympy": sympy.swe_bench_id,
                  "unittest": unittest.swe_bench_id}  # fmt: skip
    return converters[kind](test_id) if kind in converters else test_id
