"""run_stage: results are stored per record, reused, counted and dropped with reasons."""

import json

import pytest
from dask import distributed

from builder.core.executor import Executor
from builder.core.pipeline import (
    InfrastructureStop,
    Outcome,
    RejectedLog,
    Stage,
    StageStats,
    funnel_lines,
    run_stage,
)
from builder.core.records import DropReason, Verdict
from builder.core.store import ResultStore
from tests.support.records import candidate as _candidate


class EvenKeeper(Stage):
    """Keeps candidates with an even pull number; counts how often it really ran."""

    name = "even"
    output_model = type(_candidate())

    def __init__(self, setting: int = 0):
        self.setting = setting
        self.calls = 0

    def fingerprint(self):
        return {"setting": self.setting}

    def process(self, record):
        self.calls += 1
        if record.pull_number % 2:
            return Outcome.drop(
                self.name, DropReason.NO_FAIL_TO_PASS, number=str(record.pull_number)
            )
        return Outcome.keep(self.name, record)


def _run(stage, records, store, jobs=1, kind="threads"):
    stats, rejected = StageStats(stage.name), RejectedLog()
    outputs = list(
        run_stage(stage, records, store=store, executor=Executor(kind, jobs), rejected=rejected,
                  stats=stats)
    )  # fmt: skip
    return outputs, stats, rejected


RECORDS = [_candidate(instance_id=f"o__r-{n}", pull_number=n) for n in range(1, 9)]


@pytest.mark.parametrize(
    "jobs, kind",
    [(1, "threads"), (2, "threads"), pytest.param(2, "processes", marks=pytest.mark.slow)],
)
def test_keeps_order_drops_with_reason_and_reuses_store(tmp_path, jobs, kind):
    store = ResultStore(tmp_path / "store")
    stage = EvenKeeper()
    outputs, stats, rejected = _run(stage, RECORDS, store, jobs, kind)
    assert [o.pull_number for o in outputs] == [2, 4, 6, 8]
    assert (stats.seen, stats.kept, stats.cached) == (8, 4, 0)
    assert stats.dropped == {"no_fail_to_pass": 4}
    rejected.write(tmp_path / "rejected", ["even"])
    rows = [
        json.loads(line) for line in (tmp_path / "rejected" / "even.jsonl").read_text().splitlines()
    ]
    assert [row["evidence"]["number"] for row in rows] == ["1", "3", "5", "7"]
    assert {row["reason"] for row in rows} == {"no_fail_to_pass"}
    assert len(list(store.keys("even"))) == 8

    again = EvenKeeper()
    outputs2, stats2, _ = _run(again, RECORDS, store, jobs, kind)
    assert again.calls == 0 and stats2.cached == 8 and outputs2 == outputs


def test_changed_setting_recomputes(tmp_path):
    store = ResultStore(tmp_path)
    _run(EvenKeeper(setting=1), RECORDS, store)
    changed = EvenKeeper(setting=2)
    _run(changed, RECORDS, store)
    assert changed.calls == len(RECORDS)


def test_stats_merge():
    one, two = StageStats("s", 2, 1, 0), StageStats("s", 3, 1, 1)
    one.dropped["timeout"] = 1
    two.dropped.update({"timeout": 1, "pass_to_fail": 1})
    merged = one + two
    assert (merged.seen, merged.kept, merged.cached) == (5, 2, 1)
    assert merged.dropped == {"timeout": 2, "pass_to_fail": 1}
    with pytest.raises(ValueError):
        one + StageStats("other")


def test_outcome_invariants():
    with pytest.raises(ValueError):
        Outcome(Verdict(stage="s"))  # kept without output
    with pytest.raises(ValueError):
        Outcome(Verdict(stage="s", reason=DropReason.TIMEOUT), _candidate())


def test_executor_rejects_unknown_kind_and_dask_without_scheduler():
    with pytest.raises(ValueError, match="unknown executor"):
        Executor("cloud")
    with pytest.raises(ValueError, match="scheduler"):
        Executor("dask")


def test_dask_executor_runs_on_a_local_cluster(tmp_path):
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        store = ResultStore(tmp_path)
        outputs, stats, _ = _run_with(Executor("dask", scheduler=cluster.scheduler_address), store)
    assert [o.pull_number for o in outputs] == [2, 4, 6, 8] and stats.seen == 8
    assert len(list(store.keys("even"))) == 8


def _run_with(executor, store):
    stats, rejected = StageStats("even"), RejectedLog()
    stage = EvenKeeper()
    outputs = list(
        run_stage(stage, RECORDS, store=store, executor=executor, rejected=rejected, stats=stats)
    )
    return outputs, stats, rejected


def test_rejected_log_writes_a_record_with_a_lone_surrogate_as_its_escape(tmp_path):
    log = RejectedLog()
    verdict = Verdict(stage="source", reason=DropReason.MALFORMED_RECORD, evidence={"e": "x"})
    log.add({"problem_statement": "\ud800", "title": "caf\u00e9"}, verdict)
    log.write(tmp_path, ["source"])
    row = json.loads((tmp_path / "source.jsonl").read_text(encoding="utf-8"))
    assert row["record"] == {"problem_statement": "\ud800", "title": "caf\u00e9"}


