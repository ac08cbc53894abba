"""The per-record phase clock (validation/phases.py): exclusive times, lanes of the two sides,
one clock per record across threads, and the ``phases.json`` a real validation writes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from builder.core.config import ValidationConfig
from builder.core.executor import Executor
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.records import RunResult, read_jsonl
from builder.core.store import ResultStore
from recipes.swe_bench import to_candidate
from tests.support.docker import PYTHON
from tests.support.git import GitRepo
from tests.support.records import swe_record
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS
from validation import phases
from validation.phases import OTHER, PhaseClock, branches, phase
from validation.stage import ValidateStage


class _Fake:
    """Wall, own-CPU and children's-CPU clocks the test moves by hand."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.wall = 100.0
        self.cpu: dict[int, float] = {}  # by thread
        self.children = 50.0
        monkeypatch.setattr(phases.time, "perf_counter", lambda: self.wall)
        monkeypatch.setattr(phases, "_thread_cpu", self.thread_cpu)
        monkeypatch.setattr(phases, "_children_cpu", lambda: self.children)

    def thread_cpu(self) -> float:
        return self.cpu.setdefault(threading.get_ident(), 10.0)

    def tick(self, wall: float, cpu: float = 0.0, children: float = 0.0) -> None:
        """Time passes; this thread used ``cpu``, children waited for ``children``."""
        self.wall += wall
        self.cpu[threading.get_ident()] = self.thread_cpu() + cpu
        self.children += children


def test_nested_phases_count_exclusive_time_and_add_up_to_the_whole(monkeypatch):
    fake = _Fake(monkeypatch)
    fake.children += 7.0  # a child waited for before the record began: no part of it
    with PhaseClock().running() as clock:
        fake.tick(wall=1, cpu=0.5)
        with phase("build"):
            fake.tick(wall=2, cpu=1, children=3)
            with phase("run.golden"):  # build's clock stops meanwhile
                fake.tick(wall=4, cpu=0.25, children=2)
            fake.tick(wall=1)
        with phase("run.golden"):
            fake.tick(wall=0.5)
        found = clock.snapshot()
    assert found["phases"]["build"] == {
        "wall_s": 3.0, "cpu_s": 4.0, "cpu_self_s": 1.0, "cpu_children_s": 3.0, "count": 1,
    }  # fmt: skip
    assert found["phases"]["run.golden"] == {
        "wall_s": 4.5, "cpu_s": 2.25, "cpu_self_s": 0.25, "cpu_children_s": 2.0, "count": 2,
    }  # fmt: skip
    assert found["phases"][OTHER]["wall_s"] == 1.0
    assert found["phases"][OTHER]["cpu_s"] == 0.5
    assert (found["wall_s"], found["cpu_s"]) == (8.5, 6.75)
    assert phases.runs(found) == 2


def test_the_sides_share_the_wall_time_they_run_at_the_same_time(monkeypatch):
    """Two lanes in run.golden for 2 s together are 2 s of the record, not 4."""
    fake = _Fake(monkeypatch)
    inside = threading.Barrier(3)
    ticked = threading.Barrier(3)

    def side(cpu: float) -> None:
        with phase("run.golden"):
            inside.wait()
            ticked.wait()
            fake.tick(wall=0, cpu=cpu)  # the thread's own, read by its lane as it leaves

    with PhaseClock().running() as clock:
        with phase("checkout"):
            fake.tick(wall=1)
            with branches() as branch:
                threads = [threading.Thread(target=branch(lambda: side(0.5))) for _ in "ab"]
                for thread in threads:
                    thread.start()
                inside.wait()
                fake.tick(wall=2)
                ticked.wait()
                for thread in threads:
                    thread.join()
        found = clock.snapshot()
    assert found["phases"]["run.golden"]["wall_s"] == 2.0
    assert found["phases"]["run.golden"]["count"] == 2
    assert found["phases"]["run.golden"]["cpu_self_s"] == 1.0
    assert found["phases"]["checkout"]["wall_s"] == 1.0
    assert found["wall_s"] == 3.0


def test_real_time_adds_up_and_children_count_where_they_were_waited_for():
    busy = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    started = time.perf_counter()
    with PhaseClock().running() as clock:
        with phase("run.golden"):
            subprocess.run([sys.executable, "-c", busy], check=True)
        with branches() as branch:
            lanes = [threading.Thread(target=branch(lambda: time.sleep(0.2))) for _ in "ab"]
            for lane in lanes:
                lane.start()
            for lane in lanes:
                lane.join()
        found = clock.snapshot()
    elapsed = time.perf_counter() - started
    assert found["phases"]["run.golden"]["cpu_children_s"] >= 0.25
    assert found["phases"][OTHER]["cpu_children_s"] < 0.05
    # two lanes sleeping 0.2 s side by side: about 0.2 s of the record's wall time, not 0.4
    assert 0.15 < found["phases"][OTHER]["wall_s"] < 0.38
    assert found["wall_s"] <= elapsed
    assert found["wall_s"] == pytest.approx(sum(e["wall_s"] for e in found["phases"].values()))
    assert found["process_cpu_s"] >= found["phases"]["run.golden"]["cpu_children_s"]


