"""A Dask cluster of worker processes, each with its own work dir: the client stores every
result, workers keep their caches to themselves, a rerun computes nothing, and a worker that
dies mid-run loses only its task."""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from dask import distributed

from builder.core.executor import Executor, preferred
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.store import ResultStore
from tests.support.stages import WhereStage, records

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster(tmp_path):
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        local_directory=str(tmp_path / "workers"),
    ) as cluster:
        yield cluster


def run(stage, inputs, store, executor, rejected=None):
    stats = StageStats(stage.name)
    rejected = rejected or RejectedLog()
    kept = list(
        run_stage(stage, inputs, store=store, executor=executor, rejected=rejected, stats=stats)
    )
    return kept, stats


def test_workers_compute_in_their_own_dirs_and_the_client_stores(tmp_path, cluster):
    client_dir = tmp_path / "client"
    store = ResultStore(client_dir / "store")
    stage = WhereStage(client_dir)
    executor = Executor("dask", scheduler=cluster.scheduler_address)
    inputs = records(8)
    kept, stats = run(stage, inputs, store, executor)
    assert [r.pull_number for r in kept] == [2, 4, 6, 8] and stats.seen == 8
    entries = [store.get(stage.name, stage.key(r)) for r in inputs]
    assert all(entry is not None for entry in entries)
    ran_in = {entry["verdict"]["evidence"]["work_dir"] for entry in entries}
    workers = tmp_path / "workers"
    assert all(path.startswith(str(workers)) for path in ran_in)
    assert not client_dir.joinpath("o__r-1.done").exists()  # the client computed nothing
    assert not list(workers.rglob("store"))  # nor did a worker store anything
    # one group prefers one worker: each parity ran in one process
    pids = {}
    for record, entry in zip(inputs, entries, strict=True):
        pids.setdefault(record.pull_number % 2, set()).add(entry["verdict"]["evidence"]["pid"])
    assert all(len(found) == 1 for found in pids.values())

    again, rerun = run(stage, inputs, store, executor)
    assert again == kept and rerun.cached == 8


def test_the_logs_a_drop_names_come_back_to_the_client(tmp_path, cluster):
    client_dir = tmp_path / "client"
    store = ResultStore(client_dir / "store")
    stage = WhereStage(client_dir)
    rejected = RejectedLog()
    inputs = records(4)
    run(stage, inputs, store, Executor("dask", scheduler=cluster.scheduler_address), rejected)
    rejected.write(tmp_path / "rejected", [stage.name])
    rows = [json.loads(line) for line in (tmp_path / "rejected" / "where.jsonl").open()]
    assert [row["record"]["instance_id"] for row in rows] == ["o__r-1", "o__r-3"]
    for row in rows:
        evidence = row["evidence"]
        assert evidence["work_dir"].startswith(str(tmp_path / "workers"))  # it ran there
        log = Path(evidence["log"])
        assert log == client_dir / "logs" / row["record"]["instance_id"] / "run.log"
        assert log.read_text() == f"{row['record']['instance_id']} ran in {evidence['work_dir']}\n"
        stored = store.get(stage.name, stage.key(next(
            r for r in inputs if r.instance_id == row["record"]["instance_id"]
        )))  # fmt: skip
        assert stored["verdict"]["evidence"] == evidence and "carried" not in stored


def test_a_worker_killed_mid_run_loses_only_its_task(tmp_path, cluster):
    store = ResultStore(tmp_path / "client" / "store")
    stage = WhereStage(tmp_path / "client", delay_s=0.5)
    executor = Executor("dask", scheduler=cluster.scheduler_address)
    inputs = records(10)
    pids = [w.process.pid for w in cluster.workers.values()]

    def kill_one():
        time.sleep(1.2)
        os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    kept, stats = run(stage, inputs, store, executor)
    killer.join()
    assert stats.seen == 10 and [r.pull_number for r in kept] == [2, 4, 6, 8, 10]
    assert len(list(store.keys(stage.name))) == 10


def test_a_group_prefers_the_same_worker():
    workers = ["tcp://a:1", "tcp://b:2", "tcp://c:3"]
    assert preferred("astropy/astropy@4.3", workers) == preferred("astropy/astropy@4.3", workers)
    assert len({preferred(f"repo@{n}", workers) for n in range(30)}) == 3
