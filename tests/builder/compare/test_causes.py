"""Causes named from the lists alone and from what our runs recorded about tests in neither
of our lists: a test the two sides list in different lists, one our runs skipped, one that
failed before and after the fix here, one of ours the reference lists in neither list."""

from __future__ import annotations

import json

from builder.compare import causes
from builder.compare.instance import compare_labels
from tests.support.instances import make_instance

PATH = "tests/test_stats.py::"


def _labels(instance, fail_to_pass, pass_to_pass):
    return compare_labels(instance, {"FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass})


def _sympy(*pass_to_pass: str, path: str = "sympy/core/tests/test_basic.py::", last: str = ""):
    """A sympy instance: ``test_new`` in FAIL_TO_PASS, ``pass_to_pass`` (names of ``path``'s
    tests, or whole ids) in PASS_TO_PASS; ``last``: the file's last test function, as
    validation records it."""
    last_tests = {path.removesuffix("::"): last} if last else {}
    return make_instance(
        FAIL_TO_PASS=(path + "test_new",),
        PASS_TO_PASS=tuple(t if "::" in t else path + t for t in pass_to_pass),
        run_metadata={"runner": "sympy", "last_tests": json.dumps(last_tests)},
    )


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
    labels = _labels(_sympy("test_a", "test_b"), ("test_new", "test_b"), ("test_a",))
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
            causes.OPTIONAL_PACKAGE,
            "our golden runs skipped it for lack of cdms2, which the reference's environment "
            "evidently had: could not import 'cdms2': No module named 'cdms2'",
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


def test_the_causes_are_counted_artifacts_first_then_environment_differences() -> None:
    order = causes.CAUSES
    assert order == (*causes.AS_DEFINED, *causes.ENVIRONMENT, causes.UNEXPLAINED)
    assert causes.ENVIRONMENT == (
        causes.NEEDS_NETWORK, causes.BEFORE_OUTCOME_DIFFERS, causes.SKIPPED_HERE,
        causes.FAILS_HERE, causes.OPTIONAL_PACKAGE, causes.NOT_PASSED_IN_REFERENCE,
    )  # fmt: skip
    assert not set(causes.AS_DEFINED) & set(causes.ENVIRONMENT)
    assert causes.REFERENCE_RUN_CRASHED in causes.AS_DEFINED


def test_ours_in_neither_reference_list_of_a_file_it_reached_did_not_pass_there() -> None:
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new", PATH + "test_new_here"),
        PASS_TO_PASS=(PATH + "test_old", PATH + "test_old_here"),
        run_metadata={"runner": "sympy"},
    )
    labels = _labels(ours, ("test_new",), ("test_old",))
    found = {
        item["id"]: (item["cause"], item.get("evidence"))
        for name in ("FAIL_TO_PASS", "PASS_TO_PASS")
        for item in labels[name]["extra"]
    }
    assert found == {
        PATH + "test_new_here": (
            causes.NOT_PASSED_IN_REFERENCE,
            "our runs: failed before the fix and passed after it; the reference lists it in "
            "neither list while it lists 2 other test(s) of tests/test_stats.py: its runs did "
            "not see it fail before and pass after (it publishes no run logs that say why)",
        ),
        PATH + "test_old_here": (
            causes.NOT_PASSED_IN_REFERENCE,
            "our runs: passed before and after the fix; the reference lists it in neither list "
            "while it lists 2 other test(s) of tests/test_stats.py: its runs did not pass it "
            "both before and after (it publishes no run logs that say why)",
        ),
    }
    # nothing of the file in the reference: its run may never have reached the file
    other = "sympy/core/tests/test_other.py::test_alone"
    (extra,) = _labels(_sympy(other, path=PATH), ("test_new",), ())["PASS_TO_PASS"]["extra"]
    assert extra["cause"] == causes.REFERENCE_LIST_EMPTY
    alone = _sympy("test_old", other, path=PATH)
    (extra,) = _labels(alone, ("test_new",), ("test_old",))["PASS_TO_PASS"]["extra"]
    assert (extra["cause"], extra.get("evidence")) == (causes.UNEXPLAINED, None)


def test_not_passed_in_reference_comes_after_the_artifacts_that_explain_an_absent_id() -> None:
    path = "sympy/core/tests/test_basic.py::"
    (last,) = _labels(_sympy("test_a", "test_last", last="test_last"), ("test_new",), ("test_a",))[
        "PASS_TO_PASS"
    ]["extra"]
    assert last["cause"] == causes.SYMPY_LAST_TEST
    two_missing = _sympy("test_a", "test_b", "test_c")
    extra = _labels(two_missing, ("test_new",), ("test_a",))["PASS_TO_PASS"]["extra"]
    assert [(item["id"], item["cause"]) for item in extra] == [
        (path + "test_b", causes.NOT_PASSED_IN_REFERENCE),
        (path + "test_c", causes.NOT_PASSED_IN_REFERENCE),
    ]
    empty_list = make_instance(FAIL_TO_PASS=(PATH + "test_new",), PASS_TO_PASS=(PATH + "test_old",))
    (old,) = _labels(empty_list, (PATH + "test_new",), ())["PASS_TO_PASS"]["extra"]
    assert old["cause"] == causes.REFERENCE_LIST_EMPTY


def test_a_pytest_file_with_a_reference_test_ours_lacks_for_no_recorded_reason_is_not_named():
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old", PATH + "test_ours_only"),
        run_metadata=_unlisted(test_skipped="skipped: no cftime"),
    )
    # a reference test our runs skipped: the file's ids agree in form, ours passed there
    skipped = _labels(ours, (PATH + "test_new",), (PATH + "test_old", PATH + "test_skipped"))
    (extra,) = skipped["PASS_TO_PASS"]["extra"]
    assert extra["cause"] == causes.NOT_PASSED_IN_REFERENCE
    # a reference test of the file ours lacks with nothing recorded: perhaps the same test
    # under another id, so the extra one stays a disagreement to look at
    renamed = _labels(ours, (PATH + "test_new",), (PATH + "test_old", PATH + "test_theirs_only"))
    (extra,) = renamed["PASS_TO_PASS"]["extra"]
    assert extra["cause"] == causes.UNEXPLAINED


