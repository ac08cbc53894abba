"""Executors run independent per-record tasks: joblib threads/processes or a Dask cluster."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import joblib

Task = tuple[Callable[..., Any], tuple[Any, ...]]


class Executor:
    """Runs tasks and yields ``(position, result)`` as each finishes (completion order)."""

    def __init__(self, kind: str = "threads", jobs: int = 1, scheduler: str | None = None):
        if kind not in ("threads", "processes", "dask"):
            raise ValueError(f"unknown executor {kind!r}: use threads, processes or dask")
        if kind == "dask" and not scheduler:
            raise ValueError("the dask executor needs a scheduler address (executor_scheduler)")
        self.kind = kind
        self.jobs = max(1, jobs)
        self.scheduler = scheduler

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Any]]:
        if not tasks:
            return
        if self.jobs == 1 and self.kind != "dask":
            for position, (function, arguments) in enumerate(tasks):
                yield position, function(*arguments)
            return
        with self._backend():
            parallel = joblib.Parallel(
                n_jobs=self.jobs if self.kind != "dask" else -1,
                prefer="threads" if self.kind == "threads" else "processes",
                return_as="generator_unordered",
            )
            calls = (
                joblib.delayed(_tagged)(position, function, arguments)
                for position, (function, arguments) in enumerate(tasks)
            )
            yield from parallel(calls)

    @contextlib.contextmanager
    def _backend(self) -> Iterator[None]:
        if self.kind != "dask":
            yield
            return
        from dask.distributed import Client

        with Client(self.scheduler) as client, joblib.parallel_config(backend="dask"):
            client.wait_for_workers(1)
            yield


def _tagged(position: int, function: Callable[..., Any], arguments: tuple[Any, ...]):
    return position, function(*arguments)
