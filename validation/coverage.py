"""Golden change coverage ΔC with coverage.py: our rcfile, measured runs, executable patch lines.

REFERENCE.md's definition: removed/modified lines of the golden code patch are numbered as in R
and measured on R (the "before" runs); added/modified lines are numbered as in R∘X and measured
on R∘X (the "after" runs). A line is executable when the existing tests of the touched files or
the golden tests execute it on its side; golden ΔC = share of executable lines the golden tests
execute. Each measured run writes its data files into the session's scratch (the run dir) under
an rcfile generated here — never the repository's own coverage configuration — then combines
them (subprocesses and multiprocessing children included) into a JSON report with per-test
contexts, which is read back and kept beside the logs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

import unidiff

from validation.runs.patches import PatchError

COVERAGE_PACKAGE = "coverage"
"""Installed into every measured environment (the spec's packages gain it when coverage is on)."""

_COVERAGE_PINS = {(3, 6): "6.2", (3, 7): "7.2.7", (3, 8): "7.6.1"}
_COVERAGE_CURRENT = "7.10.7"
"""The newest coverage.py per Python (an exact pin wins over an environment's dated resolution):
``patch = subprocess`` needs ≥ 7.10, so Pythons ≤ 3.8 measure multiprocessing children only."""


def coverage_requirement(python: str) -> str:
    """The coverage.py requirement installed into an environment of Python ``python``."""
    major, minor = (int(part) for part in python.split(".")[:2])
    if (major, minor) >= (3, 9):
        return f"{COVERAGE_PACKAGE}=={_COVERAGE_CURRENT}"
    if (major, minor) in _COVERAGE_PINS:
        return f"{COVERAGE_PACKAGE}=={_COVERAGE_PINS[major, minor]}"
    return COVERAGE_PACKAGE


CONTEXT_PLUGIN = "_swt_test_contexts"
"""The pytest plugin (written into the run's scratch by the measuring wrapper) that switches
coverage.py's context to each test's node id: exact test ids as contexts, a context switch per
test instead of a callback per function call, and it works with the sys.monitoring core."""

CONTEXT_ENV = "SWT_TEST_CONTEXT"
"""Set by the plugin to the running test's node id: child processes (subprocess, multiprocessing)
start their own coverage.py with our rcfile, whose static ``context`` reads it, so lines run
only in a child are attributed to the test that started it."""

WANTED_FILE = "_swt_wanted_lines.json"
"""Beside the plugin: the wanted lines (and their statements' first lines) per absolute path."""

_PLUGIN = """\
import copy
import json
import os
import sys

import coverage
import pytest

_monitoring = getattr(sys, "monitoring", None)
REARM = None
\"""How lines already seen report again in the next test: None (the tracer reports every line
event: Python <= 3.11), "code" (coverage's sys.monitoring events re-armed on the code objects
holding wanted lines only), "restart" (every tool's events restarted: complete but costly).\"""
_wanted = None
_armed = {}  # tracer tool id -> the code objects holding wanted lines
_scanned = {}  # tracer tool id -> how many of its code objects were looked at


def _wanted_lines():
    global _wanted
    if _wanted is None:
        here = os.path.dirname(os.path.abspath(__file__))
        try:
            with open(os.path.join(here, "@WANTED_FILE@")) as handle:
                _wanted = {path: set(lines) for path, lines in json.load(handle).items()}
        except (OSError, ValueError):
            _wanted = {}
    return _wanted


def _sysmon_tracers(measuring):
    # coverage.py's sys.monitoring tracer: its tool id, the code objects it has seen, and its
    # activity flag (the collector saves data at a context switch only after activity)
    tracers = getattr(getattr(measuring, "_collector", None), "tracers", None) or ()
    needed = ("myid", "code_objects", "code_infos", "_activity")
    return [t for t in tracers if all(hasattr(t, name) for name in needed)]


def _rearm(measuring):
    \"""Lines the core switched off report again, in the code objects of wanted lines only
    (restart_events would re-arm every event of every code object, pytest's included).\"""
    tracers = _sysmon_tracers(measuring)
    if not tracers:
        _monitoring.restart_events()
        return "restart"
    wanted = _wanted_lines()
    for tracer in tracers:
        armed = _armed.setdefault(tracer.myid, [])
        seen = tracer.code_objects
        for code in seen[_scanned.get(tracer.myid, 0):]:
            info = tracer.code_infos.get(id(code))
            if info is None or not info.tracing:  # not in a measured file
                continue
            lines = wanted.get(os.path.realpath(code.co_filename))
            if lines and any(line in lines for _, _, line in code.co_lines()):
                armed.append(code)
        _scanned[tracer.myid] = len(seen)
        for code in armed:
            events = _monitoring.get_local_events(tracer.myid, code)
            if events:  # setting them anew re-arms the locations the core had disabled
                _monitoring.set_local_events(tracer.myid, code, 0)
                _monitoring.set_local_events(tracer.myid, code, events)
    return "code"


def _children_context(measuring, nodeid):
    \"""Child processes this test starts record ``nodeid`` as their static context.\"""
    os.environ["@CONTEXT_ENV@"] = nodeid  # multiprocessing children read our rcfile anew
    if "COVERAGE_PROCESS_CONFIG" in os.environ:  # patch = subprocess hands the parsed config on
        try:
            config = copy.copy(measuring.config)
            config.context = nodeid
            os.environ["COVERAGE_PROCESS_CONFIG"] = config.serialize()
        except AttributeError:  # another coverage.py: its children keep the empty context
            pass


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    # One switch per test (each saves the data so far: ~0.3 ms): what runs between two tests
    # (pytest's own code) counts for the one before; what runs before the first, for "".
    global REARM
    measuring = coverage.Coverage.current()
    if measuring is not None:
        _children_context(measuring, item.nodeid)
        measuring.switch_context(item.nodeid)
        if _monitoring is not None and getattr(measuring.config, "core", None) == "sysmon":
            REARM = _rearm(measuring)
    try:
        yield
    finally:
        if measuring is not None and REARM == "code":
            # a re-armed line starts no frame: tell the collector there is data to save
            for tracer in _sysmon_tracers(measuring):
                tracer._activity = True
""".replace("@WANTED_FILE@", WANTED_FILE).replace("@CONTEXT_ENV@", CONTEXT_ENV)

_MEASURE = (
    "import json, os, sys\n"
    "rcfile, text, report, wanted, plugin = sys.argv[1:6]\n"
    "folder = os.path.dirname(os.path.abspath(rcfile))\n"
    "os.makedirs(folder, exist_ok=True)\n"
    "with open(rcfile, 'w') as handle:\n"
    "    handle.write(text)\n"
    f"with open(os.path.join(folder, '{CONTEXT_PLUGIN}.py'), 'w') as handle:\n"
    "    handle.write(plugin)\n"
    "sys.path.append(folder)\n"
    f"os.environ.pop('{CONTEXT_ENV}', None)  # this process's static context stays empty\n"
    "import coverage\n"
    "from coverage.cmdline import main\n"
    "wanted = json.loads(wanted)\n"
    "cov = coverage.Coverage(config_file=rcfile)\n"
    "starts = {}\n"
    "for path, lines in wanted.items():\n"
    "    try:\n"
    "        from coverage.python import PythonFileReporter\n"
    "        reporter = PythonFileReporter(os.path.abspath(path), cov)\n"
    "        starts[path] = {n: set(reporter.translate_lines([n])) for n in lines}\n"
    "    except (coverage.CoverageException, OSError):  # no source to analyse: the raw lines\n"
    "        starts[path] = {n: {n} for n in lines}\n"
    f"with open(os.path.join(folder, '{WANTED_FILE}'), 'w') as handle:\n"
    "    json.dump({os.path.realpath(p): sorted(set(s).union(*s.values()))\n"
    "               for p, s in starts.items()}, handle)\n"
    "code = main(['run', '--rcfile=' + rcfile, *sys.argv[6:]])\n"
    f"plugin = sys.modules.get('{CONTEXT_PLUGIN}')\n"
    "result = {'files': {}, 'rearm': getattr(plugin, 'REARM', None)}\n"
    "try:\n"
    "    cov.combine()\n"
    "    cov.save()\n"
    "    data = cov.get_data()\n"
    "    for name in sorted(data.measured_files()):\n"
    "        path = os.path.relpath(name) if os.path.isabs(name) else name\n"
    "        first_lines = starts.get(path, {})\n"
    "        try:\n"
    "            _, statements, _, missing, _ = cov.analysis2(name)\n"
    "            executed = set(statements) - set(missing)\n"
    "        except coverage.CoverageException:  # no source to analyse: the raw lines\n"
    "            executed = set(data.lines(name) or ())\n"
    "        executed |= {n for n, first in first_lines.items() if first and first <= executed}\n"
    "        by_line = data.contexts_by_lineno(name)\n"
    "        contexts = {}\n"
    "        for n, first in first_lines.items():\n"
    "            names = set(by_line.get(n, ())).union(*(by_line.get(f, ()) for f in first))\n"
    "            if names:\n"
    "                contexts[str(n)] = sorted(names)\n"
    "        result['files'][path] = {'executed_lines': sorted(executed), 'contexts': contexts}\n"
    "except coverage.CoverageException as error:  # no data: nothing measured ran\n"
    "    result['no_data'] = str(error)\n"
    "with open(report, 'w') as handle:\n"
    "    json.dump(result, handle)\n"
    "sys.exit(code)\n"
)
"""Runs inside the session: writes our rcfile and the context plugin, finds the first line of
the statement holding each wanted line (for the plugin, and for the report), runs the command
under ``coverage run`` (its own command line, in this process: one interpreter start), then
combines the parallel data files (children included) and writes what was measured as JSON in
the shape of coverage's JSON report: per file its executed statements, and the contexts (tests)
of the wanted lines only (coverage's own report with every line's contexts costs seconds on
real code), and how the plugin re-armed lines per test (``rearm``). A wanted line inside a
multi-line statement (a continuation line) counts as executed when its statement is, and gets
its statement's contexts: coverage reports statements by their first line, so a patch changing
only ``or getattr(...)`` on line 3 of an expression would otherwise never look executed. Exits
with the command's own exit code. One command: a backend may give every command a fresh scratch
dir (Docker does), so writing, measuring and reporting cannot be split."""

MEASURE_VERSION = 3
"""Bump when what a measured run reports changes (part of result keys when coverage is on).
3: child processes' lines carry the test that started them; one context switch per test."""

SYSMON_PYTHON = (3, 12)
"""From this Python on (with coverage.py ≥ 7.9, which is pinned there) the sys.monitoring core
measures: it stops reporting a line once seen, so instrumentation costs little."""


def rcfile(
    files: Iterable[str], data_file: str, *, contexts: str = "test_function", python: str = ""
) -> str:
    """Our coverage configuration: only ``files`` (repo-relative), data in the run dir.

    ``patch = subprocess`` (coverage ≥ 7.10; older versions ignore it with a warning) measures
    child Python processes; ``concurrency = multiprocessing`` follows multiprocessing workers
    (fork and spawn); ``parallel`` keeps every process's data file apart until combined.
    ``contexts``: ``"test_function"`` uses coverage's dynamic contexts (any runner);
    ``"runner"``: the runner switches contexts per test (our pytest plugin), which lets
    Python ``python`` ≥ 3.12 use the sys.monitoring core; child processes take the running
    test's id from ``CONTEXT_ENV`` as their static context.
    """
    if contexts not in ("test_function", "runner"):
        raise ValueError(f"contexts must be 'test_function' or 'runner', not {contexts!r}")
    include = "".join(f"    {path}\n" for path in sorted(set(files)))
    version = tuple(int(part) for part in python.split(".")[:2]) if python else (0, 0)
    sysmon = contexts == "runner" and version >= SYSMON_PYTHON
    return (
        "[run]\n"
        f"data_file = {data_file}\n"
        "parallel = true\n"
        "relative_files = true\n"
        "branch = false\n"
        "concurrency = multiprocessing, thread\n"
        "patch = subprocess\n"
        + ("dynamic_context = test_function\n" if contexts == "test_function" else "")
        + (f"context = ${{{CONTEXT_ENV}-}}\n" if contexts == "runner" else "")
        + ("core = sysmon\n" if sysmon else "")
        + "disable_warnings = no-data-collected, module-not-measured, couldnt-parse, no-sysmon\n"
        f"include =\n{include}"
        "[report]\n"
        "ignore_errors = true\n"
    )


def measured_command(
    command: list[str],
    rcfile_path: str,
    rcfile_text: str,
    report_path: str,
    wanted: Mapping[str, Iterable[int]] | None = None,
) -> list[str]:
    """``command`` (``python ARGS``) under ``coverage run`` with our rcfile; JSON to report.

    ``wanted``: the lines (per file) whose test contexts the report keeps.
    """
    python, *args = command
    lines = {path: sorted(numbers) for path, numbers in (wanted or {}).items()}
    return [
        python, "-c", _MEASURE, rcfile_path, rcfile_text, report_path,
        json.dumps(lines, sort_keys=True), _PLUGIN, *args,
    ]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Measured:
    """Lines one run executed per repo-relative file, and the contexts (tests) per line."""

    executed: Mapping[str, frozenset[int]]
    contexts: Mapping[str, Mapping[int, tuple[str, ...]]]


def read_report(report: bytes | None) -> Measured | None:
    """The executed lines of coverage's JSON report; None when the report is missing."""
    if report is None:
        return None
    data = json.loads(report)
    executed, contexts = {}, {}
    for path, entry in data.get("files", {}).items():
        key = PurePosixPath(path).as_posix()
        executed[key] = frozenset(entry.get("executed_lines", ()))
        contexts[key] = {
            int(line): tuple(sorted(names)) for line, names in entry.get("contexts", {}).items()
        }
    return Measured(executed, contexts)


@dataclasses.dataclass(frozen=True)
class PatchLines:
    """Lines of a code patch: removed (numbered as in R) and added (numbered as in R∘X)."""

    removed: Mapping[str, frozenset[int]]
    added: Mapping[str, frozenset[int]]

    @property
    def before_files(self) -> list[str]:
        return sorted(path for path, lines in self.removed.items() if lines)

    @property
    def after_files(self) -> list[str]:
        return sorted(path for path, lines in self.added.items() if lines)


def patch_lines(patch: str) -> PatchLines:
    """Removed and added lines of the Python files a golden code patch changes."""
    try:
        patch_set = unidiff.PatchSet(patch)
    except unidiff.UnidiffParseError as error:
        raise PatchError(f"golden patch cannot be parsed: {error}") from error
    removed: dict[str, set[int]] = {}
    added: dict[str, set[int]] = {}
    for patched in patch_set:
        source = patched.source_file.removeprefix("a/")
        target = patched.target_file.removeprefix("b/")
        for hunk in patched:
            for line in hunk:
                if line.is_removed and source.endswith(".py"):
                    removed.setdefault(source, set()).add(line.source_line_no)
                elif line.is_added and target.endswith(".py"):
                    added.setdefault(target, set()).add(line.target_line_no)
    return PatchLines(
        {path: frozenset(lines) for path, lines in removed.items()},
        {path: frozenset(lines) for path, lines in added.items()},
    )


@dataclasses.dataclass(frozen=True)
class ChangeCoverage:
    """The executable patch lines, which of them the golden tests execute, and ΔC."""

    executable: tuple[tuple[str, str, int], ...]  # (side, path, line)
    golden_executed: tuple[tuple[str, str, int], ...]
    existing_executed: tuple[tuple[str, str, int], ...]

    @property
    def golden(self) -> float | None:
        """Golden ΔC; None when the patch has no executable line (coverage unmeasurable)."""
        if not self.executable:
            return None
        return round(len(self.golden_executed) / len(self.executable), 6)

    @property
    def existing(self) -> float | None:
        """Share of executable patch lines the existing tests execute (Table 1's coverage)."""
        if not self.executable:
            return None
        return round(len(self.existing_executed) / len(self.executable), 6)


def _union(runs: Iterable[Measured]) -> dict[str, set[int]]:
    merged: dict[str, set[int]] = {}
    for run in runs:
        for path, lines in run.executed.items():
            merged.setdefault(path, set()).update(lines)
    return merged


def change_coverage(
    lines: PatchLines,
    golden: Mapping[str, Iterable[Measured]],
    existing: Mapping[str, Iterable[Measured]],
) -> ChangeCoverage:
    """ΔC from measured runs per side (``"before"`` on R, ``"after"`` on R∘X)."""
    sides = {"before": lines.removed, "after": lines.added}
    executable, by_golden, by_existing = [], [], []
    for side, patch_side in sides.items():
        golden_lines = _union(golden.get(side, ()))
        existing_lines = _union(existing.get(side, ()))
        for path in sorted(patch_side):
            for line in sorted(patch_side[path]):
                hit_golden = line in golden_lines.get(path, ())
                hit_existing = line in existing_lines.get(path, ())
                if hit_golden or hit_existing:
                    executable.append((side, path, line))
                if hit_golden:
                    by_golden.append((side, path, line))
                if hit_existing:
                    by_existing.append((side, path, line))
    return ChangeCoverage(tuple(executable), tuple(by_golden), tuple(by_existing))


def attribution(
    coverage: ChangeCoverage, golden: Mapping[str, Iterable[Measured]]
) -> list[dict[str, object]]:
    """Per executable line: whether golden tests ran it and the test contexts that did."""
    rows = []
    hits = set(coverage.golden_executed)
    for side, path, line in coverage.executable:
        contexts = sorted(
            {
                name
                for run in golden.get(side, ())
                for name in run.contexts.get(path, {}).get(line, ())
            }
        )
        rows.append(
            {
                "side": side,
                "path": path,
                "line": line,
                "golden": (side, path, line) in hits,
                "contexts": contexts,
            }
        )
    return rows


__all__ = [
    "CONTEXT_PLUGIN",
    "COVERAGE_PACKAGE",
    "ChangeCoverage",
    "Measured",
    "PatchLines",
    "attribution",
    "change_coverage",
    "coverage_requirement",
    "measured_command",
    "patch_lines",
    "rcfile",
    "read_report",
]
