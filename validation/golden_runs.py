"""The golden runs: both sides' checkouts, the first pair, then repetitions and existing tests."""

from __future__ import annotations

import bisect
import contextlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from builder.core.gitutil import file_reader
from builder.core.pipeline import Outcome
from builder.core.records import DropReason, RunResult
from validation import coverage, phases
from validation.existing_tests import ExistingTests, existing_result
from validation.grading import Grade, grade, network_fail_to_pass, side_verdicts
from validation.job import SIDES, STAGE, Job, Runs
from validation.measured_run import measured_run
from validation.runs.backends import Session
from validation.runs.patches import PatchError
from validation.test_changes import patch_changes


class GoldenRuns(ExistingTests):
    """The runs of one validation, before and after the golden patch, side by side."""

    def _golden_sessions(
        self,
        job: Job,
        environment: object,
        mirror: Path,
        run_dir: Path,
        stack: contextlib.ExitStack,
    ) -> tuple[dict[str, Session], dict[str, set[str] | None]] | Outcome:
        """One checkout per side, made at the same time, with the test patch, the golden patch
        on the after side (on the before side only checked: it must apply), open until
        ``stack`` closes, and the definitions the test patch changes (for golden ΔC, read from
        the before side); or the drop when a patch does not apply."""
        record = job.record
        opened: dict[str, contextlib.AbstractContextManager[Session]] = {}

        def open_side(side: str) -> tuple[Session, dict[str, set[str] | None]] | Outcome:
            context = self._session(job, environment, mirror, run_dir / f"golden-{side}")
            session = context.__enter__()
            opened[side] = context
            changes: dict[str, set[str] | None] = {}
            try:
                session.apply(record.test_patch, "test patch")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
            if side == "before" and job.lines is not None:  # for golden ΔC
                with phases.phase("coverage"):
                    changes = _test_changes(job, mirror, session.tree)
            try:
                session.apply(record.patch, "golden patch", check_only=side == "before")
            except PatchError as error:
                return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
            return session, changes

        try:
            made = both({side: bind(open_side, side) for side in SIDES})
        finally:  # closed with the stack, whatever happened
            for side in SIDES:
                if side in opened:
                    stack.push(phases.timed("checkout", opened[side].__exit__))
        for side in SIDES:  # the before side's drop first
            if isinstance(made[side], Outcome):
                return made[side]
        sessions = {side: made[side][0] for side in SIDES}
        return sessions, made["before"][1]

    def _first_pair(
        self,
        job: Job,
        sessions: Mapping[str, Session],
        changes: Mapping[str, set[str] | None],
        runs: list[RunResult],
    ) -> Runs | Outcome:
        """The golden tests' first pair: before and after the golden patch in their checkouts,
        at the same time, measured when coverage is on; or the drop when a run cannot be graded
        or the after side collected nothing."""
        first = both(
            {
                side: bind(self._runs, job, sessions[side], job.files, "golden", side, [0])
                for side in SIDES
            }
        )
        failed = add_runs(runs, first)
        if failed is not None:
            return failed
        result = Runs(
            [first["before"][0][0]],
            [first["after"][0][0]],
            {side: [first[side][0][1]] for side in SIDES},
            changes,
        )
        if not result.after[0].tests:
            last = result.after[0]
            return Outcome.drop(
                STAGE,
                DropReason.NO_TESTS_COLLECTED,
                exit_code=str(last.exit_code),
                report_found=str(last.report_found),
                collection_errors=", ".join(last.collection_errors),
                log=last.log_path,
            )
        return result

    def _rest(
        self,
        job: Job,
        sessions: Mapping[str, Session],
        environment: object,
        mirror: Path,
        run_dir: Path,
        runs: list[RunResult],
        golden: Runs,
    ) -> tuple[Grade, Runs] | Outcome:
        """After the first pair: the golden grade and the existing tests, or the drop.

        A first pair with no F→P candidate decides the drop: no repetition can make one, and
        nothing more runs. Otherwise each side, in its checkout and at the same time as the
        other, runs the golden test files N-1 times more, whole, as the first pair ran them
        (leaving out the tests whose verdict decides nothing changed what the others saw:
        astropy-13033's first test to reach the leap-second check fails, and with the F→F one
        that did left out, a P→P test became it), then runs the existing tests
        (:meth:`_existing_plan`) with the test patch undone: a side does not wait for the other
        between the two. Drops in order: a run that cannot be graded, the golden grade, the
        existing tests."""
        with phases.phase("grading"):
            pair = grade(golden.before, golden.after)
            dropped = None if pair.fail_to_pass else grade_drop(pair, golden)
        if dropped is not None:  # none is kept without a fail-to-pass test
            return dropped
        repetitions = list(range(1, self.settings.repetitions))
        touched, reused_ids, files = self._existing_plan(job, mirror, golden)
        deselected = tuple(sorted(reused_ids))
        others = pair.tests - reused_ids
        existing_extra = (
            job.runner.deselect_options(leavable(deselected, others)) if deselected else []
        )

        def side_chain(side: str) -> tuple[list[Any], list[Any] | Outcome]:
            repeated = self._runs(job, sessions[side], job.files, "golden", side, repetitions)
            if not files or any(r.timed_out or not r.report_found for r, _ in repeated):
                return repeated, []
            with contextlib.ExitStack() as stack:
                with phases.phase("checkout"):
                    session = self._existing_session(
                        job, side, sessions[side], environment, mirror, run_dir, stack
                    )
                if isinstance(session, Outcome):
                    return repeated, session
                ran = self._runs(
                    job, session, files, "existing", side, [0], existing_extra, deselected
                )
            return repeated, ran

        chains = both({side: bind(side_chain, side) for side in SIDES})
        failed = add_runs(runs, {side: chains[side][0] for side in SIDES})
        made = {side: chains[side][1] for side in SIDES}
        ran = {side: [] if isinstance(m, Outcome) else m for side, m in made.items()}
        failed_existing = add_runs(runs, ran)
        if failed is not None:
            return failed
        for side in SIDES:
            getattr(golden, side).extend(run for run, _ in chains[side][0])
        with phases.phase("grading"):
            graded = grade(golden.before, golden.after)
            decisive = {*pair.fail_to_pass, *pair.pass_to_pass, *pair.pass_to_fail}
            dropped = grade_drop(graded, golden, decisive)
        if dropped is not None:
            return dropped
        for side in SIDES:
            if isinstance(made[side], Outcome):
                return made[side]
        if failed_existing is not None:
            return failed_existing
        if not touched:
            return graded, Runs([], [], {"before": [], "after": []})
        return graded, existing_result(golden, reused_ids, ran if files else {})

    def _runs(
        self,
        job: Job,
        session: Session,
        files: list[str],
        suite: str,
        side: str,
        repetitions: Sequence[int],
        extra: Sequence[str] = (),
        deselected: tuple[str, ...] = (),
    ) -> list[tuple[RunResult, coverage.Measured | None]]:
        """Runs of one side in one session, one after the other, up to the first that cannot
        be graded (timed out, or no report)."""
        made = []
        for repetition in repetitions:
            run, measured = self._run(
                job, session, files, suite, side, repetition, extra, deselected
            )
            made.append((run, measured))
            if run.timed_out or not run.report_found:
                break
        return made

    def _run(
        self,
        job: Job,
        session: Session,
        files: list[str],
        suite: str,
        side: str,
        repetition: int,
        extra: Sequence[str] = (),
        deselected: tuple[str, ...] = (),
    ) -> tuple[RunResult, coverage.Measured | None]:
        """One run of ``files`` (``extra``: runner options leaving ``deselected`` out); the
        first repetition of a side runs under coverage.py when measuring (its JSON report read
        back), the others run plain: instrumentation costs time, and a verdict that changes
        under it shows up as flaky."""
        measure = bool(job.include()) and repetition == 0
        with phases.phase(run_phase(suite, repetition)):
            return measured_run(
                session,
                job.runner,
                files,
                name=f"{suite}-{side}-{repetition}",
                side=side,
                logs=job.logs,
                timeout_s=self.settings.timeout_s,
                python=job.python,
                suite=suite,
                repetition=repetition,
                include=job.include() if measure else (),
                side_lines=job.side_lines(side),
                extra=extra,
                deselected=deselected,
            )


