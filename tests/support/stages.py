"""A stage for executor tests: it works in its own work dir and says where it ran."""

from __future__ import annotations

import os
import time
from pathlib import Path

from builder.core.pipeline import Outcome, Stage, WorkerStage
from builder.core.records import DropReason
from tests.support.records import candidate


class WhereStage(Stage):
    """Keeps even pull numbers; writes a marker into its work dir and names it, its pid and the
    work dir in the evidence; a drop names its log, ``logs/<id>/run.log`` of the work dir.
    ``delay_s``: each record takes that long (to kill a worker)."""

    name = "where"
    output_model = type(candidate())

    def __init__(self, work_dir: Path, delay_s: float = 0.0) -> None:
        self.work_dir = Path(work_dir)
        self.delay_s = delay_s

    def fingerprint(self):
        return {"delay": self.delay_s}

    def group(self, record):
        return str(record.pull_number % 2)

    def for_workers(self) -> WorkerStage:
        return WorkerStage(WhereStage, {"delay_s": self.delay_s}, "where")

    def evidence_root(self) -> Path:
        return self.work_dir

    def process(self, record):
        time.sleep(self.delay_s)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / f"{record.instance_id}.done").write_text("x")
        evidence = {"work_dir": str(self.work_dir), "pid": str(os.getpid())}
        if record.pull_number % 2:
            log = self.work_dir / "logs" / record.instance_id / "run.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(f"{record.instance_id} ran in {self.work_dir}\n")
            return Outcome.drop(self.name, DropReason.NO_FAIL_TO_PASS, log=str(log), **evidence)
        return Outcome.keep(self.name, record, **evidence)


def records(count: int):
    return [candidate(instance_id=f"o__r-{n}", pull_number=n) for n in range(1, count + 1)]
