"""What each semantics' runs (``strict.runs``, ``swt.runs``) use of the evaluation stage
(``builder.evaluate.stage``), which calls them: typed here so that neither imports the stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from builder.core.pipeline import Outcome
from builder.core.records import Candidate
from builder.evaluate.records import EvalTask
from validation.environments.environment import EnvironmentSpec


class EvaluateStage(Protocol):
    """The evaluation stage as the runs see it: its settings, work dir, mirrors, backend and
    environments, and the shared steps (a measurable spec, an instance's executable patch
    lines, the result of a score)."""

    name: str
    settings: Any
    work_dir: Path
    repos: Any
    backend: Any
    environments: Any

    def fingerprint(self) -> Any: ...

    def mirror(self, instance: Candidate) -> Path: ...

    def _measurable(self, spec: EnvironmentSpec) -> EnvironmentSpec: ...

    def _baseline(self, instance: Candidate) -> list[tuple[str, str, int]] | None: ...

    def _result(self, record: EvalTask, *args: Any, **kwargs: Any) -> Outcome: ...
