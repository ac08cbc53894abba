"""Causes named from the lists alone and from what our runs recorded about tests in neither
of our lists: a test the two sides list in different lists, one our runs skipped, one that
failed before and after the fix here."""

from __future__ import annotations

import json

from builder.compare import causes
from builder.compare.instance import compare_labels
from tests.support.instances import make_instance

PATH = "tests/test_stats.py::"


def _labels(instance, fail_to_pass, pass_to_pass):
    return compare_labels(instance, {"FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass})


def test_a_test_in_the_other_list_is_before_outcome_differs_on_both_sides() -> None:
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new", PATH + "test_ours_failed"),
        PASS_TO_PASS=(PATH + "test_old", PATH + "test_theirs_failed"),
    )
    labels = _labels(
        ours,
        (PATH + "test_new", PATH + "test_theirs_failed"),
        (PATH + "test_old", PATH + "test_ours_failed"),
    )
    f2p, p2p = labels["FAIL_TO_PASS"], labels["PASS_TO_PASS"]
    assert [(item["id"], item["cause"]) for item in f2p["extra"] + p2p["missing"]] == [
        (PATH + "test_ours_failed", causes.BEFORE_OUTCOME_DIFFERS)
    ] * 2
    assert [(item["id"], item["cause"]) for item in f2p["missing"] + p2p["extra"]] == [
        (PATH + "test_theirs_failed", causes.BEFORE_OUTCOME_DIFFERS)
    ] * 2
    ours_failed = (
        "ours lists it in FAIL_TO_PASS, the reference in PASS_TO_PASS: "
        "our run before the fix failed it; the reference's passed it"
    )
    theirs_failed = (
        "ours lists it in PASS_TO_PASS, the reference in FAIL_TO_PASS: "
        "the reference's run before the fix failed it; ours passed it"
    )
    assert f2p["extra"][0]["evidence"] == p2p["missing"][0]["evidence"] == ours_failed
    assert f2p["missing"][0]["evidence"] == p2p["extra"][0]["evidence"] == theirs_failed


def test_before_outcome_differs_compares_by_key() -> None:
    ours = make_instance(FAIL_TO_PASS=(PATH + "test_fmt[a b]",), PASS_TO_PASS=(PATH + "test_x",))
    labels = _labels(ours, (PATH + "test_x",), (PATH + "test_fmt[a",))
    assert {item["cause"] for name in ("FAIL_TO_PASS", "PASS_TO_PASS")
            for side in ("missing", "extra") for item in labels[name][side]} == {
        causes.BEFORE_OUTCOME_DIFFERS
    }  # fmt: skip


def test_a_sympy_test_in_the_other_list_is_not_the_reporters_last_test() -> None:
    path = "sympy/core/tests/test_basic.py::"
    ours = make_instance(
        FAIL_TO_PASS=(path + "test_new",),
        PASS_TO_PASS=(path + "test_a", path + "test_b"),
        run_metadata={"runner": "sympy"},
    )
    labels = _labels(ours, ("test_new", "test_b"), ("test_a",))
    (extra,) = labels["PASS_TO_PASS"]["extra"]
    assert extra["cause"] == causes.BEFORE_OUTCOME_DIFFERS


def _unlisted(**outcomes):
    return {"unlisted_tests": json.dumps({PATH + name: text for name, text in outcomes.items()})}


def test_a_reference_test_our_runs_skipped_or_failed_throughout_is_named_with_what_they_saw():
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata=_unlisted(
            test_cdms2="skipped: could not import 'cdms2': No module named 'cdms2'",
            test_bare="skipped",
            test_broken="failed before and after: ImportError: cannot import name 'x'",
            test_quiet="failed before and after",
            test_flaky="flaky",
        ),
    )
    names = ("test_cdms2", "test_bare", "test_broken", "test_quiet", "test_flaky", "test_other")
    labels = _labels(ours, (PATH + "test_new",), (PATH + "test_old", *(PATH + n for n in names)))
    found = {
        item["id"].removeprefix(PATH): (item["cause"], item.get("evidence"))
        for item in labels["PASS_TO_PASS"]["missing"]
    }
    assert found == {
        "test_cdms2": (
            causes.SKIPPED_HERE,
            "our golden runs skipped it: could not import 'cdms2': No module named 'cdms2'",
        ),
        "test_bare": (causes.SKIPPED_HERE, "our golden runs skipped it (no reason given)"),
        "test_broken": (
            causes.FAILS_HERE,
            "failed before and after the fix in our runs: ImportError: cannot import name 'x'",
        ),
        "test_quiet": (causes.FAILS_HERE, "failed before and after the fix in our runs"),
        "test_flaky": (causes.UNEXPLAINED, "our golden runs: flaky"),
        "test_other": (causes.UNEXPLAINED, None),
    }


def test_unlisted_tests_are_matched_by_key_and_come_after_the_other_causes() -> None:
    stdin = "tests/test_self.py::TestRunTC::test_stdin"
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata={
            "unlisted_tests": json.dumps(
                {f"{stdin}[/testbed/tests/m.py-m-/testbed/tests/m.py]": "skipped: no stdin",
                 PATH + "test_old": "skipped: a key ours lists too", PATH + "test_xf": "skipped"}
            ),
            "expected_outcome_tests": json.dumps([PATH + "test_xf"]),
        },
    )  # fmt: skip
    labels = _labels(
        ours, (PATH + "test_new", PATH + "test_old"), (f"{stdin}[/m.py]", PATH + "test_xf")
    )
    found = {
        item["id"]: item["cause"]
        for name in ("FAIL_TO_PASS", "PASS_TO_PASS")
        for item in labels[name]["missing"]
    }
    assert found == {
        f"{stdin}[/m.py]": causes.SKIPPED_HERE,
        PATH + "test_old": causes.BEFORE_OUTCOME_DIFFERS,
        PATH + "test_xf": causes.XFAIL_EXCLUDED,
    }


def test_the_new_causes_are_counted_in_the_tables_order() -> None:
    order = causes.CAUSES
    assert order.index(causes.CUT_COLLISION) < order.index(causes.BEFORE_OUTCOME_DIFFERS)
    assert order[order.index(causes.BEFORE_OUTCOME_DIFFERS) :] == (
        causes.BEFORE_OUTCOME_DIFFERS, causes.SKIPPED_HERE, causes.FAILS_HERE, causes.UNEXPLAINED,
    )  # fmt: skip
