"""A per-record phase clock: where one validation's wall and CPU time go (``phases.json``).

A validation's work is split into named phases (:data:`PHASES`); whatever is in none is
:data:`OTHER`. Times are **exclusive**: a phase entered inside another stops the outer one's
clock until it ends, so the phases add up to the record's whole time and nothing counts twice.

The clock of the record being validated is found through a context variable, set per thread by
:meth:`PhaseClock.running`: records validated at the same time in threads (the joblib
executor) or processes each have their own, and code that runs outside any validation (the
evaluation harness, a probe) times nothing. The two sides of a record run at the same time in
threads of their own (:func:`branches`): each is a *lane* of the record's clock, and while
several lanes run, each instant's wall time is shared equally between them, so the phases'
wall times still add up to the record's elapsed wall time.

CPU time is the thread's own (``time.thread_time``: user + system of the thread that is in the
phase; the process's ``RUSAGE_SELF`` would count every thread of the process, the other side's
and other records' alike) plus its children's: the growth of ``RUSAGE_CHILDREN`` (user +
system of every child, and of their descendants that they waited for), given to the phase that
the lane reading it is in. A child's time is counted only once it has been waited for, which
the code that started it does before its phase ends, so it lands in that phase; when two lanes
or records wait for children at the same instant, one may be given the other's. What the
kernel never hands up counts nowhere: a Docker container's processes, and those inside a
bubblewrap sandbox with its own PID namespace (the local backend's test runs and builds:
half a second of CPU in there adds a few milliseconds to this process's ``RUSAGE_CHILDREN``),
whose wall time is still their phase's. ``process_cpu_s`` (``RUSAGE_SELF`` and
``RUSAGE_CHILDREN`` over the record) is the same sum taken process-wide: a check when one
record runs at a time.

The clock is a measurement, never part of a result: it is written beside the record's logs,
not into the record, whose bytes must not depend on timing.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import resource
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from builder.core.files import atomic_write_text

FILE = "phases.json"
"""The clock's file in a record's logs directory (``logs/<instance>/<key>/``)."""

VERSION = 1
"""Bump when the file's layout or what a phase holds changes."""

OTHER = "other"
"""The time of a record spent in no phase."""

RUN_PREFIX = "run."
"""Test runs are phases ``run.<kind>``: the golden first pair, repetitions, existing tests."""

PHASES = (
    "mirror",  # the repository's history with the base commit (cloned or fetched when new)
    "resolve",  # the environment spec of the record's repository version
    "build",  # the environment: prepared (built or found), with the test files' imports
    "checkout",  # each side's checkout and its patches, the test patch undone, their removal
    "run.golden",  # the golden tests' first pair (under coverage when it is measured)
    "run.repeat",  # the repetitions of the golden tests
    "run.existing",  # the existing tests without the test patch
    "coverage",  # reading coverage reports, the test patch's changes, change coverage
    "grading",  # reading each run's verdicts from its report, grading the transitions
    "record",  # the kept instance: the codebase's size, statistics, run metadata
    "store",  # the result written to the store (timed by the pipeline, added afterwards)
)
"""The phases validation times, in the order they usually come."""

_T = TypeVar("_T")


def _thread_cpu() -> float:
    return time.thread_time()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu() -> float:
    """This process's CPU, every thread's, and its children's: ``process_cpu_s``, a check."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + _children_cpu()


class _ChildrenLedger:
    """The process's ``RUSAGE_CHILDREN`` as last read: it counts every child of the process, so
    each growth is handed out once, to whichever lane of whichever clock reads it first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = _children_cpu()

    def take(self) -> float:
        """The children's CPU seconds since the last take."""
        with self._lock:
            now = _children_cpu()
            grown, self._last = now - self._last, now
            return max(grown, 0.0)


_CHILDREN = _ChildrenLedger()
"""One per process, as the counter it reads is."""


