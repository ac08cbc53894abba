"""A run over a store with one corrupted entry completes, recomputes only that record, rewrites
the entry whole and says once, on the console, which file was bad."""

import logging
import subprocess
import sys
from pathlib import Path

from builder.core.executor import Executor
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.store import ResultStore
from tests.support.records import candidate
from tests.support.store_entries import KeepAll

ROOT = Path(__file__).resolve().parents[3]
RECORDS = [candidate(instance_id=f"o__r-{n}", pull_number=n) for n in range(1, 7)]


def _run(store: ResultStore) -> tuple[KeepAll, StageStats, list]:
    stage, stats = KeepAll(), StageStats(KeepAll.name)
    outputs = list(
        run_stage(stage, RECORDS, store=store, executor=Executor("threads", 2),
                  rejected=RejectedLog(), stats=stats)
    )  # fmt: skip
    return stage, stats, outputs


def test_one_corrupted_entry_recomputes_only_its_record(tmp_path, caplog):
    store = ResultStore(tmp_path / "store")
    _, _, first = _run(store)
    bad = store.path(KeepAll.name, KeepAll().key(RECORDS[2]))
    bad.write_bytes(bad.read_bytes()[:40])  # a write cut short (a full disk, a copy killed)
    caplog.set_level(logging.WARNING)

    stage, stats, outputs = _run(store)
    assert sorted(stage.processed) == [3]
    assert (stats.seen, stats.cached) == (6, 5)
    assert outputs == first
    assert [r.getMessage() for r in caplog.records] == [
        f"result store: {bad}: not valid JSON (Unterminated string starting at: line 1 column 8 "
        "(char 7)); the record is recomputed"
    ]
    assert store.problem(bad) is None
    assert [p.name for p in bad.parent.iterdir()] == [bad.name]  # no temporary left

    again, stats, _ = _run(store)
    assert again.processed == [] and stats.cached == 6


SCRIPT = """
import sys
from pathlib import Path

from builder.core.executor import Executor
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.store import ResultStore
from tests.support.records import candidate
from tests.support.store_entries import KeepAll

records = [candidate(instance_id=f"o__r-{n}", pull_number=n) for n in range(1, 7)]
stage, stats = KeepAll(), StageStats(KeepAll.name)
kept = run_stage(stage, records, store=ResultStore(Path(sys.argv[1])),
                 executor=Executor("threads", 2), rejected=RejectedLog(), stats=stats)
print(len(list(kept)), stats.cached, stage.processed)
"""


def test_the_console_of_a_real_process_names_the_bad_file_once(tmp_path):
    """No logging set up (as in ``swt-builder build``): the warning still reaches stderr."""
    store = ResultStore(tmp_path / "store")
    _run(store)
    bad = store.path(KeepAll.name, KeepAll().key(RECORDS[4]))
    bad.write_bytes(b"\xff\xfe garbage")

    healed = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(store.root)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=True,
    )  # fmt: skip
    assert healed.stdout == "6 5 [5]\n"
    assert healed.stderr == (
        f"result store: {bad}: not UTF-8 (byte 0: invalid start byte); the record is recomputed\n"
    )
    assert store.problem(bad) is None
    assert _run(store)[1].cached == 6
