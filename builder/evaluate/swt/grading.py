"""SWT-Bench's grading of one prediction on one instance, as its harness computes it.

The rules are those of SWT-Bench's evaluation code (``src/grading.py``: ``get_eval_report``,
``get_resolution_success``, ``get_pred_report``), reproduced quirks included; docs/evaluate.md
sets them beside our ``strict`` semantics. The inputs are six runs of test files, each a status
map (test id → ``PASSED``, ``FAILED``, ``SKIPPED`` or ``ERROR``; see :func:`status_map`) and a
line-count map (repo-relative file → line → execution count, over the lines of the golden code
patch that are executable in a file the run traced):

- ``pred_pre`` / ``pred_post``: the prediction's files with the prediction applied, before and
  after the golden code patch;
- ``gold_pre`` / ``gold_post``: the golden test patch's files with it applied;
- ``base_pre`` / ``base_post``: the prediction's files with nothing applied.

Every category of a prediction is a set difference by test id against the base runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import unidiff

from builder.core.diffs import parse_patch
from builder.core.records import RunResult, TestStatus

PASSED, FAILED, SKIPPED, ERROR = "PASSED", "FAILED", "SKIPPED", "ERROR"
FAIL_TO_PASS, PASS_TO_PASS = "FAIL_TO_PASS", "PASS_TO_PASS"
FAIL_TO_FAIL, PASS_TO_FAIL, UNMATCHED = "FAIL_TO_FAIL", "PASS_TO_FAIL", "UNMATCHED"
CATEGORIES = (FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL, UNMATCHED)
RUNS = ("pred_pre", "pred_post", "gold_pre", "gold_post", "base_pre", "base_post")
StatusMap = dict[str, str]
Counts = dict[str, dict[int, int]]
Report = dict[str, list[str]]

_STATUS = {
    TestStatus.PASSED: PASSED,
    TestStatus.FAILED: FAILED,
    TestStatus.ERROR: ERROR,
    TestStatus.SKIPPED: SKIPPED,
}
"""Our outcomes as SWT-Bench's parser records them; xfail, xpass and missing tests have no line
its pytest parser reads (``XFAIL``/``XPASS`` start with no status it knows), so they are absent."""


def status_map(run: RunResult | None) -> StatusMap:
    """A run's outcomes as SWT-Bench's grading reads them: what the repository's log parser
    recorded (``swt_commands``: the run's tests are the parser's), or, for the toolkit's own
    runner (a unittest repository SWT-Bench does not know), each test's status with a test file
    that could not be collected as one ``ERROR`` under its path; a timed-out or absent run
    gives nothing (their harness keeps no log of it)."""
    if run is None or run.timed_out:
        return {}
    found = {test: _STATUS[status] for test, status in run.tests.items() if status in _STATUS}
    for path in run.collection_errors:
        found.setdefault(path, ERROR)
    return found


def eval_report(pre: Mapping[str, str], post: Mapping[str, str]) -> Report:
    """The five categories of a pair of runs (``get_eval_report``): only ``PASSED`` and
    ``FAILED`` are states, anything else (skipped, error, absent) is "x". x→P counts as F→P,
    x→F as F→F, P→x as P→F, and F→x and x→x are ``UNMATCHED``."""
    out: Report = {name: [] for name in CATEGORIES}
    for test in sorted({*pre, *post}):
        before, after = _state(pre.get(test)), _state(post.get(test))
        if after == PASSED:
            out[PASS_TO_PASS if before == PASSED else FAIL_TO_PASS].append(test)
        elif after == FAILED:
            out[PASS_TO_FAIL if before == PASSED else FAIL_TO_FAIL].append(test)
        else:
            out[PASS_TO_FAIL if before == PASSED else UNMATCHED].append(test)
    return out


def _state(status: str | None) -> str | None:
    return status if status in (PASSED, FAILED) else None


def added(report: Report, base: Report, category: str) -> set[str]:
    """The tests of ``category`` in ``report`` that the base report does not have there."""
    return set(report[category]) - set(base[category])


def resolution(pred: Report, base: Report) -> tuple[bool, int]:
    """Success and the number of added F→P tests (``get_resolution_success``): every base F→P
    test still F→P, at least one added, and no added P→F or F→F test."""
    keeps_base = set(pred[FAIL_TO_PASS]) >= set(base[FAIL_TO_PASS])
    new = added(pred, base, FAIL_TO_PASS)
    clean = not added(pred, base, PASS_TO_FAIL) and not added(pred, base, FAIL_TO_FAIL)
    return keeps_base and bool(new) and clean, len(new)


@dataclasses.dataclass(frozen=True)
class ChangedLines:
    """The golden code patch's removed lines (path as in R, line in R) and added lines (path
    and line in R∘X), every file of the patch (``extract_changed_lines_from_patch``)."""

    removed: tuple[tuple[str, int], ...]
    added: tuple[tuple[str, int], ...]

    def wanted(self) -> dict[str, list[int]]:
        """Per file, every line number a run's counts must cover: a post run is read at the
        removed lines' numbers too (their base coverage quirk, :func:`prediction_report`)."""
        lines: dict[str, set[int]] = {}
        for path, number in (*self.removed, *self.added):
            lines.setdefault(path, set()).add(number)
        return {path: sorted(numbers) for path, numbers in sorted(lines.items())}


