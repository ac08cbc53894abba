"""The existing tests: what runs again without the test patch, what the golden runs stand for."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from builder.core.diffs import parse_patch
from builder.core.gitutil import git
from builder.core.pipeline import Outcome
from builder.core.records import DropReason, RunResult
from validation import coverage, phases
from validation.checkouts import Checkouts
from validation.job import SIDES, STAGE, Job, Runs, note
from validation.runs.backends import Session
from validation.runs.patches import NOT_RUNNABLE, PatchError, UnsafePathError, restore


class ExistingTests(Checkouts):
    """The plan and checkouts of a validation's existing-test runs."""

    def _existing_plan(
        self, job: Job, mirror: Path, golden: Runs
    ) -> tuple[bool, set[str], list[str]]:
        """What the existing-test pass runs: the touched test files as they are at the base
        commit, once before and once after the fix.

        These are the repository's existing tests (Table 1), and with the golden tests they
        decide which patch lines are executable. A test the test patch leaves as it was (no
        line of its definition changed, no module-level line removed) already ran in the golden
        runs' first pair: its verdicts and coverage (per test, pytest's node ids) are read from
        there. Returns whether the test patch touches any existing test file, those reused ids
        and the files the rest is in (run with the reused tests deselected; a file with
        nothing else to run is not run).
        """
        files = _existing_test_files(job.record.test_patch)
        if not files:
            return False, set(), []
        return True, *_reusable(job, mirror, files, golden)

    def _existing_session(
        self,
        job: Job,
        side: str,
        golden_session: Session,
        environment: object,
        mirror: Path,
        run_dir: Path,
        stack: contextlib.ExitStack,
    ) -> Session | Outcome:
        """A checkout of ``side`` without the test patch (the golden patch after): the golden
        one with the test patch undone (:func:`restore`: what its runs compiled stays
        compiled), or, when a run left a file the patch names that cannot be written back, a
        new one (opened on ``stack``). A run that made one of its paths a symbolic link is a
        drop (``unsafe_path``)."""
        record = job.record
        label = "test patch (undone after its runs)"
        try:
            restore(golden_session.tree, mirror, record.base_commit, record.test_patch, label)
            return golden_session
        except UnsafePathError as error:
            paths = "; ".join(found.text() for found in error.found)
            return Outcome.drop(STAGE, DropReason.UNSAFE_PATH, patch=label, paths=paths)
        except PatchError as error:
            note(
                job.logs / f"existing-{side}.log",
                f"a new checkout for the existing tests: {error}\n",
            )
        opened = self._session(job, environment, mirror, run_dir / f"existing-{side}")
        session = opened.__enter__()
        stack.push(phases.timed("checkout", opened.__exit__))  # its removal is checkout time
        if side == "after":
            try:
                session.apply(record.patch, "golden patch (without the test patch)")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
        return session


def existing_result(
    golden: Runs,
    reused_ids: set[str],
    ran: Mapping[str, list[tuple[RunResult, coverage.Measured | None]]],
) -> Runs:
    """The existing tests per side: the run of what had to run (if anything did) with the
    reused tests' first-pair verdicts and coverage added, graded as one run of the whole files."""
    result = Runs([], [], {"before": [], "after": []})
    for side in SIDES:
        first = getattr(golden, side)[0]
        tests = {t: status for t, status in first.tests.items() if t in reused_ids}
        measured = [_reused_coverage(golden.measured[side][0], reused_ids)] if tests else []
        if ran:
            ((run, ran_measured),) = ran[side]
            # graded as one run of the whole files: the reused tests are no longer left out
            run = run.model_copy(update={"tests": {**run.tests, **tests}, "deselected": ()})
            measured.insert(0, ran_measured)
        else:
            run = first.model_copy(update={"suite": "existing", "tests": tests})
        getattr(result, side).append(run)
        result.measured[side].extend(measured)
    return result


