"""SWT-Bench's metrics over per-instance scores: 𝒜, 𝒮, F→X, F→P, P→P and ΔC.

Definitions (docs/evaluate.md gives them in full): a prediction is *applicable* when its patch
applies; its tests are *successful* when at least one goes F→P and none fails after the golden
patch; F→X, F→P and P→P count instances with at least one such test; ΔC is the share of the
golden patch's executable lines the predicted tests execute more often, averaged over the
instances whose patch has executable lines — over all of them, over those whose tests reproduce
the issue (an F→P test), and over the rest. Every rate's denominator is the number of instances
evaluated: an instance without a prediction, or whose prediction does not apply, counts as a
miss everywhere — its ΔC is 0 when its golden patch has executable lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field


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


class Summary(BaseModel):
    """The run's metrics, in percent (coverage: mean ΔC in percent), with their denominators."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instances: int = Field(description="instances evaluated: every rate's denominator")
    applicability: float = Field(description="𝒜: predictions whose patch applied")
    success: float = Field(description="𝒮: ≥ 1 F→P test and no test failing after the fix")
    fail_to_any: float = Field(description="F→X: ≥ 1 test failing before the fix")
    fail_to_pass: float = Field(description="F→P: ≥ 1 test failing before, passing after")
    pass_to_pass: float = Field(description="P→P: ≥ 1 test passing before and after")
    edits_code: int = Field(description="predictions that also changed non-test files")
    coverage: float | None = Field(description="ΔC over every instance with executable lines")
    coverage_fail_to_pass: float | None = Field(
        description="ΔC over the instances whose predicted tests have an F→P test"
    )
    coverage_rest: float | None = Field(description="ΔC over the other instances")
    coverage_instances: int = Field(description="instances whose golden patch has executable lines")
    mutants: int = Field(default=0, description="mutants tried over every instance")
    mutants_equivalent: int = Field(
        default=0, description="of them, equivalent (left out of the mutation score)"
    )
    mutants_killed: int = Field(default=0, description="of them, killed by the scored tests")
    mutation_score: float | None = Field(
        default=None,
        description="mutants killed by the scored tests, in percent of the mutants that are "
        "not equivalent (None: none)",
    )


def summarize(scores: Sequence[InstanceScore]) -> Summary:
    """The metrics over ``scores`` (one per evaluated instance)."""
    total = len(scores)

    def rate(flags: Iterable[bool]) -> float:
        return round(100 * sum(flags) / total, 2) if total else 0.0

    measured = [s for s in scores if s.coverage is not None]
    return Summary(
        instances=total,
        applicability=rate(s.applicable for s in scores),
        success=rate(s.success for s in scores),
        fail_to_any=rate(s.fail_to_any for s in scores),
        fail_to_pass=rate(s.applicable and s.has("F→P") for s in scores),
        pass_to_pass=rate(s.applicable and s.has("P→P") for s in scores),
        edits_code=sum(s.edits_code for s in scores),
        coverage=_mean(s.coverage for s in measured),
        coverage_fail_to_pass=_mean(s.coverage for s in measured if s.has("F→P")),
        coverage_rest=_mean(s.coverage for s in measured if not s.has("F→P")),
        coverage_instances=len(measured),
        mutants=sum(s.mutants for s in scores),
        mutants_equivalent=sum(s.mutants_equivalent for s in scores),
        mutants_killed=sum(s.mutants_killed for s in scores),
        mutation_score=_share(
            sum(s.mutants_killed for s in scores),
            sum(s.mutants - s.mutants_equivalent for s in scores),
        ),
    )


def _share(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 2) if whole else None


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(100 * sum(present) / len(present), 2) if present else None


def markdown_table(rows: Sequence[tuple[str, Summary]]) -> str:
    """The paper's table shape: one row per method, 𝒜, 𝒮, F→X, F→P, P→P and ΔC (all, F→P,
    rest), in percent."""
    lines = [
        "| Method | 𝒜 | 𝒮 | F→X | F→P | P→P | ΔC all | ΔC F→P | ΔC rest |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in rows:
        cells = [
            s.applicability,
            s.success,
            s.fail_to_any,
            s.fail_to_pass,
            s.pass_to_pass,
            s.coverage,
            s.coverage_fail_to_pass,
            s.coverage_rest,
        ]
        lines.append(f"| {name} | " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"