def changed_lines(patch: str) -> ChangedLines:
    """The removed and added lines of ``patch`` (a golden code patch)."""
    removed, added_lines = [], []
    for patched in parse_patch(patch):
        source, target = patched.source_file[2:], patched.target_file[2:]
        for hunk in patched:
            for line in hunk:
                if line.is_removed:
                    removed.append((source, line.source_line_no))
                elif line.is_added:
                    added_lines.append((target, line.target_line_no))
    return ChangedLines(tuple(removed), tuple(added_lines))


def patch_files(patch: str) -> list[str]:
    """Every path a patch's ``diff --git`` headers name, both sides (the files SWT-Bench's trace
    counts lines in)."""
    names = set()
    try:
        patch_set = parse_patch(patch)
    except unidiff.UnidiffParseError:
        return []
    for patched in patch_set:
        for name in (patched.source_file, patched.target_file):
            if name and name != "/dev/null":
                names.add(name[2:])
    return sorted(names)


def executable(lines: Iterable[tuple[str, int]], runs: Iterable[Counts]) -> list[tuple[str, int]]:
    """The ``lines`` present in any of the runs' counts (``extract_executable_lines``): in the
    static line table of a file the run traced."""
    table: dict[str, set[int]] = {}
    for counts in runs:
        for path, by_line in counts.items():
            table.setdefault(path, set()).update(by_line)
    return [(path, n) for path, n in lines if n in table.get(path, ())]


def _restricted(lines: Iterable[tuple[str, int]], counts: Counts) -> dict[tuple[str, int], int]:
    return {(path, n): counts.get(path, {}).get(n, 0) for path, n in lines}


def _covered(*parts: Mapping[tuple[str, int], int]) -> int:
    return sum(1 for part in parts for count in part.values() if count > 0)


def _delta(
    base: Mapping[tuple[str, int], int], other: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], int]:
    return {line: other[line] - base[line] for line in other}


def prediction_report(
    applied: bool,
    golden_code_patch: str,
    statuses: Mapping[str, StatusMap],
    counts: Mapping[str, Counts],
) -> dict[str, Any]:
    """One instance's ``report.json`` entry (``get_pred_report``): applied, resolved, added F→P,
    the coverage figures and the three runs' categories (sorted, for equal files from equal
    runs). ``statuses`` and ``counts`` are keyed by :data:`RUNS`.

    Change coverage: the patch's removed lines are executable when the gold or base *pre* run
    has them in a traced file's line table, its added lines when the gold or base *post* run
    has. A line counts for the prediction when its count in the prediction's run (pre for
    removed lines, post for added) exceeds the base run's; the base count of every line, removed
    ones included, is read from ``base_post`` (their code's quirk: a removed line's number is
    looked up in the fixed file)."""
    report: dict[str, Any] = {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": applied,
        "resolved": False,
        "coverage_pred": None,
        "coverage_gold": None,
        "coverage_base": None,
        "coverage_delta_pred": None,
        "coverage_delta_gold": None,
    }
    if not applied:
        return report
    pred = eval_report(statuses["pred_pre"], statuses["pred_post"])
    base = eval_report(statuses["base_pre"], statuses["base_post"])
    gold = eval_report(statuses["gold_pre"], statuses["gold_post"])
    lines = changed_lines(golden_code_patch)
    removed = executable(lines.removed, (counts["gold_pre"], counts["base_pre"]))
    added_lines = executable(lines.added, (counts["gold_post"], counts["base_post"]))
    total = len(removed) + len(added_lines)
    if total:
        pred_cov = (
            _restricted(removed, counts["pred_pre"]),
            _restricted(added_lines, counts["pred_post"]),
        )
        gold_cov = (
            _restricted(removed, counts["gold_pre"]),
            _restricted(added_lines, counts["gold_post"]),
        )
        base_cov = (
            _restricted(removed, counts["base_post"]),
            _restricted(added_lines, counts["base_post"]),
        )
        report["coverage_pred"] = _covered(*pred_cov) / total
        report["coverage_gold"] = _covered(*gold_cov) / total
        report["coverage_base"] = _covered(*base_cov) / total
        report["coverage_delta_pred"] = (
            _covered(_delta(base_cov[0], pred_cov[0]), _delta(base_cov[1], pred_cov[1])) / total
        )
        report["coverage_delta_gold"] = (
            _covered(_delta(base_cov[0], gold_cov[0]), _delta(base_cov[1], gold_cov[1])) / total
        )
    resolved, added_f2p = resolution(pred, base)
    report["resolved"] = resolved
    report["added_f2p"] = added_f2p
    report["tests_base"] = base
    report["tests_pred"] = pred
    report["tests_gold"] = gold
    return report


def executable_line_count(golden_code_patch: str, counts: Mapping[str, Counts]) -> int:
    """How many of the golden patch's lines are executable by the gold and base runs in
    ``counts`` (the ``gold_*``/``base_*`` keys present): ΔCᵃˡˡ counts an instance when its gold
    evaluation has any."""
    lines = changed_lines(golden_code_patch)
    pre = [counts[k] for k in ("gold_pre", "base_pre") if k in counts]
    post = [counts[k] for k in ("gold_post", "base_post") if k in counts]
    return len(executable(lines.removed, pre)) + len(executable(lines.added, post))
