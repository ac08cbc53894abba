"""Read a SWE-bench task repo (``sweb.yaml``, ``tasks/<id>/``) as Candidates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.core.config import SizesConfig
from builder.core.pipeline import Outcome
from builder.core.records import DropReason
from builder.task_repo.format import TaskRepoError, read_config, read_task, task_entries
from builder.task_repo.safe_files import UnsafePath
from recipes.swe_bench import Refusal, SourceError, candidates_of

SOURCE_NAME = "task-repo"


def read_tasks(
    root: Path, split: str = "test"
) -> Iterator[tuple[str, dict[str, Any] | str | Refusal]]:
    """``(origin, instance dict)`` per task of ``split``; a task that cannot be read comes as
    its error text, one with a link or special file as an ``unsafe_path`` Refusal naming it
    (nothing of it is read further). SourceError when ``root`` is no task repo or its
    ``sweb.yaml`` or ``tasks/`` is a link."""
    try:
        read_config(root)
        entries = task_entries(root)
    except (TaskRepoError, UnsafePath) as error:
        raise SourceError(str(error)) from error
    for name, problem in entries:
        origin = f"tasks/{name}"
        if problem:
            yield origin, Refusal(DropReason.UNSAFE_PATH, problem)
            continue
        try:
            task = read_task(Path(root) / "tasks" / name)
        except UnsafePath as error:
            yield origin, Refusal(DropReason.UNSAFE_PATH, str(error))
            continue
        except TaskRepoError as error:
            yield origin, str(error)
            continue
        if task.meta.get("split") == split:
            yield origin, task.instance()


def task_repo_candidates(
    root: Path, split: str = "test", sizes: SizesConfig | None = None
) -> Iterator[tuple[Any, Outcome]]:
    """Yield ``(raw, outcome)`` per task of ``split``: a Candidate, or a named drop (``sizes``:
    the configuration's limits on a record's fields)."""
    yield from candidates_of(read_tasks(Path(root), split), SOURCE_NAME, sizes)
