"""The strict semantics' metrics over per-instance scores: 𝒜, 𝒮, F→X, F→P, P→P and ΔC.

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

from builder.evaluate.scores import InstanceScore


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
