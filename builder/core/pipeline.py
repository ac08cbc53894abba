"""Stages as generators over records: verdicts, the result store, stats and rejected files."""

from __future__ import annotations

import abc
import collections
import dataclasses
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from builder.core import evidence_files
from builder.core.errors import SwtError
from builder.core.executor import Executor
from builder.core.faults import is_infrastructure
from builder.core.files import write_text_if_changed
from builder.core.records import DropReason, Record, Verdict
from builder.core.store import ResultStore, result_key


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a stage made of one input: its verdict and, when kept, the output record."""

    verdict: Verdict
    output: Record | None = None

    def __post_init__(self) -> None:
        if self.verdict.kept != (self.output is not None):
            raise ValueError("a kept verdict needs an output record and a drop must have none")

    @classmethod
    def keep(cls, stage: str, output: Record, **evidence: str) -> Outcome:
        return cls(Verdict(stage=stage, evidence=evidence), output)

    @classmethod
    def drop(cls, stage: str, reason: DropReason, **evidence: str) -> Outcome:
        return cls(Verdict(stage=stage, reason=reason, evidence=evidence))


@dataclasses.dataclass
class StageStats:
    """Mergeable counters of one stage: seen, kept, reused from the store, drops by reason, and
    infrastructure faults by fault (apart from the drops: no verdict, tried again next build)."""

    stage: str
    seen: int = 0
    kept: int = 0
    cached: int = 0
    dropped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    faults: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    @property
    def judged(self) -> int:
        """Records given a verdict, kept or dropped: those seen less the faults."""
        return self.seen - sum(self.faults.values())

    def count(self, outcome: Outcome, cached: bool) -> None:
        self.seen += 1
        self.cached += int(cached)
        verdict = outcome.verdict
        if verdict.kept:
            self.kept += 1
        elif is_infrastructure(verdict.reason):
            self.faults[fault_of(verdict)] += 1
        else:
            self.dropped[verdict.reason.value] += 1

    def __add__(self, other: StageStats) -> StageStats:
        if other.stage != self.stage:
            raise ValueError(f"cannot merge stats of {self.stage!r} and {other.stage!r}")
        return StageStats(
            self.stage,
            self.seen + other.seen,
            self.kept + other.kept,
            self.cached + other.cached,
            self.dropped + other.dropped,
            self.faults + other.faults,
        )

    def to_dict(self) -> dict[str, Any]:
        found = {
            "stage": self.stage,
            "seen": self.seen,
            "kept": self.kept,
            "dropped": dict(sorted(self.dropped.items())),
        }
        if self.faults:
            found["infra_errors"] = dict(sorted(self.faults.items()))
        return found


def fault_of(verdict: Verdict) -> str:
    """The fault an infrastructure drop names (its evidence's ``fault``; else its reason)."""
    return verdict.evidence.get("fault") or verdict.reason.value


EARLY_STOP = 3
"""A stage stops once this many records computed in a row, from its first, hit the same
infrastructure fault (or every record of a smaller stage did): the machine, not the records."""


class InfrastructureStop(SwtError, RuntimeError):
    """Every record a stage computed hit the same fault of the machine: the build stops, with
    one line naming it (nothing of those records is stored)."""


class Stage(abc.ABC):
    """One step of the pipeline. Subclasses say what of the config affects their results."""

    name: ClassVar[str]
    output_model: ClassVar[type[Record]]

    @abc.abstractmethod
    def fingerprint(self) -> Any:
        """JSON-able settings this stage's results depend on (part of the store key)."""

    @abc.abstractmethod
    def process(self, record: Record) -> Outcome:
        """Judge one record. Instance-level failures are drops; toolkit bugs raise."""

    def key(self, record: Record) -> str:
        return result_key(self.name, self.fingerprint(), record.model_dump(mode="json"))

    def confirm(self, fault: str, first: Verdict) -> str | None:
        """Before an early stop on ``fault`` (:data:`EARLY_STOP`): what the machine's fault is,
        as a check that runs no record's code finds it now, or None when that check finds the
        machine working (no stop: each record stays an ``infra_error``, tried again next
        build). By default the first record's error: its evidence is the builder's own (git,
        the daemon, the installer), which no record's code writes; a stage whose records' code
        can bring a fault about or imitate it (``FORGEABLE_FAULTS``) checks the machine."""
        error = first.evidence.get("error", "").splitlines()
        return error[0] if error else first.reason.value

    def holds(self, record: Record, stored: Outcome) -> bool:
        """Whether a result stored under ``record``'s key still holds: a stage whose results
        depend on something its key cannot name cheaply checks it here (a stored result that
        no longer holds is computed again)."""
        return True

    def stored(self, record: Record, key: str, wall_s: float, cpu_s: float) -> None:
        """``record``'s result, computed by this build, was written to the store under ``key``
        in ``wall_s`` seconds (``cpu_s`` of the writing thread's CPU): a stage that keeps a
        per-record cost breakdown adds it there. Nothing by default."""
        return None

    def group(self, record: Record) -> str:
        """Records of one group prefer one worker on a cluster (e.g. those sharing an
        environment); "" for no preference."""
        return ""

    def for_workers(self) -> Stage | WorkerStage:
        """What a cluster's workers get: the stage itself (the default, when it holds nothing
        of this machine), or a WorkerStage that builds it again in a worker-local work dir."""
        return self

    def evidence_root(self) -> Path | None:
        """Where the files its evidence names (logs) are kept: a worker's are carried back
        with each result and kept here on the client. None: its evidence names no file."""
        return None


WORKER_DIR_ENV = "SWT_WORKER_DIR"
"""Where a worker keeps its caches (mirrors, environments); default: a ``swt-work`` dir in the
Dask worker's own local directory."""


@dataclasses.dataclass(frozen=True)
class WorkerStage:
    """A stage rebuilt on each worker by ``factory(work_dir=<worker dir>, **arguments)``, once
    per worker process and reused by its tasks; nothing of the client's machine travels."""

    factory: Callable[..., Stage]
    arguments: Mapping[str, Any]
    fingerprint: str  # tells stages of different settings apart in a worker's cache

    def build(self) -> Stage:
        directory = worker_directory()
        cache_key = (self.fingerprint, str(directory))
        with _BUILT_LOCK:
            stage = _BUILT.get(cache_key)
            if stage is None:
                stage = self.factory(work_dir=directory, **self.arguments)
                _BUILT[cache_key] = stage
            return stage


_BUILT: dict[tuple[str, str], Stage] = {}
_BUILT_LOCK = threading.Lock()


def worker_directory() -> Path:
    """This worker's own work dir: ``$SWT_WORKER_DIR``, else under the Dask worker's local
    directory (the current directory outside a worker)."""
    configured = os.environ.get(WORKER_DIR_ENV)
    if configured:
        return Path(configured)
    distributed = sys.modules.get("distributed")
    if distributed is not None:
        try:
            return Path(distributed.get_worker().local_directory) / "swt-work"
        except ValueError:  # not inside a worker
            pass
    return Path.cwd() / "swt-work"


def _encode(outcome: Outcome) -> dict[str, Any]:
    output = outcome.output.model_dump(mode="json") if outcome.output is not None else None
    return {"verdict": outcome.verdict.model_dump(mode="json"), "output": output}


def _decode(stage: Stage, stored: dict[str, Any]) -> Outcome:
    verdict = Verdict.model_validate_json(json.dumps(stored["verdict"]))
    output = stored["output"]
    if output is not None:
        output = stage.output_model.model_validate_json(json.dumps(output))
    return Outcome(verdict, output)


CARRIED = "carried"
"""A worker's result's files (see :func:`_compute`): taken off before the result is stored."""


def _compute(stage: Stage | WorkerStage, record: Record) -> dict[str, Any]:
    """One task, wherever it runs: the outcome as the store keeps it (JSON-able). On a
    worker, the files its evidence names come along (``CARRIED``: the worker's root and
    the files' bytes), to be kept on the client."""
    if not isinstance(stage, WorkerStage):
        return _encode(stage.process(record))
    built = stage.build()
    outcome = built.process(record)
    encoded = _encode(outcome)
    root = built.evidence_root()
    if root is not None:
        files = evidence_files.named_files(outcome.verdict.evidence, root)
        if files:
            encoded[CARRIED] = {"root": os.path.abspath(root), "files": files}
    return encoded


def _received(stage: Stage, encoded: dict[str, Any]) -> dict[str, Any]:
    """A result as the client stores it: files carried from a worker written under the
    stage's evidence root, the evidence naming them there."""
    carried = encoded.pop(CARRIED, None)
    root = stage.evidence_root()
    if carried is None or root is None:
        return encoded
    verdict = dict(encoded["verdict"])
    verdict["evidence"] = evidence_files.place(
        verdict["evidence"], carried["files"], carried["root"], root
    )
    return {**encoded, "verdict": verdict}


class RejectedLog:
    """Collects the dropped inputs of each stage and writes ``rejected/<stage>.jsonl``."""

    def __init__(self) -> None:
        self._rows: dict[str, list[str]] = collections.defaultdict(list)

    def add(self, record: Record | dict[str, Any], verdict: Verdict) -> None:
        data = record.model_dump(mode="json") if isinstance(record, Record) else record
        row = {
            "stage": verdict.stage,
            "reason": verdict.reason.value,
            "evidence": verdict.evidence,
            "record": data,
        }
        text = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a malformed record's lone surrogate: kept as its escape
            text = json.dumps(row, sort_keys=True, ensure_ascii=True, default=str)
        self._rows[verdict.stage].append(text)

    def write(self, directory: Path, stages: Iterable[str]) -> None:
        for stage in stages:
            rows = self._rows.get(stage, [])
            write_text_if_changed(directory / f"{stage}.jsonl", "".join(r + "\n" for r in rows))


def run_stage(
    stage: Stage,
    records: Iterable[Record],
    *,
    store: ResultStore,
    executor: Executor,
    rejected: RejectedLog,
    stats: StageStats,
    progress: Any = None,
) -> Iterator[Record]:
    """Yield the kept outputs in input order; reuse stored results, compute the rest.

    Each result is stored here, by the caller, as it arrives (workers of a cluster write
    nothing the caller reads; the files a result's evidence names come back with it and are
    kept under the stage's ``evidence_root``): a run killed part way keeps every result that
    came back. An
    infrastructure fault (``builder.core.faults``) is no result: it is counted and listed
    apart, never stored (one found stored is computed again, as is one the stage says no
    longer :meth:`~Stage.holds`), and a stage whose first computed records all hit the same one
    stops (InfrastructureStop, see :data:`EARLY_STOP`)."""
    inputs = list(records)
    keys = [stage.key(record) for record in inputs]
    outcomes: dict[int, tuple[Outcome, bool]] = {}
    pending = []
    for index, key in enumerate(keys):
        stored = store.get(stage.name, key)
        decoded = None if stored is None else _decode(stage, stored)
        if (
            decoded is None
            or is_infrastructure(decoded.verdict.reason)
            or not stage.holds(inputs[index], decoded)
        ):
            pending.append(index)
        else:
            outcomes[index] = (decoded, True)
    if progress is not None:
        progress.reset(total=len(inputs))
        progress.update(len(outcomes))
    shipped = stage.for_workers() if executor.distributed else stage
    tasks = [(_compute, (shipped, inputs[i])) for i in pending]
    groups = [stage.group(inputs[i]) for i in pending]
    stop = _EarlyStop(stage, len(pending), len(inputs))
    for position, received in executor.run(tasks, groups):
        index = pending[position]
        encoded = _received(stage, received)
        outcome = _decode(stage, encoded)
        if not is_infrastructure(outcome.verdict.reason):
            _timed_put(stage, store, inputs[index], keys[index], encoded)
        stop.check(outcome.verdict)
        outcomes[index] = (outcome, False)
        if progress is not None:
            progress.update(1)
    for index, record in enumerate(inputs):
        outcome, cached = outcomes[index]
        stats.count(outcome, cached)
        if outcome.verdict.kept:
            yield outcome.output
        else:
            rejected.add(record, outcome.verdict)


def _timed_put(
    stage: Stage, store: ResultStore, record: Record, key: str, encoded: dict[str, Any]
) -> None:
    """Store a computed result and tell the stage what the write took (:meth:`Stage.stored`)."""
    started, cpu = time.perf_counter(), time.thread_time()
    store.put(stage.name, key, encoded)
    stage.stored(record, key, time.perf_counter() - started, time.thread_time() - cpu)


class _EarlyStop:
    """Watches a stage's computed results in the order they come back: raises
    InfrastructureStop when the first :data:`EARLY_STOP` (or, in a stage that computes every
    record and fewer than that, all of them) hit the same infrastructure fault."""

    def __init__(self, stage: Stage, pending: int, inputs: int) -> None:
        self.stage = stage
        enough = pending if pending == inputs else 0  # cached results say the machine worked
        self.needed = EARLY_STOP if pending >= EARLY_STOP else enough
        self.seen: list[Verdict] = []

    def check(self, verdict: Verdict) -> None:
        if self.seen is None or not self.needed:
            return
        first = self.seen[0] if self.seen else verdict
        if not is_infrastructure(verdict.reason) or fault_of(verdict) != fault_of(first):
            self.seen = None  # the machine did something else: no stop
            return
        self.seen.append(verdict)
        if len(self.seen) == self.needed:
            found = self.stage.confirm(fault_of(first), first)
            if found is None:  # the machine works without them: their own doing, or passing
                self.seen = None
                return
            raise InfrastructureStop(
                f"{self.stage.name}: stopped: the first {self.needed} records computed all hit "
                f"the same fault of this machine ({fault_of(first)}): {found}; nothing of them "
                "is stored, fix it and build again"
            )


def funnel_lines(funnel: Sequence[StageStats]) -> list[str]:
    """The drop funnel as aligned text lines (printed at the end of a run); infrastructure
    faults apart, below a stage's drops."""
    lines = []
    for stats in funnel:
        lines.append(f"{stats.stage:<10} {stats.seen:>6} in {stats.kept:>6} kept")
        for reason, count in sorted(stats.dropped.items()):
            lines.append(f"{'':<10} {count:>6} dropped: {reason}")
        for fault, count in sorted(stats.faults.items()):
            lines.append(f"{'':<10} {count:>6} infra_error: {fault} (not stored: tried again)")
    return lines
