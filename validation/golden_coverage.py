"""The golden tests' change coverage ΔC of a validation, or its drop when unmeasurable."""

from __future__ import annotations

import dataclasses
import json

from builder.core.files import atomic_write_text
from builder.core.pipeline import Outcome
from builder.core.records import DropReason
from validation import coverage
from validation.coverage import credit
from validation.job import STAGE, Job, Runs


def change_coverage(
    job: Job, golden: Runs, existing: Runs
) -> coverage.ChangeCoverage | None | Outcome:
    """ΔC of the golden tests (None when not measured) or the COVERAGE_UNMEASURABLE drop."""
    if job.lines is None:
        return None
    missing = [
        f"{suite}-{side}-{index}"
        for suite, runs in (("golden", golden), ("existing", existing))
        for side, measured in runs.measured.items()
        for index, item in enumerate(measured)
        if item is None
    ]
    if missing:
        return Outcome.drop(
            STAGE,
            DropReason.COVERAGE_UNMEASURABLE,
            error="coverage.py wrote no report for some runs",
            runs=", ".join(missing),
            log=str(job.logs / f"{missing[0]}.log"),
        )
    measured_golden = {side: list(items) for side, items in golden.measured.items()}
    credited = credit.credit_for(job.runner, golden.changes, job.files)
    change = coverage.change_coverage(job.lines, measured_golden, existing.measured, credited.lines)
    change = dataclasses.replace(change, golden_upper_bound=credited.upper_bound)
    report = {
        "golden_coverage": change.golden,
        "golden_coverage_upper_bound": change.golden_upper_bound,
        "existing_coverage": change.existing,
        "patch_lines": {
            "removed": {path: sorted(lines) for path, lines in job.lines.removed.items()},
            "added": {path: sorted(lines) for path, lines in job.lines.added.items()},
        },
        "lines": coverage.attribution(change, measured_golden),
    }
    report_path = job.logs / "coverage.json"
    atomic_write_text(report_path, json.dumps(report, indent=1, sort_keys=True) + "\n")
    if change.golden is None:
        return Outcome.drop(
            STAGE,
            DropReason.COVERAGE_UNMEASURABLE,
            error="no line of the golden patch is executed by the existing or golden tests",
            python_lines_removed=str(sum(map(len, job.lines.removed.values()))),
            python_lines_added=str(sum(map(len, job.lines.added.values()))),
            patch_files=", ".join(sorted({*job.lines.removed, *job.lines.added})),
            report=str(report_path),
        )
    return change