def test_a_reference_id_of_a_file_the_runs_were_not_given_is_junk() -> None:
    """pytest-7521's reference lists ``test_capsysbinary.py::test_hello``, printed by a nested
    pytester run inside ``testing/test_capture.py``, the one file its test patch touches."""
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata=_unlisted(test_skipped="skipped: no cftime"),
    )
    nested = "test_capsysbinary.py::test_hello"
    labels = _labels(ours, (PATH + "test_new",), (PATH + "test_old", nested, PATH + "test_gone"))
    found = {item["id"]: item for item in labels["PASS_TO_PASS"]["missing"]}
    assert found[nested] == {
        "id": nested,
        "cause": causes.JUNK_ID,
        "evidence": "names a test of test_capsysbinary.py, which is not a file the runs were "
        "given (tests/test_stats.py): a line printed from inside a test (e.g. a nested pytest "
        "run) that the reference's parser read as a result",
    }
    assert found[PATH + "test_gone"]["cause"] == causes.UNEXPLAINED  # a file the runs were given
    # the files our runs reported count as given, whatever the test patch names
    reported = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata={"unlisted_tests": json.dumps({"tests/test_more.py::test_x": "skipped"})},
    )
    (missing,) = _labels(reported, (PATH + "test_new",), ("tests/test_more.py::test_x",))[
        "PASS_TO_PASS"
    ]["missing"]
    assert missing["cause"] == causes.SKIPPED_HERE


def test_a_file_guarded_by_an_optional_import_the_reference_lacks_names_the_package() -> None:
    """astroid's brain tests import numpy in try/except ImportError and skip without it: ours
    ran them (numpy installed here), the reference lists none of the file's tests. Our runs had
    no collection error, so nothing shows the reference's run stopped."""
    numpy_file = "tests/brain/numpy/test_core_umath.py"
    other_file = "tests/brain/test_brain.py"
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old", f"{numpy_file}::test_a", f"{other_file}::test_b"),
        run_metadata={"optional_imports": json.dumps({numpy_file: ["numpy"]})},
    )
    labels = _labels(ours, (PATH + "test_new",), (PATH + "test_old",))
    found = {item["id"]: item for item in labels["PASS_TO_PASS"]["extra"]}
    numpy_test = found[f"{numpy_file}::test_a"]
    assert numpy_test["cause"] == causes.OPTIONAL_PACKAGE
    assert numpy_test["evidence"].startswith(f"{numpy_file} imports numpy only when installed")
    assert "its environment evidently lacked numpy" in numpy_test["evidence"]
    # the same shape with no optional import and no collection error proves no stopped run
    other = found[f"{other_file}::test_b"]
    assert other["cause"] == causes.UNEXPLAINED
    assert "our runs had no collection error, so nothing shows" in other["evidence"]
    assert "collection_abort_files" not in labels


