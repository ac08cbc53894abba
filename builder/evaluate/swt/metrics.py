"""SWT-Bench's run-level metrics over ``report.json`` entries, as its ``src/report.py`` prints them.

The rules of ``figures/util.py`` (docs/evaluate.md): every rate's denominator is the fixed
number of instances of the benchmark (an instance without a report counts as a miss); 𝒲 needs
the prediction's run to report at least 10 % as many tests as the base run; F→X, F→P and P→P
count instances with at least one *added* test of that kind (a set difference against the base
run); ΔCᵃˡˡ sums the prediction's coverage delta over its reports and divides by the number of
instances whose gold evaluation has executable patch lines; Δᔆ and Δ¬ᔆ split that by resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from builder.evaluate.swt.grading import FAIL_TO_FAIL, FAIL_TO_PASS, PASS_TO_PASS

APPLICABLE_SHARE = 0.1
"""𝒲: the prediction's run must report at least this share of the base run's test count."""


def applicable(report: Mapping[str, Any]) -> bool:
    """𝒲 (``no_error_filter``): the patch applied and its run reported at least 10 % as many
    tests (every category, ``UNMATCHED`` included) as the base run."""
    if "tests_pred" not in report:
        return False
    base = sum(len(tests) for tests in report["tests_base"].values())
    pred = sum(len(tests) for tests in report["tests_pred"].values())
    return pred >= APPLICABLE_SHARE * base


def _added(report: Mapping[str, Any], category: str) -> set[str]:
    if "tests_pred" not in report:
        return set()
    return set(report["tests_pred"][category]) - set(report["tests_base"][category])


def fail_to_pass(report: Mapping[str, Any]) -> bool:
    """At least one added F→P test (``get_actual_ftp``)."""
    return bool(_added(report, FAIL_TO_PASS))


def fail_to_any(report: Mapping[str, Any]) -> bool:
    """At least one added F→P or F→F test (``get_ftx``)."""
    return bool(_added(report, FAIL_TO_PASS) | _added(report, FAIL_TO_FAIL))


def pass_to_pass(report: Mapping[str, Any]) -> bool:
    """At least one added P→P test (``get_ptp``)."""
    return bool(_added(report, PASS_TO_PASS))


class SwtSummary(BaseModel):
    """The figures ``report.py`` prints, in percent, with what they were computed over."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    semantics: str = Field(default="swt-bench", description="the rules that made these figures")
    instances: int = Field(description="the fixed denominator: instances of the benchmark")
    reports: int = Field(description="instances with a report (the prediction ran)")
    not_in_dataset: int = Field(
        default=0,
        description="ids of the denominator the dataset lacks (counted as misses everywhere)",
    )
    applicability: float = Field(description="𝒲: applied, ≥ 10 % of the base run's tests")
    success: float = Field(description="𝒮: resolved")
    fail_to_any: float = Field(description="F→X: ≥ 1 added F→P or F→F test")
    fail_to_pass: float = Field(description="F→P: ≥ 1 added F→P test")
    pass_to_pass: float = Field(description="P→P: ≥ 1 added P→P test")
    coverage: float | None = Field(description="ΔCᵃˡˡ (None: no gold coverage)")
    coverage_resolved: float | None = Field(description="Δᔆ")
    coverage_unresolved: float | None = Field(description="Δ¬ᔆ")
    coverage_instances: int = Field(
        description="instances whose gold evaluation has executable patch lines (ΔCᵃˡˡ's "
        "denominator)"
    )


def summarize(
    reports: Mapping[str, Mapping[str, Any]],
    total: int,
    gold_executable: Mapping[str, bool] | None,
    not_in_dataset: int = 0,
) -> SwtSummary:
    """The run's figures over ``reports`` (instance id → report entry) out of ``total``
    instances; ``gold_executable`` says per instance whether its gold evaluation has
    executable patch lines (None: no gold coverage, ΔC is not reported)."""

    def rate(count: int) -> float:
        return 100 * count / total if total else 0.0

    values = list(reports.values())
    resolved = [r for r in values if r["resolved"]]
    unresolved = [r for r in values if not r["resolved"]]
    coverage = coverage_resolved = coverage_unresolved = None
    possible = 0
    if gold_executable is not None:
        possible = sum(1 for flag in gold_executable.values() if flag)
        countable = sum(1 for r in resolved if r.get("coverage_delta_gold") is not None)
        if possible:
            coverage = 100 * _delta_sum(values) / possible
        coverage_resolved = 100 * _delta_sum(resolved) / countable if countable else 0.0
        rest = possible - countable
        coverage_unresolved = 100 * _delta_sum(unresolved) / rest if rest > 0 else 0.0
    return SwtSummary(
        instances=total,
        reports=len(values),
        not_in_dataset=not_in_dataset,
        applicability=rate(sum(applicable(r) for r in values)),
        success=rate(len(resolved)),
        fail_to_any=rate(sum(fail_to_any(r) for r in values)),
        fail_to_pass=rate(sum(fail_to_pass(r) for r in values)),
        pass_to_pass=rate(sum(pass_to_pass(r) for r in values)),
        coverage=coverage,
        coverage_resolved=coverage_resolved,
        coverage_unresolved=coverage_unresolved,
        coverage_instances=possible,
    )


def _delta_sum(reports: list[Mapping[str, Any]]) -> float:
    return sum(r.get("coverage_delta_pred") or 0 for r in reports)


def table(name: str, summary: SwtSummary) -> str:
    """``report.py``'s printed table (its ``github`` format, one decimal)."""
    rows = [
        ("Method", name),
        ("Applicability (W)", summary.applicability),
        ("Success Rate (S)", summary.success),
        ("F->X", summary.fail_to_any),
        ("F->P", summary.fail_to_pass),
        ("P->P", summary.pass_to_pass),
    ]
    if summary.coverage is not None:
        rows += [
            ("Coverage Delta (Δᵃˡˡ)", summary.coverage),
            ("Coverage Delta Resolved (Δᔆ)", summary.coverage_resolved),
            ("Coverage Delta Unresolved (Δⁿᵒᵗ ᔆ)", summary.coverage_unresolved),
        ]
    cells = [(key, value if isinstance(value, str) else f"{value:.1f}") for key, value in rows]
    width = [max(len(str(c[i])) for c in cells) for i in (0, 1)]
    head, *body = cells
    lines = [
        f"| {head[0]:<{width[0]}} | {head[1]:<{width[1]}} |",
        f"|{'-' * (width[0] + 2)}|{'-' * (width[1] + 2)}|",
    ]
    lines += [f"| {key:<{width[0]}} | {value:>{width[1]}} |" for key, value in body]
    return "\n".join(lines) + "\n"