@dataclasses.dataclass(eq=False)
class _Lane:
    """One thread's part in a record: its phases entered (innermost last) and CPU mark."""

    clock: PhaseClock
    stack: list[str]
    thread: int
    cpu_mark: float
    waiting: bool = False  # while its branches run, the lane's wall time is theirs


_LANE: contextvars.ContextVar[_Lane | None] = contextvars.ContextVar("swt_phase_lane", default=None)


def _current() -> _Lane | None:
    """The lane of this thread; a lane seen from another thread (a copied context) is none."""
    lane = _LANE.get()
    if lane is None or lane.thread != threading.get_ident():
        return None
    return lane


class PhaseClock:
    """The phases of one record: exclusive wall and CPU seconds per phase, and entries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lanes: list[_Lane] = []
        self._mark = time.perf_counter()
        self._process_start = _process_cpu()
        self.wall: defaultdict[str, float] = defaultdict(float)
        self.cpu_self: defaultdict[str, float] = defaultdict(float)
        self.cpu_children: defaultdict[str, float] = defaultdict(float)
        self.count: defaultdict[str, int] = defaultdict(int)

    @contextlib.contextmanager
    def running(self) -> Iterator[PhaseClock]:
        """Times this thread's work in the block (its first lane, in :data:`OTHER`); children
        waited for before it began are no part of it."""
        _CHILDREN.take()
        self._mark = time.perf_counter()
        self._process_start = _process_cpu()
        with self._lane([OTHER]):
            yield self

    @contextlib.contextmanager
    def _lane(self, stack: list[str]) -> Iterator[_Lane]:
        """A lane of this clock for the current thread, starting in ``stack``'s last phase."""
        lane = _Lane(self, list(stack), threading.get_ident(), _thread_cpu())
        with self._lock:
            self._advance_wall()
            self.cpu_children[lane.stack[-1]] += _CHILDREN.take()
            self._lanes.append(lane)
        token = _LANE.set(lane)
        try:
            yield lane
        finally:
            _LANE.reset(token)
            self._step(lane, lambda: self._lanes.remove(lane))

    def _step(self, lane: _Lane, change: Callable[[], Any]) -> None:
        """A transition of ``lane`` (a phase entered or left, a wait begun or ended): the time
        up to now is booked to where every lane was, then ``change`` is made."""
        cpu = _thread_cpu()
        children = _CHILDREN.take()
        with self._lock:
            self._advance_wall()
            current = lane.stack[-1]
            self.cpu_self[current] += cpu - lane.cpu_mark
            self.cpu_children[current] += children
            lane.cpu_mark = cpu
            change()

    def _advance_wall(self) -> None:
        """The wall time since the last transition, shared equally by the running lanes' current
        phases (by the waiting ones' in the instant no branch of theirs runs yet)."""
        now = time.perf_counter()
        elapsed, self._mark = now - self._mark, now
        running = [lane.stack[-1] for lane in self._lanes if not lane.waiting]
        phases = running or [lane.stack[-1] for lane in self._lanes]  # none: the clock stopped
        for name in phases:
            self.wall[name] += elapsed / len(phases)

    def snapshot(self) -> dict[str, Any]:
        """The phases up to now, JSON-able (called from a lane of this clock, its CPU included;
        other lanes' CPU up to their last transition). ``process_cpu_s`` is the process's own
        and children's CPU over the same time, every thread's: the phases' CPU when one record
        runs at a time, more when others run beside it."""
        lane = _current()
        if lane is not None and lane.clock is self:
            self._step(lane, lambda: None)
        else:
            with self._lock:
                self._advance_wall()
        with self._lock:
            names = sorted({*self.wall, *self.cpu_self, *self.cpu_children, *self.count})
            phases = {
                name: _entry(
                    self.wall[name],
                    self.cpu_self[name],
                    self.cpu_children[name],
                    self.count[name],
                )
                for name in names
            }
        return {
            "version": VERSION,
            "wall_s": _seconds(sum(entry["wall_s"] for entry in phases.values())),
            "cpu_s": _seconds(sum(entry["cpu_s"] for entry in phases.values())),
            "process_cpu_s": _seconds(_process_cpu() - self._process_start),
            "phases": phases,
        }

    def write(self, path: Path, **about: str) -> None:
        """The snapshot, with ``about`` (the instance id, the result key), written to ``path``."""
        atomic_write_text(path, _dumps({**about, **self.snapshot()}))

    def _enter(self, lane: _Lane, name: str) -> None:
        """``lane`` in ``name`` from now on, one more entry of it (the clock's lock held)."""
        lane.stack.append(name)
        self.count[name] += 1


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """The block's time is ``name``'s (and not its enclosing phase's) in the current record's
    clock; nothing when no clock runs in this thread."""
    lane = _current()
    if lane is None:
        yield
        return
    clock = lane.clock
    clock._step(lane, lambda: clock._enter(lane, name))
    try:
        yield
    finally:
        clock._step(lane, lane.stack.pop)