def test_a_skip_for_lack_of_a_guarded_module_names_the_package() -> None:
    """pydicom's tests skip with "Numpy is not available" when their file's guarded import of
    numpy failed: the reason names no module in importorskip's form, the guard names it."""
    pixel = "pydicom/tests/test_numpy_pixel_data.py::"
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata={
            "unlisted_tests": json.dumps(
                {pixel + "test_np": "skipped: Numpy is not available", pixel + "test_x": "skipped"}
            ),
            "optional_imports": json.dumps({pixel[:-2]: ["numpy"]}),
        },
    )
    labels = _labels(
        ours, (PATH + "test_new",), (PATH + "test_old", pixel + "test_np", pixel + "test_x")
    )
    found = {item["id"]: item["cause"] for item in labels["PASS_TO_PASS"]["missing"]}
    assert found == {
        pixel + "test_np": causes.OPTIONAL_PACKAGE,
        pixel + "test_x": causes.SKIPPED_HERE,
    }
    assert causes.missing_module("requires sparse") == "sparse"
    assert causes.missing_module("requires python3.10 or above") == ""
    assert causes.missing_module("slow test") == ""


def test_a_network_test_failing_for_another_reason_too_names_both_causes() -> None:
    """A test whose connection error was caught and then used as Python 2's ``e.message``
    fails with an AttributeError on Python 3 whatever the network: ``needs_network`` is one
    of its causes, not the whole reason. A test failing with the connection error itself has
    that one cause."""
    message = "failed before and after: AttributeError: 'ConnectionError' object has no attribute"
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old",),
        run_metadata={
            "needs_network": json.dumps(
                {PATH + "test_py2": "ConnectionError: Max retries exceeded",
                 PATH + "test_net": "ConnectionError: Max retries exceeded"}
            ),
            "unlisted_tests": json.dumps(
                {PATH + "test_py2": message,
                 PATH + "test_net": "failed before and after: requests.exceptions.ConnectionError: "
                 "HTTPConnectionPool(host='httpbin.org'): Max retries exceeded"}
            ),
        },
    )  # fmt: skip
    labels = _labels(ours, (PATH + "test_new",), (PATH + "test_old", PATH + "test_py2",
                                                   PATH + "test_net"))  # fmt: skip
    found = {item["id"]: item for item in labels["PASS_TO_PASS"]["missing"]}
    py2 = found[PATH + "test_py2"]
    assert py2["cause"] == causes.NEEDS_NETWORK
    assert py2["also"] == [{
        "cause": causes.FAILS_HERE,
        "evidence": "failed before and after the fix in our runs: AttributeError: "
        "'ConnectionError' object has no attribute",
    }]  # fmt: skip
    net = found[PATH + "test_net"]
    assert net["cause"] == causes.NEEDS_NETWORK and "also" not in net


def test_a_stopped_reference_run_and_an_optional_package_are_both_named() -> None:
    """Our runs could not collect one file (so the reference's run without
    --continue-on-collection-errors stopped), and the file whose tests the reference lacks
    imports a GUI package only when installed, which is installed here: both explain the
    difference, so it is no agreement as defined, and it counts among the environment's."""
    gui_file = "tests/test_gui.py"
    broken = "tests/test_broken.py"
    ours = make_instance(
        FAIL_TO_PASS=(PATH + "test_new",),
        PASS_TO_PASS=(PATH + "test_old", f"{gui_file}::test_window"),
        run_metadata={"optional_imports": json.dumps({gui_file: ["PyQt5"]})},
    )
    labels = compare_labels(
        ours,
        {"FAIL_TO_PASS": (PATH + "test_new",), "PASS_TO_PASS": (PATH + "test_old",)},
        collection_errors={"before": [broken], "after": [broken]},
    )
    (item,) = labels["PASS_TO_PASS"]["extra"]
    assert item["cause"] == causes.COLLECTION_ABORT
    assert [other["cause"] for other in item["also"]] == [causes.OPTIONAL_PACKAGE]
    assert "imports PyQt5 only when installed" in item["also"][0]["evidence"]
    assert labels["PASS_TO_PASS"]["jaccard_as_defined"] < 1.0  # not set aside as an artifact
