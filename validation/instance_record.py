"""The Instance a validation keeps: labels, statistics and run metadata."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from builder.core import __version__
from builder.core.records import Candidate, Instance, InstanceStats, RunResult, Transitions
from validation import coverage
from validation.codebase import codebase_size
from validation.environments.environment import EnvironmentSpec
from validation.environments.resolution import Resolution
from validation.grading import Grade, grade, needs_network, unlisted_tests
from validation.job import Runs
from validation.runs.backends.base import Backend
from validation.runs.patches import patch_size


def instance_record(
    record: Candidate,
    graded: Grade,
    golden: Runs,
    existing: Runs,
    change: coverage.ChangeCoverage | None,
    spec: EnvironmentSpec,
    mirror: Path,
    resolution: Resolution,
    runs: Sequence[RunResult],
    extra: Mapping[str, str],
    *,
    backend: Backend,
    repetitions: int,
    network: bool,
) -> Instance:
    """The kept instance of ``record``: its labels from ``graded``, its statistics (Table 1) and
    the run metadata (``extra``: what the environment added for the test imports)."""
    files, lines = codebase_size(mirror, record.base_commit)
    edited_files, edited_lines = patch_size(record.test_patch)
    existing_grade = grade(existing.before, existing.after) if existing.before else None
    existing_tests = existing_grade.tests if existing_grade else frozenset()
    metadata = {
        "backend": backend.name,
        "sandbox": backend.fingerprint().get("sandbox", backend.name),
        **resolution.metadata(),
        "environment": spec.key(),
        "runs_per_side": str(repetitions),
        "coverage": "on" if change is not None else "off",
        "toolkit_version": __version__,
        **extra,
    }
    if change is not None:
        metadata["existing_coverage"] = str(change.existing)
        if change.golden_upper_bound:
            metadata["golden_coverage_upper_bound"] = "true"
    if graded.expected:
        metadata["expected_outcome_tests"] = json.dumps(list(graded.expected))
    uncollected = {
        side: sorted({name for run in runs for name in run.collection_errors})
        for side, runs in (("before", golden.before), ("after", golden.after))
    }
    if any(uncollected.values()):
        metadata["collection_errors"] = json.dumps(uncollected, sort_keys=True)
    offline = needs_network(golden.before, golden.after)
    if offline:
        metadata["needs_network"] = json.dumps(offline, sort_keys=True)
    unlisted = unlisted_tests(graded, golden.before, golden.after, {*graded.expected, *offline})
    if unlisted:
        metadata["unlisted_tests"] = json.dumps(unlisted, sort_keys=True)
    if network:
        metadata["network"] = "allowed"
    crash = crashed_before(runs)
    if crash:
        metadata["crashed_before"] = crash
    plain = next((run.plain_path for run in runs if run.plain_path), "")
    if plain:  # a shortcut the project does not tolerate: its runs took the plain path
        metadata["plain_path"] = plain
    interruptions = sum(run.daemon_interruptions for run in runs)  # every run made, once
    if interruptions:
        metadata["daemon_interruptions"] = str(interruptions)
    return Instance.from_candidate(
        record,
        version=resolution.version,
        environment_setup_commit=resolution.environment_commit,
        FAIL_TO_PASS=graded.fail_to_pass,
        PASS_TO_PASS=graded.pass_to_pass,
        golden_coverage=None if change is None else change.golden,
        stats=InstanceStats(
            codebase_files=files,
            codebase_lines=lines,
            golden_test_files_edited=edited_files,
            golden_test_lines_edited=edited_lines,
            existing_tests=(
                existing_grade.transitions()
                if existing_grade
                else Transitions(fail_to_pass=0, fail_to_fail=0, pass_to_pass=0, pass_to_fail=0)
            ),
            golden_tests=graded.transitions(),
            golden_tests_added=len(graded.tests - existing_tests),
            golden_tests_removed=len(existing_tests - graded.tests),
        ),
        run_metadata=metadata,
    )


def crashed_before(runs: Sequence[RunResult]) -> str:
    """The crash of the first run before the fix that crashed part way, when every run after
    it ran clean (:func:`validation.golden_runs.add_runs` kept the record): empty otherwise."""
    return next((run.crashed for run in runs if run.side == "before" and run.crashed), "")