def timed(name: str, function: Callable[..., _T]) -> Callable[..., _T]:
    """``function``, its calls timed as ``name`` (e.g. a cleanup an exit stack calls later)."""

    def call(*args: Any, **kwargs: Any) -> _T:
        with phase(name):
            return function(*args, **kwargs)

    return call


@contextlib.contextmanager
def branches() -> Iterator[Callable[[Callable[[], _T]], Callable[[], _T]]]:
    """Work of the current record run in other threads: yields a wrapper under which a function
    runs as a lane of its own (starting in the phase the current lane is in), wherever it is
    called; the current lane waits while the block runs, its wall time the branches'."""
    parent = _current()
    if parent is None:
        yield lambda function: function
        return
    clock = parent.clock
    start = parent.stack[-1]

    def wrap(function: Callable[[], _T]) -> Callable[[], _T]:
        def run() -> _T:
            with clock._lane([start]):
                return function()

        return run

    clock._step(parent, lambda: setattr(parent, "waiting", True))
    try:
        yield wrap
    finally:
        clock._step(parent, lambda: setattr(parent, "waiting", False))


def add(path: Path, name: str, wall_s: float, cpu_s: float) -> bool:
    """Add one entry of ``name`` measured elsewhere (``cpu_s``: the measuring thread's own) to
    the clock written at ``path``; whether there was one to add to."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    phases = found.setdefault("phases", {})
    entry = phases.get(name) or _entry(0.0, 0.0, 0.0, 0)
    phases[name] = _entry(
        entry["wall_s"] + wall_s,
        entry["cpu_self_s"] + cpu_s,
        entry["cpu_children_s"],
        entry["count"] + 1,
    )
    found["wall_s"] = _seconds(found.get("wall_s", 0.0) + wall_s)
    found["cpu_s"] = _seconds(found.get("cpu_s", 0.0) + cpu_s)
    atomic_write_text(path, _dumps(found))
    return True


def read(path: Path) -> dict[str, Any]:
    """A clock's file as written."""
    return json.loads(path.read_text(encoding="utf-8"))


def runs(found: dict[str, Any]) -> int:
    """The test runs a clock's file counts (every ``run.*`` phase's entries)."""
    return sum(
        entry["count"] for name, entry in found["phases"].items() if name.startswith(RUN_PREFIX)
    )


def _entry(wall: float, cpu_self: float, cpu_children: float, count: int) -> dict[str, Any]:
    return {
        "wall_s": _seconds(wall),
        "cpu_s": _seconds(cpu_self + cpu_children),
        "cpu_self_s": _seconds(cpu_self),
        "cpu_children_s": _seconds(cpu_children),
        "count": count,
    }


def _seconds(value: float) -> float:
    return round(max(value, 0.0), 6)


def _dumps(found: dict[str, Any]) -> str:
    return json.dumps(found, indent=1, sort_keys=True) + "\n"
