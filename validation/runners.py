"""Test runners by kind: the command that runs selected test files and how to read results."""

from __future__ import annotations

import abc

from builder.records import TestStatus
from validation.junit import ReportError, collection_errors, parse_junit


class Runner(abc.ABC):
    """Builds a runner's command and turns its report into statuses keyed by test id."""

    kind: str
    report_name: str

    @abc.abstractmethod
    def command(self, python: str, files: list[str], report: str) -> list[str]:
        """The command running ``files`` and writing the report to ``report``."""

    @abc.abstractmethod
    def results(
        self, report: bytes | None, files: list[str]
    ) -> tuple[dict[str, TestStatus], list[str]] | None:
        """Statuses and collection errors from the report; None when no usable report exists."""


class PytestRunner(Runner):
    """pytest with JUnit XML (xunit1: it carries each test's file); collection errors go on."""

    kind = "pytest"
    report_name = "report.xml"

    def command(self, python: str, files: list[str], report: str) -> list[str]:
        return [
            python, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
            "-o", "junit_family=xunit1", "--continue-on-collection-errors",
            f"--junitxml={report}", *files,
        ]  # fmt: skip

    def results(self, report, files):
        if report is None:
            return None
        try:
            return parse_junit(report, files), collection_errors(report)
        except ReportError:
            return None


RUNNERS: dict[str, type[Runner]] = {"pytest": PytestRunner}
"""The registry; log parsers for Django's runner, sympy's bin/test and unittest join it."""


def make_runner(kind: str) -> Runner:
    try:
        return RUNNERS[kind]()
    except KeyError:
        raise ValueError(f"unknown test runner {kind!r} (known: {', '.join(RUNNERS)})") from None
