"""Test runners by kind: the command that runs selected test files and how to read results."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence

from builder.core.records import TestStatus
from validation.environments.runtime import RuntimeFiles
from validation.environments.specs import RunnerKind
from validation.runs.junit import ReportError, collection_errors, parse_junit
from validation.runs.parsers import ParsedLog, dotted
from validation.runs.parsers import django as django_parser
from validation.runs.parsers import sympy as sympy_parser
from validation.runs.parsers import unittest as unittest_parser
from validation.runs.pytest_launcher import NATIVE_TRACEBACKS

PYTEST_LAUNCHER = RuntimeFiles(
    "validation.runs",
    (("_swt_pytest.py", "pytest_launcher.py"), ("_swt_test_ids.py", "test_ids.py")),
)
"""What starts pytest in a run: it leaves out the options the installed pytest lacks (see
``pytest_launcher.py``), so one command line fits every pytest an environment may get."""


NO_HEADER = "--no-header"
"""pytest's option (6.0+) that leaves its session header, and the hooks writing it, out."""


class Runner(abc.ABC):
    """Builds a runner's command and turns its report into statuses keyed by test id.

    A command is the launcher (the runner's own, or an environment spec's ``test_command``),
    then the options the runner needs to report results, then the test files (or labels).
    """

    kind: RunnerKind
    report_name: str | None
    """The report file the command writes; None: the run's log is the report (log parsers)."""
    runtime: RuntimeFiles | None = None
    """Files the default launcher runs: a session provides them (``Session.provide``) and the
    folder is passed to :meth:`command`; None: the launcher needs none."""

    def __init__(self, launcher: Sequence[str] = ()) -> None:
        self.launcher = tuple(launcher)

    def command(
        self,
        python: str,
        files: list[str],
        report: str,
        extra: Sequence[str] = (),
        runtime: str | None = None,
    ) -> list[str]:
        """The command running ``files`` and writing the report to ``report``; ``extra``
        options go after the runner's own (e.g. :meth:`context_options`); ``runtime`` is the
        folder holding :attr:`runtime` in the session."""
        if self.launcher:
            launcher, launched = list(self.launcher), []
        else:
            launcher = self.default_launcher(python, runtime)
            launched = self.launched_options(runtime)
        return [*launcher, *self.options(report), *launched, *extra, *self.arguments(files)]

    def context_options(self, plugin: str) -> list[str] | None:
        """Options loading the coverage-context plugin module ``plugin`` (a context per test);
        None: this runner cannot load it (coverage's own per-function contexts are used)."""
        return None

    def deselect_options(self, tests: Sequence[str]) -> list[str] | None:
        """Options leaving ``tests`` (ids of this runner) out of a run of their files; None:
        this runner runs whole files only."""
        return None

    @abc.abstractmethod
    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        """How the runner starts when the spec names no ``test_command`` (``runtime``: the
        folder holding :attr:`runtime`, when the session provided it)."""

    def launched_options(self, runtime: str | None) -> list[str]:
        """Options the runner gets only when :meth:`default_launcher` starts it (a spec's
        ``test_command`` runs as given)."""
        return []

    def options(self, report: str) -> list[str]:
        """Options the results are read back through (a report file, verbosity)."""
        return []

    def arguments(self, files: list[str]) -> list[str]:
        """What selects the tests: the test files themselves by default."""
        return list(files)

    @abc.abstractmethod
    def results(
        self, report: bytes | None, files: list[str]
    ) -> tuple[dict[str, TestStatus], list[str]] | None:
        """Statuses and collection errors from the report; None when no usable report exists."""

    def completed(self, report: bytes | None) -> bool:
        """Evidence that the suite ran to its end: a report exists (log runners: its summary)."""
        return report is not None

    def crash(self, exit_code: int | None, log: str) -> str:
        """The evidence that the runner itself crashed part way (its results cut short, even
        when it wrote a report), read from its exit code and log; empty when it did not."""
        return ""

    def swe_bench_id(self, test_id: str) -> str:
        """Our test id in the form SWE-bench's FAIL_TO_PASS lists use for this runner, for
        comparing with official records (pytest node ids are already that form)."""
        return test_id


PYTEST_INTERNAL_ERROR = 3
"""pytest's exit code for an internal error (``ExitCode.INTERNAL_ERROR``)."""