def _reusable(job: Job, mirror: Path, files: list[str], golden: Runs) -> tuple[set[str], list[str]]:
    """The existing tests whose golden first-pair results stand for them, and the files that
    still have to run. Pytest only (its node ids are the coverage contexts): the golden test
    ids whose function exists in the file at the base commit and whose lines (or its class's,
    when a class-level line is removed) the test patch leaves alone. A file whose patch removes
    a line outside every definition (an import, a module-level fixture or constant) runs
    whole; a file runs at all only for a changed test or one the test patch removes.
    """
    if job.runner.kind != "pytest":
        return set(), files
    seen = {test for run in (golden.before[0], golden.after[0]) for test in run.tests}
    patched = {f.source_file.removeprefix("a/"): f for f in parse_patch(job.record.test_patch)}
    reused: set[str] = set()
    to_run = []
    for path in files:
        source = git("show", f"{job.record.base_commit}:{path}", cwd=mirror, check=False)
        try:
            spans = _definitions(ast.parse(source))
        except SyntaxError:
            to_run.append(path)
            continue
        changed = _changed(patched[path], spans)
        if changed is None:
            to_run.append(path)
            continue
        named = {test: test.partition("::")[2].split("[", 1)[0] for test in seen}
        ids = {
            test
            for test, name in named.items()
            if test.partition("::")[0] == path
            and name in spans
            and not any(name == c or name.startswith(c + "::") for c in changed)
        }
        reused |= ids
        tests_at_base = {n for n, (_, _, is_class) in spans.items() if _is_test(n, is_class)}
        if tests_at_base - {named[test] for test in ids}:
            to_run.append(path)  # a test the patch changes or removes
    return reused, to_run


def _is_test(name: str, is_class: bool) -> bool:
    return not is_class and name.rpartition("::")[2].startswith("test")


def _changed(patched: Any, spans: Mapping[str, tuple[int, int, bool]]) -> set[str] | None:
    """Definitions a file's patch changes: the innermost one holding a removed line, or a
    function an added line lands inside; None when it removes a line of no definition."""

    def innermost(*lines: int) -> tuple[str, bool] | None:
        holding = [
            (first, name, is_class)
            for name, (first, last, is_class) in spans.items()
            if all(first <= line <= last for line in lines)
        ]
        return max(holding)[1:] if holding else None

    changed: set[str] = set()
    for hunk in patched:
        previous = hunk.source_start - 1  # the base line the next added line follows
        for line in hunk:
            if line.is_removed:
                found = innermost(line.source_line_no)
                if found is None:
                    return None
                changed.add(found[0])
                previous = line.source_line_no
            elif line.is_added:
                found = innermost(previous, previous + 1)
                if found is not None and not found[1]:  # inside a function's body
                    changed.add(found[0])
            else:
                previous = line.source_line_no
    return changed


def _definitions(tree: ast.Module) -> dict[str, tuple[int, int, bool]]:
    """Qualified names (``Class::method``) of a module's functions and classes: the lines
    each spans (its decorators included) and whether it is a class."""
    spans: dict[str, tuple[int, int, bool]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                is_class = isinstance(child, ast.ClassDef)
                spans[prefix + child.name] = (first, child.end_lineno or child.lineno, is_class)
                if is_class:
                    visit(child, f"{prefix}{child.name}::")

    visit(tree, "")
    return spans


def _reused_coverage(
    measured: coverage.Measured | None, tests: set[str]
) -> coverage.Measured | None:
    """The lines of ``measured`` that ``tests`` ran, or that ran outside any test (imports)."""
    if measured is None:
        return None
    contexts = {
        path: {line: names for line, names in lines.items() if "" in names or tests & set(names)}
        for path, lines in measured.contexts.items()
    }
    executed = {path: frozenset(lines) for path, lines in contexts.items()}
    return coverage.Measured(executed, contexts)


def _existing_test_files(test_patch: str) -> list[str]:
    """Python test files the test patch modifies or deletes: they exist at the base commit."""
    patch_set = parse_patch(test_patch)
    return sorted(
        {
            patched.source_file.removeprefix("a/")
            for patched in patch_set
            if not patched.is_added_file
            and patched.source_file.endswith(".py")
            and PurePosixPath(patched.source_file).name not in NOT_RUNNABLE
        }
    )
