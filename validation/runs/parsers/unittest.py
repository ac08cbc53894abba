"""Parse unittest's verbose (-v) output into per-test statuses (also used for Django's runner).

Real logs interleave: a docstring line sits between a test's name and its status, printed
output splits ``... `` from the status, a subTest failure leaves the status empty (Python < 3.11
then starts the next test on the same line). The per-test lines are read first, then the
``FAIL:``/``ERROR:``/``UNEXPECTED SUCCESS:`` blocks at the end, which are authoritative.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from builder.core.records import TestStatus
from validation.runs.parsers import ParsedLog, dotted, file_for_module

_HEADER = re.compile(
    r"(?<![\w.])(?P<name>[\w.]+) \((?P<where>[\w.]+)\)(?: \((?P<params>[^)]*)\))?"
    r"(?P<dots> \.\.\. )?"
)
"""A test's header, ``name (module.Class)``; the name starts where its run of name characters
does (what a start inside the run would find, in time linear in the line, not quadratic)."""
_BLOCK = re.compile(
    r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>[\w.]+) \((?P<where>[\w.]+)\)",
    re.MULTILINE,
)
_IMPORT_FAILED = re.compile(r"(?:ImportError|Exception): Failed to import test module: ([\w.]+)")
_SUMMARY = re.compile(r"^Ran \d+ tests? in [\d.]+s$", re.MULTILINE)
_FAILED_LOADERS = ("unittest.loader._FailedTest", "unittest.loader.ModuleImportFailure")

_INLINE = {
    "ok": TestStatus.PASSED,
    "FAIL": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "expected failure": TestStatus.XFAIL,
    "unexpected success": TestStatus.XPASS,
}
_BLOCKS = {
    "FAIL": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "UNEXPECTED SUCCESS": TestStatus.XPASS,
}

ModuleToFile = Callable[[str], str | None]


def _inline_status(text: str) -> TestStatus | None:
    text = text.strip()
    if text in _INLINE:
        return _INLINE[text]
    if text.startswith("skipped"):
        return TestStatus.SKIPPED
    return None


class _Collector:
    """Accumulates statuses; a failing status is never overwritten by a passing one."""

    def __init__(self, module_to_file: ModuleToFile) -> None:
        self.module_to_file = module_to_file
        self.paths: dict[str, str] = {}  # module → file, found once (a log names it per test)
        self.tests: dict[str, TestStatus] = {}
        self.failed_modules: list[str] = []

    def test_id(self, name: str, where: str) -> str | None:
        """``file::Class::name`` from ``name (module.Class[.name])``; None for loader failures."""
        if where in _FAILED_LOADERS or where.startswith(tuple(f"{w}." for w in _FAILED_LOADERS)):
            self.failed_modules.append(name)
            return None
        parts = where.split(".")
        if parts[-1] == name and len(parts) > 2:  # Python ≥ 3.11 prints module.Class.name
            parts = parts[:-1]
        module, cls = ".".join(parts[:-1]), parts[-1]
        if module not in self.paths:
            self.paths[module] = self.module_to_file(module) or module.replace(".", "/") + ".py"
        path = self.paths[module]
        return f"{path}::{cls}::{name}"

    def set(self, test: str | None, status: TestStatus) -> None:
        if test is None:
            return
        old = self.tests.get(test)
        if old is None or not old.is_fail or status is TestStatus.ERROR:
            self.tests[test] = status


def parse_unittest_style(
    log: str, module_to_file: ModuleToFile
) -> tuple[dict[str, TestStatus], list[str], bool]:
    """(statuses, modules that failed to import, summary seen) of a verbose unittest-style log."""
    collector = _Collector(module_to_file)
    pending: str | None = None
    for line in log.splitlines():
        lead = len(line) - len(line.lstrip())  # a header after blanks alone starts the line
        headers = [h for h in _HEADER.finditer(line) if h.start() <= lead
                   or line.endswith(" ... ", 0, h.start())]  # fmt: skip
        if not headers:
            if pending is not None:
                status = _inline_status(line.rsplit(" ... ", 1)[-1])
                if status is not None:
                    collector.set(pending, status)
                    pending = None
            continue
        for index, header in enumerate(headers):
            test = collector.test_id(header["name"], header["where"])
            end = headers[index + 1].start() if index + 1 < len(headers) else len(line)
            tail = line[header.end() : end]
            if header["params"] is not None:  # a subTest's own line: it marks the parent
                status = _inline_status(tail)
                if status is not None and status.is_fail:
                    collector.set(test, status)
                continue
            status = _inline_status(tail) if header["dots"] else None
            if status is not None:
                collector.set(test, status)
                pending = None
            else:
                pending = test
    for block in _BLOCK.finditer(log):
        collector.set(collector.test_id(block["name"], block["where"]), _BLOCKS[block["kind"]])
    failed = collector.failed_modules + _IMPORT_FAILED.findall(log)
    return collector.tests, sorted(set(failed)), bool(_SUMMARY.search(log))


def _import_error_files(modules: list[str], files: list[str]) -> tuple[str, ...]:
    """Map failed module names (dotted, or the bare last component) to the given files."""
    found = set()
    for module in modules:
        path = file_for_module(module, files)
        if path is None:
            path = next((f for f in files if dotted(f).split(".")[-1] == module), module)
        found.add(path)
    return tuple(sorted(found))


def parse(log: str, files: list[str]) -> ParsedLog:
    """``python -m unittest -v a.b.test_c ...`` run from the repository root."""
    tests, failed, completed = parse_unittest_style(
        log, lambda module: file_for_module(module, files)
    )
    return ParsedLog(tests, _import_error_files(failed, files), completed)


def swe_bench_id(test_id: str) -> str:
    """The id SWE-bench records for a unittest test: ``name (module.Class)``."""
    path, cls, name = test_id.split("::")
    return f"{name} ({dotted(path)}.{cls})"