class PytestRunner(Runner):
    """pytest with JUnit XML (xunit1: it carries each test's file); collection errors go on.

    Started through :data:`PYTEST_LAUNCHER` when the session provides it, so an old pytest gets
    only the options it has; ``python -m pytest`` otherwise (and a spec's ``test_command`` as
    given)."""

    kind = "pytest"
    report_name = "report.xml"
    runtime = PYTEST_LAUNCHER

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        if runtime is None:
            return [python, "-m", "pytest"]
        return [python, f"{runtime}/{PYTEST_LAUNCHER.script}"]

    def launched_options(self, runtime: str | None) -> list[str]:
        """Through the launcher, ``--no-header``, as SWE-bench's harness runs pytest: the header
        is written by the project's own ``pytest_report_header`` hooks, which run before any
        test and may change what the tests see (astropy 4.0's header plugin turns deprecation
        warnings into errors for the rest of the session). The launcher leaves it out for a
        pytest before 6.0, which lacks it. And :data:`NATIVE_TRACEBACKS`, which the launcher
        leaves out when the project is pytest itself."""
        return [] if runtime is None else [NO_HEADER, NATIVE_TRACEBACKS]

    def options(self, report: str) -> list[str]:
        return [
            "-rA", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            "--continue-on-collection-errors", f"--junitxml={report}",
        ]  # fmt: skip

    def context_options(self, plugin: str) -> list[str] | None:
        return ["-p", plugin]

    def deselect_options(self, tests: Sequence[str]) -> list[str] | None:
        return [option for test in tests for option in ("--deselect", test)]

    def results(self, report, files):
        if report is None:
            return None
        try:
            return parse_junit(report, files), collection_errors(report, files)
        except ReportError:
            return None

    def crash(self, exit_code: int | None, log: str) -> str:
        """pytest's exit code 3 (``INTERNALERROR``: a plugin or hook raised, the session
        ended there) with the error's last ``INTERNALERROR>`` line."""
        if exit_code != PYTEST_INTERNAL_ERROR:
            return ""
        lines = [line.strip() for line in log.splitlines() if line.startswith("INTERNALERROR>")]
        last = next((line for line in reversed(lines) if line != "INTERNALERROR>"), "")
        return f"pytest exited {exit_code} (internal error)" + (f": {last}" if last else "")


class _LogRunner(Runner):
    """A runner read from its verbose log by a named parser (validation/parsers)."""

    report_name = None
    parser: Callable[[str, list[str]], ParsedLog]

    def _parsed(self, report: bytes | None, files: list[str]) -> ParsedLog | None:
        if report is None:
            return None
        return type(self).parser(report.decode("utf-8", errors="replace"), files)

    def results(self, report, files):
        parsed = self._parsed(report, files)
        return None if parsed is None else (parsed.tests, list(parsed.collection_errors))

    def completed(self, report: bytes | None) -> bool:
        parsed = self._parsed(report, [])
        return parsed is not None and parsed.completed


class UnittestRunner(_LogRunner):
    """``python -m unittest -v`` on the test files' modules, from the repository root."""

    kind = "unittest"
    parser = staticmethod(unittest_parser.parse)
    swe_bench_id = staticmethod(unittest_parser.swe_bench_id)

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        return [python, "-m", "unittest"]

    def options(self, report: str) -> list[str]:
        return ["-v"]

    def arguments(self, files: list[str]) -> list[str]:
        return [dotted(path) for path in files]


class DjangoRunner(_LogRunner):
    """Django's own ``tests/runtests.py`` at verbosity 2, one process, labels from the files."""

    kind = "django"
    parser = staticmethod(django_parser.parse)
    swe_bench_id = staticmethod(django_parser.swe_bench_id)

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        return [python, "tests/runtests.py"]

    def options(self, report: str) -> list[str]:
        return ["--verbosity", "2", "--parallel", "1"]

    def arguments(self, files: list[str]) -> list[str]:
        return [django_parser.label(path) for path in files]


class SympyRunner(_LogRunner):
    """sympy's ``bin/test`` without the cache, verbose (one line per test)."""

    kind = "sympy"
    parser = staticmethod(sympy_parser.parse)
    swe_bench_id = staticmethod(sympy_parser.swe_bench_id)

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        return [python, "bin/test"]

    def options(self, report: str) -> list[str]:
        return ["-C", "--verbose"]


RUNNERS: dict[str, type[Runner]] = {
    runner.kind: runner for runner in (PytestRunner, UnittestRunner, DjangoRunner, SympyRunner)
}
"""The registry: an implementation for each kind a spec may name (``RUNNER_KINDS``)."""


def make_runner(kind: str, launcher: Sequence[str] = ()) -> Runner:
    """The runner of ``kind``; ``launcher`` (a spec's ``test_command``) replaces how it starts."""
    try:
        return RUNNERS[kind](launcher)
    except KeyError:
        raise ValueError(f"unknown test runner {kind!r} (known: {', '.join(RUNNERS)})") from None
