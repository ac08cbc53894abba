"""Why a test id is in one list and not the other: a named cause with evidence, or unexplained."""

from __future__ import annotations

JUNK_ID = "junk_id"
"""The reference id names no test (pytest's ``[100%]`` progress column, an id without ``::``)."""
XFAIL_EXCLUDED = "xfail_excluded"
"""The test's outcome is declared (xfail/xpass): our grading leaves it out of both lists."""
REFERENCE_EMPTY = "reference_empty"
"""The reference lists of the instance are both empty while ours are not: its run aborted
(e.g. a pytest collection error) before it reported any test."""
UNEXPLAINED = "unexplained"
"""No recognised cause: a real disagreement to look at (environment, flakiness, grading)."""

CAUSES = (JUNK_ID, XFAIL_EXCLUDED, REFERENCE_EMPTY, UNEXPLAINED)
"""Every cause a difference may be given, in the order the table shows them."""


def missing_cause(reference_id: str, *, junk: bool, expected_outcome: bool) -> tuple[str, str]:
    """The cause (and its evidence) of a reference id our list lacks."""
    if junk:
        return JUNK_ID, f"{reference_id!r} is not a test id"
    if expected_outcome:
        return XFAIL_EXCLUDED, "in run_metadata.expected_outcome_tests"
    return UNEXPLAINED, ""


def extra_cause(*, reference_empty: bool) -> tuple[str, str]:
    """The cause (and its evidence) of one of our ids the reference list lacks."""
    if reference_empty:
        return REFERENCE_EMPTY, "FAIL_TO_PASS and PASS_TO_PASS of the reference are both empty"
    return UNEXPLAINED, ""
