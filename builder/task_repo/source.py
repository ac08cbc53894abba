"""Read a SWE-bench task repo (``sweb.yaml``, ``tasks/<id>/``) as Candidates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.core.pipeline import Outcome
from builder.task_repo.format import TaskRepoError, read_config, read_task, task_dirs
from recipes.swe_bench import SourceError, candidates_of

SOURCE_NAME = "task-repo"


def read_tasks(root: Path, split: str = "test") -> Iterator[tuple[str, dict[str, Any] | str]]:
    """``(origin, instance dict)`` per task of ``split`` (a task that cannot be read comes as
    an error text); SourceError when ``root`` is no task repo."""
    try:
        read_config(root)
        folders = task_dirs(root)
    except TaskRepoError as error:
        raise SourceError(str(error)) from error
    for folder in folders:
        origin = f"tasks/{folder.name}"
        try:
            task = read_task(folder)
        except TaskRepoError as error:
            yield origin, str(error)
            continue
        if task.meta.get("split") == split:
            yield origin, task.instance()


def task_repo_candidates(root: Path, split: str = "test") -> Iterator[tuple[Any, Outcome]]:
    """Yield ``(raw, outcome)`` per task of ``split``: a Candidate, or a named drop."""
    yield from candidates_of(read_tasks(Path(root), split), SOURCE_NAME)
