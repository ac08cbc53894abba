"""benchmarks/decisions.py: two builds' decisions record by record, and one build's beside an
exclusion list, read from the files a build writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import decisions
from builder.core.pipeline import RejectedLog
from builder.core.records import DropReason, Verdict, write_jsonl
from tests.support.instances import make_instance


def _dist(path: Path, kept: dict[str, tuple[list[str], list[str]]], drops: dict[str, str]) -> Path:
    """A build's output dir as the build writes it: kept instances in instances.jsonl, drops
    through the pipeline's own RejectedLog."""
    path.mkdir(parents=True)
    write_jsonl(
        path / "instances.jsonl",
        [
            make_instance(number, instance_id=i, FAIL_TO_PASS=tuple(f2p), PASS_TO_PASS=tuple(p2p))
            for number, (i, (f2p, p2p)) in enumerate(kept.items(), start=1)
        ],
    )
    log = RejectedLog()
    for instance_id, reason in drops.items():
        verdict = Verdict(
            stage="validate", reason=DropReason(reason), evidence={"fail_to_fail": "t.py::test_x"}
        )
        log.add({"instance_id": instance_id, "repo": "o/r"}, verdict)
    log.write(path / "rejected", ["validate"])
    return path


def test_two_builds_differ_where_an_outcome_or_a_list_does(tmp_path: Path) -> None:
    first = _dist(
        tmp_path / "a",
        {"r-1": (["t::a"], ["t::b"]), "r-2": (["t::a"], ["t::b", "t::c"]), "r-3": (["t::a"], [])},
        {"r-4": "no_fail_to_pass"},
    )
    second = _dist(
        tmp_path / "b",
        {"r-1": (["t::a"], ["t::b"]), "r-2": (["t::a"], ["t::b", "t::d"])},
        {"r-3": "flaky", "r-4": "no_fail_to_pass", "r-5": "flaky"},
    )
    a, b = decisions.from_dist(first), decisions.from_dist(second)
    assert a["r-4"].outcome == "no_fail_to_pass" and a["r-4"].evidence == {
        "fail_to_fail": "t.py::test_x"
    }
    found = decisions.differences(a, b)
    assert [d.instance_id for d in found] == ["r-2", "r-3"]  # r-5: decided by one only
    assert decisions.one_sided(a, b) == "decided by one only (not compared): second: r-5\n"
    assert decisions.one_sided(a, a) == ""
    assert found[0].lists == {"PASS_TO_PASS": {"first_only": ("t::c",), "second_only": ("t::d",)}}
    assert found[1].first == "kept (1 F→P, 0 P→P)"
    assert found[1].second == "flaky (fail_to_fail: t.py::test_x)"
    table = decisions.render_differences(found, "quick", "recipe")
    assert (
        "| r-2 | kept (1 F→P, 2 P→P) | kept (1 F→P, 2 P→P) | PASS_TO_PASS: 1 only in quick" in table
    )
    assert "same decision" in decisions.render_differences([], "quick", "recipe")


def test_a_build_beside_an_exclusion_list_names_every_disagreement(tmp_path: Path) -> None:
    dist = _dist(
        tmp_path / "d",
        {"r-1": (["t::a"], []), "r-2": (["t::a"], [])},
        {"r-3": "no_fail_to_pass", "r-4": "flaky"},
    )
    listed = tmp_path / "filter_cases.txt"
    listed.write_text("r-2\n# a comment\n\nr-3\nr-9\n")
    assert decisions.read_exclusions([listed]) == {"r-2", "r-3", "r-9"}
    result = decisions.against_exclusions(
        decisions.from_dist(dist), decisions.read_exclusions([listed])
    )
    assert result.both_keep == ("r-1",)
    assert list(result.both_exclude) == ["r-3"]
    assert result.only_we_drop == {"r-4": "flaky (fail_to_fail: t.py::test_x)"}
    assert result.only_they_exclude == ("r-2",)
    text = decisions.render_exclusions(result)
    assert text.splitlines()[0] == (
        "4 records decided: both keep 1, both leave out 1, only we drop 1, only the list excludes 1"
    )
    assert "dropped here, kept by the list: r-4: flaky" in text
    assert "excluded by the list, kept here: r-2" in text


def test_saved_decisions_read_back_the_same(tmp_path: Path) -> None:
    made = {"r-1": decisions.kept(["b", "a"], ["c"]), "r-2": decisions.dropped("flaky", {"n": 2})}
    decisions.save(tmp_path / "d.json", made)
    assert decisions.load(tmp_path / "d.json") == made
    assert made["r-1"].fail_to_pass == ("a", "b")


def test_the_command_compares_two_builds_and_refuses_what_is_not_one(tmp_path, capsys) -> None:
    a = _dist(tmp_path / "a", {"r-1": (["t::a"], [])}, {})
    b = _dist(tmp_path / "b", {}, {"r-1": "flaky"})
    listed = tmp_path / "x.txt"
    listed.write_text("r-1\n")
    assert decisions.main([str(a), str(b), "--exclusions", str(listed)]) == 0
    printed = capsys.readouterr().out
    assert "| r-1 | kept (1 F→P, 0 P→P) | flaky (fail_to_fail: t.py::test_x) |" in printed
    assert "1 records decided: both keep 0, both leave out 1" in printed
    with pytest.raises(SystemExit):
        decisions.main([str(tmp_path)])  # no instances.jsonl: a clear error, not a traceback
    assert "is not a dataset dir" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        decisions.main([str(a), "--exclusions", str(tmp_path / "absent.txt")])
    assert "no such exclusion list" in capsys.readouterr().err


def test_a_fault_of_the_machine_is_no_decision(tmp_path: Path) -> None:
    """A record a fault left undecided (``infra_error``) is compared with nothing: not a
    difference from a run that decided it, not a drop beside an exclusion list."""
    quick = _dist(tmp_path / "q", {"r-1": (["t::a"], []), "r-2": (["t::a"], [])}, {})
    recipe = _dist(tmp_path / "r", {"r-1": (["t::a"], [])}, {"r-2": "infra_error"})
    a, b = decisions.from_dist(quick), decisions.from_dist(recipe)
    assert not b["r-2"].decided and b["r-1"].decided and a["r-2"].decided
    assert decisions.dropped("flaky").decided and decisions.dropped("not_a_reason").decided
    assert decisions.undecided(b) == ["r-2"]
    assert decisions.differences(a, b) == []
    assert decisions.one_sided(a, b) == "decided by one only (not compared): first: r-2\n"
    result = decisions.against_exclusions(b, set())
    assert result.only_we_drop == {} and result.undecided == ("r-2",)
    text = decisions.render_exclusions(result)
    assert text.splitlines()[0].startswith("1 records decided: both keep 1, both leave out 0")
    assert "undecided (a fault of the machine, compared with nothing): r-2" in text
