"""swt-builder compare: labels against a reference per runner's id form, named causes of each
difference, keep/drop agreement with exclusion lists, the JSON report and the CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.cli import main
from builder.compare import causes, decisions
from builder.compare.ids import is_junk, our_key, reference_key
from builder.compare.inputs import Drop, Reference, read_reference
from builder.compare.instance import compare_labels
from builder.compare.run import ALL, compare
from builder.core.records import write_jsonl
from tests.support.instances import make_instance
from tests.support.records import swe_record, write_records

SAMPLES = Path(__file__).parent / "samples" / "swe-bench-verified-2.jsonl"
F2P = ("tests/test_stats.py::test_even",)
P2P = ("tests/test_stats.py::test_existing",)


def _labels(instance, fail_to_pass=F2P, pass_to_pass=P2P):
    return compare_labels(instance, {"FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass})


def test_identical_pytest_lists_are_exact() -> None:
    labels = _labels(make_instance())
    assert labels["FAIL_TO_PASS"] == {
        "exact": True, "jaccard": 1.0, "jaccard_as_defined": 1.0, "missing": [], "extra": [],
    }  # fmt: skip
    assert labels["PASS_TO_PASS"]["exact"] is True


def test_a_missing_and_an_extra_id_are_named_and_unexplained() -> None:
    ours = make_instance(PASS_TO_PASS=(*P2P, "tests/test_stats.py::test_ours_only"))
    labels = _labels(ours, pass_to_pass=(*P2P, "tests/test_stats.py::test_theirs_only"))
    p2p = labels["PASS_TO_PASS"]
    assert p2p["missing"] == [
        {"id": "tests/test_stats.py::test_theirs_only", "cause": causes.UNEXPLAINED}
    ]
    assert p2p["extra"] == [{"id": "tests/test_stats.py::test_ours_only", "cause": "unexplained"}]
    assert p2p["exact"] is False and p2p["jaccard"] == pytest.approx(1 / 3)
    assert p2p["jaccard_as_defined"] == pytest.approx(1 / 3)  # nothing set aside
    assert labels["FAIL_TO_PASS"]["exact"] is True


def test_sympy_ids_compare_as_bare_names() -> None:
    ours = make_instance(
        FAIL_TO_PASS=("sympy/geometry/tests/test_point.py::test_issue_11617",),
        PASS_TO_PASS=("sympy/geometry/tests/test_point.py::test_point3D",),
        run_metadata={"runner": "sympy"},
    )
    labels = _labels(ours, ("test_issue_11617",), ("test_point3D",))
    assert labels["FAIL_TO_PASS"]["exact"] and labels["PASS_TO_PASS"]["exact"]


def test_sympys_missing_last_test_of_a_file_is_named_by_its_pattern() -> None:
    path = "sympy/core/tests/test_basic.py::"
    other = "sympy/core/tests/test_other.py::"
    alone = "sympy/core/tests/test_alone.py::"
    ours = make_instance(
        FAIL_TO_PASS=(path + "test_new",),
        PASS_TO_PASS=(
            path + "test_a", path + "test_z", other + "test_b", other + "test_c",
            other + "test_d", alone + "test_e",
        ),
        run_metadata={"runner": "sympy", "last_tests": json.dumps({path[:-2]: "test_z"})},
    )  # fmt: skip
    labels = _labels(ours, ("test_new",), ("test_a", "test_b"))
    extra = {item["id"]: item["cause"] for item in labels["PASS_TO_PASS"]["extra"]}
    assert extra == {
        path + "test_z": causes.SYMPY_LAST_TEST,  # the one test of its file the reference lacks
        # two of one file: not the artifact, but the reference reached the file
        other + "test_c": causes.NOT_PASSED_IN_REFERENCE,
        other + "test_d": causes.NOT_PASSED_IN_REFERENCE,
        alone + "test_e": causes.UNEXPLAINED,  # nothing of its file listed: no pattern
    }
    # the reporter's artifact is set aside in the Jaccard as defined, the rest counts
    assert labels["PASS_TO_PASS"]["jaccard"] == pytest.approx(2 / 6)
    assert labels["PASS_TO_PASS"]["jaccard_as_defined"] == pytest.approx(2 / 5)


def test_django_ids_compare_in_their_name_module_class_form() -> None:
    ours = make_instance(
        FAIL_TO_PASS=("tests/queries/tests.py::Queries1Tests::test_ticket_1",),
        PASS_TO_PASS=("tests/queries/tests.py::Queries1Tests::test_ticket_2",),
        run_metadata={"runner": "django"},
    )
    labels = _labels(
        ours,
        ("test_ticket_1 (queries.tests.Queries1Tests)",),
        ("test_ticket_2 (queries.tests.Queries2Tests)",),
    )
    assert labels["FAIL_TO_PASS"]["exact"] is True
    assert labels["PASS_TO_PASS"]["missing"][0]["id"] == (
        "test_ticket_2 (queries.tests.Queries2Tests)"
    )
    assert labels["PASS_TO_PASS"]["extra"][0]["id"] == (
        "tests/queries/tests.py::Queries1Tests::test_ticket_2"
    )


def test_django_ids_of_python_311_records_match_runs_of_either_era() -> None:
    # Django 5.0's SWE-bench records ran on Python 3.11, whose unittest repeats the method name
    # inside the parentheses; our ids (and records of older eras) do not.
    ours = make_instance(
        FAIL_TO_PASS=("tests/model_forms/tests.py::ModelFormBaseTest::test_blank_false",),
        PASS_TO_PASS=("tests/model_forms/tests.py::ModelFormBaseTest::test_base_form",),
        run_metadata={"runner": "django"},
    )
    labels = _labels(
        ours,
        ("test_blank_false (model_forms.tests.ModelFormBaseTest.test_blank_false)",),
        ("test_base_form (model_forms.tests.ModelFormBaseTest)",),
    )
    assert labels["FAIL_TO_PASS"]["exact"] is True
    assert labels["PASS_TO_PASS"]["exact"] is True
    assert reference_key("test_a (app.tests.T.test_a)", "django") == "test_a (app.tests.T)"
    # a class whose last component only looks like another test's name stays as it is
    assert reference_key("test_a (app.tests.test_b)", "django") == "test_a (app.tests.test_b)"
    assert reference_key("test_a (app.tests.T.test_a)", "unittest") == "test_a (app.tests.T)"


def test_a_parametrize_id_with_a_space_matches_swe_benchs_cut() -> None:
    ours = make_instance(PASS_TO_PASS=("tests/test_stats.py::test_fmt[a b]",))
    labels = _labels(ours, pass_to_pass=("tests/test_stats.py::test_fmt[a",))
    assert labels["PASS_TO_PASS"]["exact"] is True
    assert our_key("tests/t.py::test_fmt[a b]", "pytest") == "tests/t.py::test_fmt[a"


def test_ids_one_up_to_their_first_space_are_a_named_cut_collision() -> None:
    # pylint-8898's real lists: SWE-bench's parser cut two parametrize ids to one
    path = "tests/config/test_config.py::test_csv_regex_comma_in_quantifier"
    ours = make_instance(
        FAIL_TO_PASS=("tests/config/test_config.py::test_csv_regex_error",
                      f"{path}[foo, bar{{1,3}}-expected3]"),
        PASS_TO_PASS=(f"{path}[foo-expected0]", f"{path}[foo, bar-expected2]"),
    )  # fmt: skip
    labels = _labels(
        ours,
        ("tests/config/test_config.py::test_csv_regex_error",),
        (f"{path}[foo-expected0]", f"{path}[foo,"),
    )
    assert labels["PASS_TO_PASS"]["exact"] is True
    (extra,) = labels["FAIL_TO_PASS"]["extra"]
    assert extra["id"] == f"{path}[foo, bar{{1,3}}-expected3]"
    assert extra["cause"] == causes.CUT_COLLISION
    assert extra["evidence"].startswith(f"2 of our tests are '{path}[foo,' up to their first space")
    assert extra["evidence"].endswith("listed in its PASS_TO_PASS")
    # one id of ours alone with that cut is not a collision: the reference's P→P has its key
    alone = make_instance(FAIL_TO_PASS=(f"{path}[foo, bar{{1,3}}-expected3]",), PASS_TO_PASS=())
    other = ("tests/config/test_config.py::test_csv_regex_error",)
    (extra,) = _labels(alone, other, (f"{path}[foo,",))["FAIL_TO_PASS"]["extra"]
    assert extra["cause"] == causes.BEFORE_OUTCOME_DIFFERS


def test_a_test_our_offline_runs_could_not_pass_is_named_needs_network() -> None:
    # requests-1921: tests that reach httpbin are in the reference's lists, not in ours
    path = "test_requests.py::RequestsTestCase::"
    ours = make_instance(
        FAIL_TO_PASS=(path + "test_fixed",),
        PASS_TO_PASS=(),
        run_metadata={
            "needs_network": json.dumps({path + "test_HTTP_200_OK_GET": "ConnectionError: x"})
        },
    )
    labels = _labels(
        ours, (path + "test_fixed", path + "test_HTTP_200_OK_GET"), (path + "test_other",)
    )
    (missing,) = labels["FAIL_TO_PASS"]["missing"]
    assert missing["cause"] == causes.NEEDS_NETWORK
    assert missing["evidence"].endswith("which have no network: ConnectionError: x")
    # a test without a recorded connection error stays unexplained
    (other,) = labels["PASS_TO_PASS"]["missing"]
    assert other["cause"] == causes.UNEXPLAINED


def test_a_parametrize_id_embedding_a_path_is_kept_whole() -> None:
    test = "tests/test_x.py::test_file[data/a.py::case]"
    assert reference_key(test, "pytest") == our_key(test, "pytest") == test
    assert not is_junk(test, "pytest")
    assert is_junk("[100%]", "pytest") and is_junk("test_x[a::b]", "pytest")
    assert not is_junk("test_point3D", "sympy")


def test_an_xfail_test_we_exclude_is_named_with_its_evidence() -> None:
    xfail = "tests/test_stats.py::test_known_bug"
    ours = make_instance(run_metadata={"expected_outcome_tests": json.dumps([xfail])})
    missing = _labels(ours, pass_to_pass=(*P2P, xfail))["PASS_TO_PASS"]["missing"]
    assert missing == [
        {
            "id": xfail,
            "cause": causes.XFAIL_EXCLUDED,
            "evidence": "in run_metadata.expected_outcome_tests",
        }
    ]


def test_empty_reference_lists_name_the_aborted_run() -> None:
    extra = _labels(make_instance(), (), ())["FAIL_TO_PASS"]["extra"]
    assert [item["cause"] for item in extra] == [causes.REFERENCE_EMPTY]


def test_an_empty_reference_pass_to_pass_names_our_extra_ones() -> None:
    labels = _labels(make_instance(), pass_to_pass=())
    extra = labels["PASS_TO_PASS"]["extra"]
    assert [item["cause"] for item in extra] == [causes.REFERENCE_LIST_EMPTY] * len(P2P)
    assert extra[0]["evidence"] == "the reference's PASS_TO_PASS is empty, its other list not"
    assert labels["FAIL_TO_PASS"]["exact"]


def test_real_records_junk_progress_column_and_sympy_names() -> None:
    references = {reference.instance_id: reference for reference in read_reference(str(SAMPLES))[0]}
    pytest_ref = references["pytest-dev__pytest-5262"]
    ours = make_instance(
        instance_id=pytest_ref.instance_id,
        repo="pytest-dev/pytest",
        FAIL_TO_PASS=pytest_ref.FAIL_TO_PASS,
        PASS_TO_PASS=tuple(test for test in pytest_ref.PASS_TO_PASS if test != "[100%]"),
    )
    labels = _labels(ours, pytest_ref.FAIL_TO_PASS, pytest_ref.PASS_TO_PASS)
    assert labels["FAIL_TO_PASS"]["exact"] is True
    assert [(item["id"], item["cause"]) for item in labels["PASS_TO_PASS"]["missing"]] == [
        ("[100%]", causes.JUNK_ID)
    ]
    sympy_ref = references["sympy__sympy-11618"]
    path = "sympy/geometry/tests/test_point.py::"
    ours = make_instance(
        FAIL_TO_PASS=tuple(path + name for name in sympy_ref.FAIL_TO_PASS),
        PASS_TO_PASS=tuple(path + name for name in sympy_ref.PASS_TO_PASS),
        run_metadata={"runner": "sympy"},
    )
    labels = _labels(ours, sympy_ref.FAIL_TO_PASS, sympy_ref.PASS_TO_PASS)
    assert labels["FAIL_TO_PASS"]["exact"] and labels["PASS_TO_PASS"]["exact"]


def test_decisions_agree_and_disagree_with_our_drop_reason() -> None:
    references = [
        Reference(f"owner__repo-{number}", "owner/repo", F2P, P2P) for number in (1, 2, 3, 4)
    ]
    ours = {"owner__repo-1": make_instance(1), "owner__repo-2": make_instance(2)}
    drops = {
        "owner__repo-3": Drop("validate", "flaky"),
        "owner__repo-4": Drop("validate", "no_fail_to_pass"),
    }
    excluded = {"owner__repo-2", "owner__repo-4", "other__repo-9"}
    totals = compare(references, ours, drops, excluded, out=None)[ALL]
    assert totals.decisions == {
        decisions.AGREE_KEEP: 1,
        decisions.WE_KEEP_THEY_DROP: 1,
        decisions.WE_DROP_THEY_KEEP: 1,
        decisions.AGREE_DROP: 1,
        decisions.NOT_IN_OURS: 1,
    }
    assert totals.our_reasons == {"flaky": 1}
    assert (totals.records, totals.kept, totals.exact_fail_to_pass) == (4, 2, 2)


def test_totals_count_lists_agreeing_as_defined_and_instances_left_unexplained() -> None:
    """F→P differences that are reference artifacts or the benchmark's definition (here a junk
    id and an xfail test we exclude) still agree as defined; an id with no named cause makes
    its instance one with unexplained differences, whichever list it is in. The P→P Jaccard as
    defined sets the artifacts aside (an empty reference list), not the unexplained ids."""
    references = [
        Reference("owner__repo-1", "owner/repo", (*F2P, "[100%]"), P2P),
        Reference("owner__repo-2", "owner/repo", (*F2P, "tests/test_stats.py::test_x"), P2P),
        Reference("owner__repo-3", "owner/repo", F2P, (*P2P, "tests/test_stats.py::test_y")),
        Reference("owner__repo-4", "owner/repo", F2P, ()),  # its P→P list is empty
    ]
    expected = {"expected_outcome_tests": json.dumps(["tests/test_stats.py::test_x"])}
    ours = {
        "owner__repo-1": make_instance(1),
        "owner__repo-2": make_instance(2, run_metadata=expected),
        "owner__repo-3": make_instance(3),
        "owner__repo-4": make_instance(4),
    }
    totals = compare(references, ours, {}, None, out=None)
    every = totals[ALL]
    assert (every.kept, every.exact_fail_to_pass, every.fail_to_pass_as_defined) == (4, 2, 4)
    assert every.with_unexplained == 1  # repo-3's P→P
    summary = every.summary()
    assert summary["fail_to_pass_as_defined"] == 4
    assert summary["with_unexplained_differences"] == 1
    # P→P Jaccard per instance 1, 1, 1/2 (repo-3's unexplained id), 0 (repo-4: the reference
    # lists nothing); as defined repo-4's ids are the reference's artifact, set aside
    assert summary["mean_pass_to_pass_jaccard"] == pytest.approx(2.5 / 4)
    assert summary["mean_pass_to_pass_jaccard_as_defined"] == pytest.approx(3.5 / 4)


def test_an_interrupted_comparison_keeps_what_it_compared(tmp_path: Path) -> None:
    references = [Reference(f"owner__repo-{n}", "owner/repo", F2P, P2P) for n in (1, 2, 3)]
    seen = []

    def interrupt_at_second(row) -> None:
        seen.append(row["instance_id"])
        if len(seen) == 2:
            raise KeyboardInterrupt

    out = tmp_path / "report.json"
    with pytest.raises(KeyboardInterrupt):
        compare(references, {"owner__repo-1": make_instance(1)}, {}, None, out, interrupt_at_second)
    report = json.loads(out.read_text())
    assert report["complete"] is False
    assert [row["instance_id"] for row in report["instances"]] == seen


def _release(tmp_path: Path) -> Path:
    dataset = tmp_path / "dataset"
    write_jsonl(
        dataset / "instances.jsonl",
        [make_instance(1), make_instance(2, PASS_TO_PASS=("tests/test_stats.py::test_other",))],
    )
    row = {
        "stage": "validate",
        "reason": "flaky",
        "evidence": {},
        "record": {"instance_id": "owner__repo-3"},
    }
    (dataset / "rejected").mkdir()
    (dataset / "rejected" / "validate.jsonl").write_text(json.dumps(row) + "\n")
    return dataset


def test_the_cli_prints_the_table_and_writes_the_report(tmp_path: Path, capsys) -> None:
    records = [
        swe_record(
            "owner/repo", number, "a" * 40, "p", "t",
            FAIL_TO_PASS=json.dumps(F2P), PASS_TO_PASS=json.dumps(P2P),
        )
        for number in (1, 2, 3)
    ]  # fmt: skip
    reference = write_records(tmp_path / "reference.jsonl", records)
    exclusions = tmp_path / "dropped.txt"
    exclusions.write_text("# theirs\nowner__repo-2\n")
    out = tmp_path / "report.json"
    argv = ["compare", "--reference", str(reference), "--ours", str(_release(tmp_path))]
    code = main([*argv, "--exclusions", str(exclusions), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    header, row = (
        line.split() for line in printed.splitlines() if line.startswith(("repository", "owner"))
    )
    assert header[:5] == ["repository", "records", "kept", "exact", "F→P"]
    # records, kept, exact F→P, F→P as defined, F→P with environment differences, exact
    # P→P, Jaccard (also as defined), with unexplained ids
    assert row == ["owner/repo", "3", "2", "2", "2", "0", "1", "0.500", "0.500", "1"]
    assert "  artifacts of the reference (as defined): 0" in printed
    assert "  environment differences: 0" in printed
    assert "we_drop_they_keep because flaky: 1" in printed
    report = json.loads(out.read_text())
    assert report["complete"] is True and report["compared"] == 3
    summary = report["repositories"]["all"]
    assert summary["decisions"] == {"agree_keep": 1, "we_drop_they_keep": 1, "we_keep_they_drop": 1}
    assert summary["causes"]["unexplained"] == 2


def test_the_cli_names_a_missing_dataset_dir_in_one_line(tmp_path: Path, capsys) -> None:
    reference = write_records(
        tmp_path / "reference.jsonl", [swe_record("o/r", 1, "a" * 40, "p", "t")]
    )
    code = main(["compare", "--reference", str(reference), "--ours", str(tmp_path / "none")])
    assert code == 2
    assert "no instances.jsonl" in capsys.readouterr().err


def test_the_cli_names_a_missing_reference_file_in_one_line(tmp_path: Path, capsys) -> None:
    code = main(["compare", "--reference", str(tmp_path / "none.jsonl"), "--ours", str(tmp_path)])
    assert code == 2
    assert "no such file" in capsys.readouterr().err


def test_a_malformed_reference_row_is_left_out_and_named(tmp_path):

    rows = (SAMPLES).read_text(encoding="utf-8").splitlines()
    broken = json.loads(rows[0])
    del broken["base_commit"]
    reference = tmp_path / "reference.jsonl"
    reference.write_text("\n".join([json.dumps(broken), rows[1], "{not json"]) + "\n")
    found, unusable = read_reference(str(reference))
    assert [ref.instance_id for ref in found] == [json.loads(rows[1])["instance_id"]]
    assert len(unusable) == 2
    assert unusable[0].startswith("reference.jsonl:1: not a SWE-bench record")
    assert unusable[1].startswith("reference.jsonl:3:")


def test_a_sympy_test_the_reference_lacks_that_is_not_its_files_last_is_no_artifact() -> None:
    """One test of a file missing from the reference, while the file's last test (recorded by
    validation from its source) is another: not the reporter's artifact."""
    path = "sympy/core/tests/test_basic.py::"
    ours = make_instance(
        FAIL_TO_PASS=(path + "test_new",),
        PASS_TO_PASS=(path + "test_a", path + "test_middle", path + "test_z"),
        run_metadata={"runner": "sympy", "last_tests": json.dumps({path[:-2]: "test_z"})},
    )
    labels = _labels(ours, ("test_new",), ("test_a", "test_z"))
    (extra,) = labels["PASS_TO_PASS"]["extra"]
    assert (extra["id"], extra["cause"]) == (path + "test_middle", causes.NOT_PASSED_IN_REFERENCE)
    # a record made before validation recorded the last tests: nothing proves the pattern
    unknown = make_instance(
        FAIL_TO_PASS=(path + "test_new",),
        PASS_TO_PASS=(path + "test_a", path + "test_z"),
        run_metadata={"runner": "sympy"},
    )
    (extra,) = _labels(unknown, ("test_new",), ("test_a",))["PASS_TO_PASS"]["extra"]
    assert extra["cause"] == causes.NOT_PASSED_IN_REFERENCE


def test_environment_differences_are_counted_apart_from_the_artifacts() -> None:
    """An F→P list that differs by an artifact only agrees as defined; one that differs by an
    environment difference (a test ours skipped for lack of a package) is counted in its own
    column, not as defined; one with an unexplained id in neither."""
    skipped = {
        "unlisted_tests": json.dumps({"tests/test_stats.py::test_np": "skipped: requires numpy"})
    }
    references = [
        Reference("owner__repo-1", "owner/repo", (*F2P, "[100%]"), P2P),
        Reference("owner__repo-2", "owner/repo", (*F2P, "tests/test_stats.py::test_np"), P2P),
        Reference("owner__repo-3", "owner/repo", (*F2P, "tests/test_stats.py::test_x"), P2P),
    ]
    ours = {
        "owner__repo-1": make_instance(1),
        "owner__repo-2": make_instance(2, run_metadata=skipped),
        "owner__repo-3": make_instance(3),
    }
    every = compare(references, ours, {}, None, out=None)[ALL]
    assert (every.fail_to_pass_as_defined, every.fail_to_pass_environment) == (1, 1)
    assert every.summary()["fail_to_pass_environment_differences"] == 1
    assert every.causes[causes.OPTIONAL_PACKAGE] == 1