def run_phase(suite: str, repetition: int) -> str:
    """A run's phase: the golden first pair (measured when coverage is), a golden repetition
    (plain), or the existing tests: their costs differ in kind."""
    if suite == "golden":
        return phases.RUN_PREFIX + ("repeat" if repetition else "golden")
    return phases.RUN_PREFIX + suite


def leavable(left_out: Collection[str], running: Collection[str]) -> tuple[str, ...]:
    """The ids of ``left_out`` that a run of ``running`` can be told to leave out: pytest's own
    ``--deselect`` (which a spec's ``test_command`` gets; the launcher's matches exactly) leaves
    out every test whose node id starts with the one named, and ``t.py::test_a`` would take
    ``t.py::test_ab`` with it. Such an id runs; the run's verdicts of it are ignored all the
    same (``RunResult.deselected`` names every id of ``left_out``)."""
    ordered = sorted(running)

    def starts_one(test: str) -> bool:  # the ids starting with it follow it in sorted order
        at = bisect.bisect_left(ordered, test)
        return at < len(ordered) and ordered[at].startswith(test)

    return tuple(sorted(test for test in left_out if not starts_one(test)))


def grade_drop(
    graded: Grade, golden: Runs, decisive: Collection[str] | None = None
) -> Outcome | None:
    """FLAKY, PASS_TO_FAIL or NO_FAIL_TO_PASS with evidence; None when the grade keeps it.

    ``decisive``: the tests F→P, P→P or P→F in the first pair, the only ones whose flakiness
    drops the record (None: every test's). A test F→F, skipped or xfail/xpass there joins no
    label whatever its later verdicts (as when the repetitions left it out); a change of its
    verdict is listed as flaky in ``unlisted_tests``."""
    last = golden.after[-1].log_path
    flaky = [test for test in graded.flaky if decisive is None or test in decisive]
    if flaky:
        verdicts = {
            test: {
                side: sorted(v.value for v in side_verdicts(runs, test))
                for side, runs in (("before", golden.before), ("after", golden.after))
            }
            for test in flaky
        }
        return Outcome.drop(
            STAGE,
            DropReason.FLAKY,
            tests=", ".join(flaky),
            verdicts=json.dumps(verdicts, sort_keys=True),
            runs_per_side=str(len(golden.before)),
            log=last,
        )
    if graded.pass_to_fail:
        return Outcome.drop(
            STAGE, DropReason.PASS_TO_FAIL, tests=", ".join(graded.pass_to_fail), log=last
        )
    offline = network_fail_to_pass(graded, golden.before, golden.after)
    if not graded.fail_to_pass and offline:
        return Outcome.drop(
            STAGE,
            DropReason.NEEDS_NETWORK,
            tests=", ".join(offline),
            errors="\n".join(f"{test}: {line}" for test, line in offline.items()),
            log=last,
        )
    if not graded.fail_to_pass:
        return Outcome.drop(
            STAGE, DropReason.NO_FAIL_TO_PASS, fail_to_fail=", ".join(graded.fail_to_fail), log=last
        )
    return None