def test_each_record_thread_has_its_own_clock_and_other_threads_none():
    """Records validated in threads at once (the joblib executor) time only their own work;
    a thread not started as a lane of a record times nothing."""
    found: dict[str, dict] = {}
    ready = threading.Barrier(2)

    def record(name: str) -> None:
        with PhaseClock().running() as clock:
            with phase(name):
                ready.wait()  # both records are in their phase at once
                stray = threading.Thread(target=_stray)
                stray.start()
                stray.join()
            found[name] = clock.snapshot()

    threads = [threading.Thread(target=record, args=(name,)) for name in ("build", "resolve")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(found["build"]["phases"]) == {"build", OTHER}
    assert set(found["resolve"]["phases"]) == {"resolve", OTHER}
    with phase("nowhere"):  # no clock in this thread: nothing happens
        pass


def _stray() -> None:
    with phase("stray"):
        pass


def test_a_phase_added_afterwards_joins_the_written_file(tmp_path, monkeypatch):
    fake = _Fake(monkeypatch)
    path = tmp_path / phases.FILE
    with PhaseClock().running() as clock:
        with phase("grading"):
            fake.tick(wall=2, cpu=1)
        clock.write(path, instance_id="a__b-1")
    assert phases.add(path, "store", 0.5, 0.25)
    found = phases.read(path)
    assert found["instance_id"] == "a__b-1"
    assert found["phases"]["store"] == {
        "wall_s": 0.5, "cpu_s": 0.25, "cpu_self_s": 0.25, "cpu_children_s": 0.0, "count": 1,
    }  # fmt: skip
    assert (found["wall_s"], found["cpu_s"]) == (2.5, 1.25)
    assert not phases.add(tmp_path / "none" / phases.FILE, "store", 1.0, 1.0)


@pytest.mark.slow
def test_a_validation_writes_its_phases_beside_its_logs(tmp_path, work_dir):
    """Two runs per side, coverage measured and existing tests run, through the pipeline: every
    phase is there, the store write last, the runs counted are the runs made, and the times
    add up."""
    repo = GitRepo(tmp_path / "repo")
    old = "\n\ndef test_old():\n    assert add(0, 0) == 0\n"
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS + old})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    candidate = to_candidate(
        swe_record("fixture/phases", 1, base, patch, repo.diff({"tests/test_pkg.py": ADD_TEST}))
    )
    settings = ValidationConfig(
        backend="local", python=PYTHON, timeout_s=20.0, packages=["pytest"], repetitions=2,
        coverage=True,
    )  # fmt: skip
    stage = ValidateStage(settings, work_dir, {"fixture/phases": str(repo.path)})
    stats = StageStats(stage.name)
    store = ResultStore(tmp_path / "store")
    kept = list(run_stage(stage, [candidate], store=store, executor=Executor(),
                          rejected=RejectedLog(), stats=stats))  # fmt: skip
    assert [instance.instance_id for instance in kept] == [candidate.instance_id], stats
    logs = work_dir / "logs" / candidate.instance_id / stage.key(candidate)[:12]
    found = phases.read(logs / phases.FILE)
    names = {"mirror", "resolve", "build", "checkout", "run.golden", "run.repeat", "run.existing"}
    assert names | {"coverage", "grading", "record", "store", OTHER} == set(found["phases"])
    runs = list(read_jsonl(logs / "runs.jsonl", RunResult))
    assert phases.runs(found) == len(runs) == 6
    counts = {name: found["phases"][name]["count"] for name in names | {"store"}}
    # build: the environment, then the one with the test files' imports; checkout: both sides
    # opened (one phase) and closed, the test patch undone per side, the run dir removed
    assert counts == {
        "mirror": 1, "resolve": 1, "build": 2, "checkout": 6, "run.golden": 2, "run.repeat": 2,
        "run.existing": 2, "store": 1,
    }  # fmt: skip
    for entry in found["phases"].values():
        assert min(entry["wall_s"], entry["cpu_s"]) >= 0
    assert found["phases"]["run.golden"]["cpu_children_s"] > 0  # the test runs are children
    assert found["phases"]["store"]["wall_s"] > 0
    assert found["wall_s"] == pytest.approx(sum(e["wall_s"] for e in found["phases"].values()))
    assert found["wall_s"] >= sum(run.duration_s for run in runs) / 2  # both sides at once
    assert (found["instance_id"], found["key"]) == (candidate.instance_id, stage.key(candidate))
