"""What one validation carries between its parts: the job, the runs of a suite, its notes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from builder.core.records import Candidate, RunResult
from validation import coverage
from validation.runs.runners import Runner

STAGE = "validate"
SIDES = ("before", "after")


@dataclasses.dataclass(frozen=True)
class Job:
    """What one validation needs beside its session: the record, runner, files, where logs go."""

    record: Candidate
    runner: Runner
    files: list[str]
    logs: Path
    lines: coverage.PatchLines | None  # the golden patch's lines when coverage is measured
    python: str  # the environment's Python version
    network: bool = False  # the repository's spec lets its runs use the network
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)  # for run_metadata
    environment_commit: str = ""  # the commit the environment installed the project from
    services: tuple[str, ...] = ()  # local stand-ins for network services its runs start

    def include(self) -> list[str]:
        return [] if self.lines is None else sorted({*self.lines.removed, *self.lines.added})

    def side_lines(self, side: str) -> Mapping[str, frozenset[int]]:
        """The patch lines a run of ``side`` measures: removed on R, added on R∘X."""
        if self.lines is None:
            return {}
        return self.lines.removed if side == "before" else self.lines.added


@dataclasses.dataclass(frozen=True)
class Runs:
    """The runs of one suite (golden or existing) on both sides, and what coverage measured."""

    before: list[RunResult]
    after: list[RunResult]
    measured: dict[str, list[coverage.Measured | None]]
    changes: Mapping[str, set[str] | None] = dataclasses.field(default_factory=dict)
    """The definitions the test patch changed, per file it leaves in place (None: all of a
    file; ``validation.test_changes``): whose lines are the golden tests' in golden ΔC."""


def note(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8", errors="replace") as handle:
        handle.write(text)
