"""One prediction's score on one instance, as both semantics record it: its tests' transitions,
applicability, ΔC, mutants."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

EVALUATION_ERROR = "evaluation error: "
"""How a score names a failure of the evaluation itself (not of the prediction)."""


class Transition(BaseModel):
    """One predicted test's verdict before (on R) and after (on R∘X) the golden patch: ``pass``,
    ``fail``, or ``other`` (skipped, xfail/xpass: neither passing nor failing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    test: str = Field(description="the test's id as its runner reports it")
    before: str = Field(pattern="^(pass|fail|other)$", description="its verdict on R")
    after: str = Field(pattern="^(pass|fail|other)$", description="its verdict on R∘X")

    @property
    def kind(self) -> str:
        """``F→P``, ``F→F``, ``P→P``, ``P→F``, or ``other``."""
        if "other" in (self.before, self.after):
            return "other"
        return f"{self.before[0].upper()}→{self.after[0].upper()}"


class InstanceScore(BaseModel):
    """What one prediction achieved on one instance (the per-instance report's core)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_id: str = Field(description="the dataset instance")
    applicable: bool = Field(description="the prediction's patch applied and its tests ran")
    not_applicable: str = Field(default="", description="why not, when not applicable")
    edits_code: bool = Field(
        default=False, description="the prediction also changed non-test files"
    )
    transitions: list[Transition] = Field(
        default_factory=list, description="the predicted tests' verdicts before and after"
    )
    coverage: float | None = Field(
        default=None,
        description="ΔC: share of the golden patch's executable lines the predicted tests "
        "execute more often (0 when the prediction is missing or not applicable); None when the "
        "patch has no executable line",
    )
    coverage_upper_bound: bool = Field(
        default=False,
        description="ΔC counts every line the predicted test files' runs executed, not only "
        "those of the tests the prediction wrote: its runner records no per-test coverage "
        "(only pytest does) and it changed a test file that existed, so ΔC may be too high",
    )

    mutants: int = Field(default=0, description="mutants of the fix tried (--mutation)")
    mutants_killed: int = Field(default=0, description="of them, killed by the scored tests")
    mutants_equivalent: int = Field(
        default=0, description="of them, equivalent: the fixed code's bytecode, not killed"
    )

    def has(self, kind: str) -> bool:
        return any(t.kind == kind for t in self.transitions)

    @property
    def fails_after(self) -> bool:
        return any(t.after == "fail" for t in self.transitions)

    @property
    def success(self) -> bool:
        """At least one F→P test and no test failing after the golden patch."""
        return self.applicable and self.has("F→P") and not self.fails_after

    @property
    def fail_to_any(self) -> bool:
        return self.applicable and any(t.before == "fail" for t in self.transitions)
