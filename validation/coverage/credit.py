"""Which executed lines count for a patch's tests in ΔC — the golden tests' (validation's golden
coverage) and a prediction's (the evaluation's ΔC) alike, so that the golden tests evaluated
as a prediction reproduce the golden coverage validation recorded.

REFERENCE.md counts the executable patch lines executed *more often once T is added*; with
coverage.py's line sets that is a line one of T's tests executes. T is the tests the patch
wrote (``validation.test_changes``: new, or whose definition it changed); the other tests of a
test file it changed run too (the whole file runs) but belong to the existing suite, and lines
run outside every test (imports while pytest collects, context "") run whether or not T is
added. Per-test contexts are test ids only under pytest (our plugin); other runners credit the
whole run, an upper bound when a test file that already existed was changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence

from validation.coverage import CONTEXT_PLUGIN, Measured
from validation.runs.runners import Runner
from validation.test_changes import generated

VERSION = 1
"""Bump when which lines count for a patch's tests changes: part of the result keys of
validation (when it measures coverage) and of the evaluation.
1: only the lines the patch's own tests execute (per-test contexts), not collection's."""


@dataclasses.dataclass(frozen=True)
class Credit:
    """Which lines of a measured run count for the patch's tests.

    ``changes`` (per-test contexts): a line counts when a test the patch wrote — new, or whose
    definition it changed (``generated``) — is among the tests that executed it. None: every
    line the run executed counts (a runner without per-test contexts, or repro scripts, which
    are all the prediction's). ``upper_bound``: the whole run counted although it ran tests
    that are not the patch's (a test file it changed but did not add), so ΔC may be too high."""

    changes: Mapping[str, set[str] | None] | None
    upper_bound: bool = False

    def lines(self, measured: Measured) -> Mapping[str, Collection[int]]:
        """The lines of ``measured`` that count, per file."""
        if self.changes is None:
            return measured.executed
        changes = self.changes
        return {
            path: {line for line, tests in contexts.items() if generated(tests, changes)}
            for path, contexts in measured.contexts.items()
        }


def credit_for(
    runner: Runner, changes: Mapping[str, set[str] | None], files: Sequence[str]
) -> Credit:
    """How runs of ``files`` by ``runner`` are credited to the patch that changed them
    (``changes``: its changed definitions per file, None for a new file): per test where the
    runner records each test's id as the coverage context (pytest, through our plugin);
    otherwise the whole run, an upper bound when one of ``files`` existed before the patch —
    its other tests ran too."""
    if runner.context_options(CONTEXT_PLUGIN) is not None:
        return Credit(changes)
    return Credit(None, upper_bound=any(changes.get(path) is not None for path in files))


def delta_coverage(
    executable: Sequence[tuple[str, str, int]] | None,
    measured: Mapping[str, Measured | None],
    credit: Credit,
) -> float | None:
    """ΔC: the share of the ``executable`` patch lines (side, path, line) whose side's run
    (``measured``) executes them in a way ``credit`` counts; None when there is no executable
    line or a side's run wrote no coverage report."""
    if not executable or any(measured.get(side) is None for side in ("before", "after")):
        return None
    counted = {side: credit.lines(run) for side, run in measured.items() if run is not None}
    hit = sum(1 for side, path, line in executable if line in counted[side].get(path, ()))
    return round(hit / len(executable), 6)
