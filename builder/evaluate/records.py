"""The evaluation's records: one task per (instance, prediction), one result per task."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from builder.core.records import Candidate, Record, RunResult
from builder.evaluate.scores import InstanceScore


class EvalTask(Record):
    """What one evaluation task needs: the instance as validation saw it and the prediction."""

    instance: Candidate
    golden_coverage: float | None = None
    model: str = ""
    patch: str = Field(description="the prediction's patch (gold: the golden test patch)")
    gold: bool = False
    patch_format: str = "auto"
    tests_only: bool = True
    mode: str = Field(default="unit", pattern="^(unit|repro)$", description="unit or repro")
    mutants: int = Field(default=0, ge=0, description="mutants of the fix to try (0: none)")
    invalid: str = Field(
        default="", description="why the prediction cannot be read (it is then not applicable)"
    )
    semantics: str = Field(
        default="strict",
        pattern="^(swt-bench|strict)$",
        description="swt-bench: SWT-Bench's harness rules; strict: our own (docs/evaluate.md)",
    )
    patch_types: tuple[str, ...] = Field(
        default=("vanilla",),
        description="swt-bench: SWT-Bench's patch types, tried in order (vanilla, fuzzy, custom)",
    )


class MutantResult(Record):
    """One mutant of the fixed code and the scored tests that killed it (none: it survived)."""

    key: str
    operator: str
    description: str
    killed_by: tuple[str, ...] = ()
    equivalent: bool = Field(
        default=False,
        description="compiles to the fixed code's bytecode and no scored test killed it: "
        "left out of the mutation score",
    )


class EvalResult(Record):
    """What a prediction achieved on one instance, and how it was run."""

    instance_id: str
    model: str
    score: InstanceScore
    patch_format: str = Field(default="", description="the format the patch was read in")
    test_files: tuple[str, ...] = ()
    code_files: tuple[str, ...] = ()
    runs: tuple[RunResult, ...] = ()
    logs: str = ""
    mutants: tuple[MutantResult, ...] = ()
    semantics: str = Field(default="strict", description="the rules that scored it")
    run_names: tuple[str, ...] = Field(
        default=(), description="swt-bench: the name of each run (pred_pre, …, base_post)"
    )
    runs_made: tuple[str, ...] = Field(
        default=(),
        description="swt-bench: the runs this task made (the others came from the store: an "
        "instance's base and gold runs are made once)",
    )
    swt_report: dict[str, Any] | None = Field(
        default=None,
        description="swt-bench: the instance's report.json entry as SWT-Bench's grading writes "
        "it (None: nothing ran, the prediction counts as a miss)",
    )
    swt_runs: dict[str, Any] = Field(
        default_factory=dict,
        description="swt-bench: per run, what grading read of it: the status map and the line "
        "counts (repo-relative file → line → count), so a report can be checked by hand",
    )
    gold_executable: bool | None = Field(
        default=None,
        description="swt-bench: the instance's gold evaluation has executable patch lines "
        "(counts in ΔCᵃˡˡ's denominator); None: coverage not measured",
    )
