"""The tables `swt-builder compare` prints: labels per repository, causes, decisions."""

from __future__ import annotations

from builder.compare import causes, decisions
from builder.compare.run import ALL, Totals

_COLUMNS = (
    "repository", "records", "kept", "exact F→P", "F→P as defined", "F→P env. diff.", "exact P→P",
    "mean P→P Jaccard", "as defined", "unexplained",
)  # fmt: skip


def render(totals: dict[str, Totals], with_decisions: bool) -> str:
    """Labels per repository (then all), the causes of the differences, and (with exclusion
    lists) the decision agreement table. ``F→P as defined``: kept instances whose FAIL_TO_PASS
    differs from the reference's only by artifacts of the reference (:data:`causes.AS_DEFINED`);
    ``F→P env. diff.``: those whose FAIL_TO_PASS differs by an environment difference
    (:data:`causes.ENVIRONMENT`) and nothing unexplained; the Jaccard ``as defined`` sets the
    artifacts aside; ``unexplained``: kept instances with a difference that has no named
    cause."""
    rows = [
        _row(repo, totals[repo]) for repo in [*sorted(set(totals) - {ALL}), ALL] if repo in totals
    ]
    lines = aligned([_COLUMNS, *rows])
    every = totals.get(ALL, Totals())
    lines += ["", "differing ids by cause:"]
    width = max(map(len, causes.CAUSES))
    for title, group in (
        ("artifacts of the reference (as defined)", causes.AS_DEFINED),
        ("environment differences", causes.ENVIRONMENT),
        ("unexplained", (causes.UNEXPLAINED,)),
    ):
        lines.append(f"  {title}: {sum(every.causes[cause] for cause in group)}")
        lines += [f"    {cause:<{width}} {every.causes[cause]}" for cause in group]
    if with_decisions:
        lines += ["", "keep/drop decisions:"]
        lines += [f"  {name:<18} {every.decisions[name]}" for name in decisions.DECISIONS]
        for reason, count in sorted(every.our_reasons.items()):
            lines.append(f"    {decisions.WE_DROP_THEY_KEEP} because {reason}: {count}")
    return "\n".join(lines) + "\n"


def _row(repo: str, total: Totals) -> tuple[str, ...]:
    summary = total.summary()
    jaccard = summary["mean_pass_to_pass_jaccard"]
    defined = summary["mean_pass_to_pass_jaccard_as_defined"]
    return (
        repo,
        str(total.records),
        str(total.kept),
        str(total.exact_fail_to_pass),
        str(total.fail_to_pass_as_defined),
        str(total.fail_to_pass_environment),
        str(total.exact_pass_to_pass),
        "-" if jaccard is None else f"{jaccard:.3f}",
        "-" if defined is None else f"{defined:.3f}",
        str(total.with_unexplained),
    )


def aligned(rows: list[tuple[str, ...]]) -> list[str]:
    """The rows as lines of left-aligned columns, two spaces apart, no trailing blanks."""
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