def bind(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


def both(work: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """The work of each side run at the same time (separate checkouts: nothing is shared);
    the results by side. A side's error is raised once both have ended. Each side is a lane of
    the record's phase clock."""
    with (
        phases.branches() as branch,
        ThreadPoolExecutor(max_workers=len(work), thread_name_prefix="swt-side") as pool,
    ):
        futures = {side: pool.submit(branch(function)) for side, function in work.items()}
    return {side: future.result() for side, future in futures.items()}


def add_runs(
    runs: list[RunResult], made: Mapping[str, list[tuple[RunResult, Any]]]
) -> Outcome | None:
    """Add the runs made (before's, then after's) to ``runs``; the drop of the first that
    cannot be graded, in that order. A run that crashed part way (``RunResult.crashed``) is
    such a run only when a run after the fix crashed too: a crash before the fix with clean
    runs after it is the failure the record is about (the fix stops the crash), and the tests
    the crashed run never reached fail before the fix, as SWE-bench's and SWT-Bench's grading
    read them (``run_metadata.crashed_before`` names it)."""
    failed = None
    crashed: list[RunResult] = []
    for side in SIDES:
        for run, _ in made[side]:
            runs.append(run)
            if failed is None and run.timed_out:
                failed = _timeout(run)
            elif failed is None and not run.report_found:
                failed = _runner_failed(run)
            elif run.crashed:
                crashed.append(run)
    if failed is None and any(run.side == "after" for run in crashed):
        failed = _run_crashed(crashed[0])
    return failed


def with_runs(outcome: Outcome, logs: Path) -> Outcome:
    """A drop's evidence plus the file listing every run made before it (runs.jsonl)."""
    verdict = outcome.verdict
    evidence = {**verdict.evidence, "runs": str(logs / "runs.jsonl")}
    return Outcome.drop(verdict.stage, verdict.reason, **evidence)


def _timeout(run: RunResult) -> Outcome:
    return Outcome.drop(
        STAGE,
        DropReason.TIMEOUT,
        side=run.side,
        suite=run.suite,
        seconds=str(run.duration_s),
        log=run.log_path,
    )


def _runner_failed(run: RunResult) -> Outcome:
    """The runner itself failed (a usage or internal error, a crash, no report): no test
    verdict can be read from the run, so none is taken as a failure."""
    return Outcome.drop(
        STAGE,
        DropReason.RUNNER_FAILED,
        side=run.side,
        suite=run.suite,
        exit_code=str(run.exit_code),
        log_tail=_tail(run.log_path),
        log=run.log_path,
    )


def _run_crashed(run: RunResult) -> Outcome:
    """The runner crashed part way (pytest's INTERNALERROR) after writing a report: the tests
    it never reached would read as failing, so the run is no verdict."""
    return Outcome.drop(
        STAGE,
        DropReason.RUN_CRASHED,
        side=run.side,
        suite=run.suite,
        exit_code=str(run.exit_code),
        crash=run.crashed,
        log=run.log_path,
    )


def _tail(path: str, lines: int = 20) -> str:
    """The last lines of a run's log (the runner's own complaint is there)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _test_changes(job: Job, mirror: Path, tree: Path) -> dict[str, set[str] | None]:
    """The definitions the test patch changed in each test file that runs, read as the
    evaluation reads a prediction's (the base commit's file from the mirror) against the file
    as the patch left it in ``tree``; None: every test of the file (new, or unparsable)."""
    read = file_reader(mirror, job.record.base_commit)

    def old(path: str) -> str | None:
        try:
            return read(path)
        except UnicodeDecodeError:  # not UTF-8 text: no definition can be told apart
            return None

    return patch_changes(old, {path: read_file(tree, path) for path in job.files})


def read_file(tree: Path, path: str) -> str | None:
    """A file of a checkout (a patch applied there has checked that no link leads out of it);
    None when it is not there."""
    try:
        return (tree / path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