class FaultyMachine(Stage):
    """Drops the records whose pull number is in ``faulty`` as infra_error (fault ``sandbox``),
    keeps the others; counts how often it really ran."""

    name = "faulty"
    output_model = type(_candidate())

    def __init__(self, faulty):
        self.faulty = set(faulty)
        self.calls = 0

    def fingerprint(self):
        return {}

    def process(self, record):
        self.calls += 1
        if record.pull_number in self.faulty:
            return Outcome.drop(
                self.name, DropReason.INFRA_ERROR, fault="sandbox", error="bwrap: no"
            )
        return Outcome.keep(self.name, record)


def test_an_infrastructure_fault_is_counted_apart_and_never_stored(tmp_path):
    store = ResultStore(tmp_path / "store")
    outputs, stats, rejected = _run(FaultyMachine({3}), RECORDS, store)
    assert len(outputs) == 7 and stats.faults == {"sandbox": 1} and not stats.dropped
    assert stats.to_dict()["infra_errors"] == {"sandbox": 1}
    lines = funnel_lines([stats])
    assert lines[-1].split() == [
        "1",
        "infra_error:",
        "sandbox",
        "(not",
        "stored:",
        "tried",
        "again)",
    ]
    assert len(list(store.keys("faulty"))) == 7
    rejected.write(tmp_path / "rejected", ["faulty"])
    (row,) = map(json.loads, (tmp_path / "rejected" / "faulty.jsonl").open())
    assert row["reason"] == "infra_error" and row["evidence"]["fault"] == "sandbox"
    fixed = FaultyMachine(set())  # the next build, the machine mended: that record alone runs
    outputs, stats, _ = _run(fixed, RECORDS, store)
    assert fixed.calls == 1 and len(outputs) == 8 and (stats.cached, stats.kept) == (7, 8)


def test_a_stored_infrastructure_drop_is_computed_again(tmp_path):
    store = ResultStore(tmp_path / "store")
    stage = FaultyMachine(set())
    key = stage.key(RECORDS[0])
    old = Outcome.drop("faulty", DropReason.REPO_UNAVAILABLE, error="fetch failed")
    store.put("faulty", key, {"verdict": old.verdict.model_dump(mode="json"), "output": None})
    outputs, stats, _ = _run(stage, RECORDS[:1], store)
    assert stage.calls == 1 and len(outputs) == 1 and stats.cached == 0


class Revised(EvenKeeper):
    """Says its stored results of odd pull numbers no longer hold (as a stage whose results
    depend on something outside its key would)."""

    def holds(self, record, stored):
        return record.pull_number % 2 == 0


def test_a_stored_result_the_stage_says_no_longer_holds_is_computed_again(tmp_path):
    store = ResultStore(tmp_path / "store")
    _run(EvenKeeper(), RECORDS, store)
    revised = Revised()
    outputs, stats, _ = _run(revised, RECORDS, store)
    assert revised.calls == 4 and stats.cached == 4  # the four odd ones, computed again
    assert [o.pull_number for o in outputs] == [2, 4, 6, 8]


def test_a_stage_whose_records_all_hit_one_fault_stops_with_one_line(tmp_path):
    store = ResultStore(tmp_path / "store")
    stage = FaultyMachine({r.pull_number for r in RECORDS})
    with pytest.raises(InfrastructureStop, match=r"first 3 .*\(sandbox\): bwrap: no") as stopped:
        _run(stage, RECORDS, store)
    assert "\n" not in str(stopped.value) and stage.calls == 3
    assert list(store.keys("faulty")) == []


def test_faults_among_results_do_not_stop_a_stage(tmp_path):
    store = ResultStore(tmp_path / "store")
    stage = FaultyMachine({1, 2, 4, 5, 6, 7, 8})  # the third one computed worked
    outputs, stats, _ = _run(stage, RECORDS, store)
    assert stage.calls == 8 and len(outputs) == 1 and stats.faults == {"sandbox": 7}


class SelfTested(FaultyMachine):
    """Its records' faults are their own doing when the machine's self-test passes."""

    def __init__(self, faulty, self_test):
        super().__init__(faulty)
        self.self_test = self_test

    def confirm(self, fault, first):
        return self.self_test


def test_a_stop_quotes_the_self_test_and_none_stops_without_its_failure(tmp_path):
    records = {r.pull_number for r in RECORDS}
    confirmed = SelfTested(records, "a self-test run for no record fails: bwrap: setup")
    with pytest.raises(InfrastructureStop, match=r"\(sandbox\): a self-test run for no record"):
        _run(confirmed, RECORDS, ResultStore(tmp_path / "a"))
    forged = SelfTested(records, None)  # the machine works: each record's own doing
    outputs, stats, _ = _run(forged, RECORDS, ResultStore(tmp_path / "b"))
    assert forged.calls == 8 and outputs == [] and stats.faults == {"sandbox": 8}
