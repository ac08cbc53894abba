"""One run of test files in a session, under coverage.py when asked: its RunResult and coverage."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from builder.core.records import RunResult
from validation import coverage, phases
from validation.runs import test_ids
from validation.runs.backends import Session
from validation.runs.junit import (
    ReportError,
    failure_messages,
    network_errors,
    raw_ids,
    skip_reasons,
)
from validation.runs.process import Completed
from validation.runs.runners import Runner


def measured_run(
    session: Session,
    runner: Runner,
    files: list[str],
    *,
    name: str,
    side: str,
    logs: Path,
    timeout_s: float,
    python: str,
    suite: str = "golden",
    repetition: int = 0,
    include: Iterable[str] = (),
    side_lines: Mapping[str, frozenset[int]] | None = None,
    extra: Sequence[str] = (),
    deselected: tuple[str, ...] = (),
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> tuple[RunResult, coverage.Measured | None]:
    """Run ``files`` with ``runner`` in ``session`` (``extra``: runner options leaving
    ``deselected`` out); ``name`` names its log, report and coverage files in ``logs``.

    With ``include`` (repository files), the run is measured by coverage.py, per-test contexts
    coming from the runner when it can switch them and from coverage's dynamic contexts
    otherwise; ``side_lines`` are the lines of those files the JSON report must account for.
    The measurement is None when the run timed out or wrote no report: a cut-short run's
    coverage is no measurement. ``wrap``, when given, turns the command into the one that runs
    (e.g. under the line counter, ``validation.coverage.counts``).

    Every test id is canonical (``validation.runs.test_ids``): the pytest launcher made it so in
    the run, and any runner's ids are made so here with the session's paths; the ids as the
    runner reported them are the run's ``raw_ids``."""
    include = sorted(set(include))
    measure = bool(include)
    report_name = f"{name}-{runner.report_name}" if runner.report_name else None
    plugin = runner.context_options(coverage.CONTEXT_PLUGIN) if measure else None
    runtime = session.provide(runner.runtime) if runner.runtime else None
    report_path = session.scratch_path(report_name or f"{name}.unused")
    command = runner.command("python", files, report_path, [*(plugin or ()), *extra], runtime)
    json_name = f"{name}.coverage.json"
    if measure:
        rcfile = coverage.rcfile(
            include,
            session.scratch_path(f"{name}.coverage"),
            contexts="test_function" if plugin is None else "runner",
            python=python,
        )
        command = coverage.measured_command(
            command,
            session.provide(coverage.RUNTIME),
            session.scratch_path(f"{name}.coveragerc"),
            rcfile,
            session.scratch_path(json_name),
            side_lines or {},
        )
    if wrap is not None:
        command = wrap(command)
    log_path = logs / f"{name}.log"
    completed = session.run(command, log_path, timeout_s)
    with phases.phase("grading"):
        run = _result(
            session, runner, files, command, completed, log_path, report_name, logs,
            side=side, suite=suite, repetition=repetition, deselected=deselected,
        )  # fmt: skip
    measured = None
    if measure and not completed.timed_out:
        with phases.phase("coverage"):
            data = session.read_scratch(json_name)
            if data is not None:
                (logs / json_name).write_bytes(data)
            measured = coverage.read_report(data)
    return run, measured


def _result(
    session: Session,
    runner: Runner,
    files: list[str],
    command: list[str],
    completed: Completed,
    log_path: Path,
    report_name: str | None,
    logs: Path,
    *,
    side: str,
    suite: str,
    repetition: int,
    deselected: tuple[str, ...],
) -> RunResult:
    """The run's result, read from its report (a copy kept in ``logs``) with canonical ids:
    reading verdicts is grading's cost, not the run's."""
    if report_name is None:
        report = log_path.read_bytes() if log_path.is_file() else None
    else:
        report = session.read_scratch(report_name)
        if report is not None:
            (logs / report_name).write_bytes(report)
    parsed = runner.results(report, files)
    reported, errors = parsed if parsed is not None else ({}, [])
    places = test_ids.Places(session.id_places())
    names = {test: test_ids.canonical(test, places) for test in reported}
    renamed = _from_report(raw_ids, runner, report, files, reported)  # by the launcher
    raws = {names[test]: renamed.get(test, test) for test in reported}
    tests = {
        names[test]: status for test, status in reported.items() if names[test] not in deselected
    }
    return RunResult(
        side=side,
        suite=suite,
        repetition=repetition,
        command=tuple(command),
        exit_code=completed.exit_code,
        timed_out=completed.timed_out,
        duration_s=completed.duration_s,
        report_found=runner.completed(report),
        tests=tests,
        collection_errors=tuple(errors),
        log_path=str(log_path),
        deselected=deselected,
        network_errors=_renamed(
            _from_report(network_errors, runner, report, files, reported), names, tests
        ),
        skip_reasons=_renamed(
            _from_report(skip_reasons, runner, report, files, reported), names, tests
        ),
        failure_messages=_renamed(
            _from_report(failure_messages, runner, report, files, reported), names, tests
        ),
        raw_ids={test: raw for test, raw in raws.items() if test in tests and raw != test},
        crashed=runner.crash(completed.exit_code, log_text := _log_text(log_path)),
        plain_path=plain_path(log_text),
        daemon_interruptions=completed.interruptions,
    )


def _from_report(
    read: Callable[[bytes, list[str]], dict[str, str]],
    runner: Runner,
    report: bytes | None,
    files: list[str],
    tests: Mapping[str, Any],
) -> dict[str, str]:
    """What ``read`` finds per test in a pytest run's JUnit report (see ``junit``: connection
    errors, skip reasons, failure messages), for the run's tests; nothing for other runners."""
    if runner.kind != "pytest" or report is None:
        return {}
    try:
        found = read(report, files)
    except ReportError:
        return {}
    return {test: text for test, text in found.items() if test in tests}


def _renamed(
    found: Mapping[str, str], names: Mapping[str, str], tests: Mapping[str, Any]
) -> dict[str, str]:
    """``found`` keyed by the canonical ids (``names``) of the run's tests."""
    return {names[test]: text for test, text in found.items() if names[test] in tests}


OWN_TRACEBACKS = "swt: tracebacks in pytest's own format"
"""How the pytest launcher's line begins when it leaves ``--tb=native`` out, with why
(``validation/runs/pytest_launcher.py``; written here, as the launcher's file is in every stored
result's key, and a test holds the two the same)."""


def plain_path(log: str) -> str:
    """The shortcut a run's log says it did not take, with why (the launcher's line,
    :data:`OWN_TRACEBACKS`); empty when it says none."""
    for line in log.splitlines():
        if line.startswith(OWN_TRACEBACKS):
            return line.removeprefix("swt: ")[:300]
    return ""


def _log_text(path: Path) -> str:
    """A run's log as text ('' when the run wrote none)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
