"""Golden change coverage ΔC with coverage.py: our rcfile, measured runs, executable patch lines.

REFERENCE.md's definition: removed/modified lines of the golden code patch are numbered as in R
and measured on R (the "before" runs); added/modified lines are numbered as in R∘X and measured
on R∘X (the "after" runs). A line is executable when the existing tests of the touched files or
the golden test files' runs execute it on its side (any test, or collection); golden ΔC = share
of executable lines that the golden tests execute — the tests the test patch wrote, as
``credit.py`` counts them (the evaluation's ΔC of a prediction too). Each measured run writes
its data files into the session's scratch (the run dir) under an rcfile generated here — never
the repository's own coverage configuration — then combines them (subprocesses and
multiprocessing children included) into a JSON report with per-test contexts, which is read
back and kept beside the logs. What runs inside the environment is ``measure.py`` and
``plugin.py`` here (:data:`RUNTIME`); this module runs in the builder.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import PurePosixPath

import unidiff

from builder.core.diffs import parse_patch
from validation.coverage.counts import split_interpreter_options
from validation.environments.runtime import RuntimeFiles
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
"""The pytest plugin (``plugin.py``, beside the measuring script in the run) that switches
coverage.py's context to each test's node id: exact test ids as contexts, a context switch per
test instead of a callback per function call, and it works with the sys.monitoring core."""

CONTEXT_ENV = "SWT_TEST_CONTEXT"
"""Set by the plugin to the running test's node id: child processes (subprocess, multiprocessing)
start their own coverage.py with our rcfile, whose static ``context`` reads it, so lines run
only in a child are attributed to the test that started it."""

RUNTIME = RuntimeFiles(
    "validation.coverage",
    (("_swt_measure.py", "measure.py"), (f"{CONTEXT_PLUGIN}.py", "plugin.py")),
)
"""What measured runs run with the environment's interpreter: ``measure.py`` (the command's
wrapper, see its docstring) and the context plugin beside it. Their digest is part of result
keys when coverage is on, beside :data:`MEASURE_VERSION`."""

MEASURE_VERSION = 4
"""Bump when what the builder asks of a measured run changes (the rcfile, the command, how the
report is read; part of result keys when coverage is on). The runtime files are keyed by their
digest (:data:`RUNTIME`).
3: child processes' lines carry the test that started them; one context switch per test.
4: interpreter options (``python -W all …``) stay before the wrapper script (a test command
with them failed under coverage: its stored drops must not be reused)."""

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
    runtime: str,
    rcfile_path: str,
    rcfile_text: str,
    report_path: str,
    wanted: Mapping[str, Iterable[int]] | None = None,
) -> list[str]:
    """``command`` (``python ARGS``) under ``coverage run`` with our rcfile; JSON to report.

    ``runtime``: the run's folder holding :data:`RUNTIME` (``Session.provide``); the command
    names the script by its path there (the digest, not the source). ``wanted``: the lines (per
    file) whose test contexts the report keeps. Interpreter options (``python -W all -m
    pytest``) stay before the script: ``coverage run`` takes none of them.
    """
    interpreter, args = split_interpreter_options(command)
    lines = {path: sorted(numbers) for path, numbers in (wanted or {}).items()}
    return [
        *interpreter, f"{runtime}/{RUNTIME.script}", rcfile_path, rcfile_text, report_path,
        json.dumps(lines, sort_keys=True), *args,
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
        patch_set = parse_patch(patch)
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
    """The executable patch lines, which of them the golden tests execute (as credited to
    them), and ΔC."""

    executable: tuple[tuple[str, str, int], ...]  # (side, path, line)
    golden_executed: tuple[tuple[str, str, int], ...]
    existing_executed: tuple[tuple[str, str, int], ...]
    golden_upper_bound: bool = False
    """Every line the golden test files' runs executed was credited, their unchanged tests'
    too (a runner without per-test contexts, and a test file that existed was changed)."""

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


Credited = Callable[[Measured], Mapping[str, Collection[int]]]
"""The lines of a golden run that count for the golden tests, per file (``credit.Credit``)."""


def _executed(run: Measured) -> Mapping[str, Collection[int]]:
    return run.executed


def _union(runs: Iterable[Measured], lines: Credited = _executed) -> dict[str, set[int]]:
    merged: dict[str, set[int]] = {}
    for run in runs:
        for path, numbers in lines(run).items():
            merged.setdefault(path, set()).update(numbers)
    return merged


def change_coverage(
    lines: PatchLines,
    golden: Mapping[str, Iterable[Measured]],
    existing: Mapping[str, Iterable[Measured]],
    credited: Credited = _executed,
) -> ChangeCoverage:
    """ΔC from measured runs per side (``"before"`` on R, ``"after"`` on R∘X): a patch line is
    executable when a golden or existing run executes it, and the golden tests' when it is
    among the ``credited`` lines of a golden run (default: every line the run executed)."""
    sides = {"before": lines.removed, "after": lines.added}
    executable, by_golden, by_existing = [], [], []
    for side, patch_side in sides.items():
        runs = list(golden.get(side, ()))
        golden_lines = _union(runs)
        credited_lines = _union(runs, credited)
        existing_lines = _union(existing.get(side, ()))
        for path in sorted(patch_side):
            for line in sorted(patch_side[path]):
                hit_golden = line in golden_lines.get(path, ())
                hit_existing = line in existing_lines.get(path, ())
                if hit_golden or hit_existing:
                    executable.append((side, path, line))
                if line in credited_lines.get(path, ()):
                    by_golden.append((side, path, line))
                if hit_existing:
                    by_existing.append((side, path, line))
    return ChangeCoverage(tuple(executable), tuple(by_golden), tuple(by_existing))


def attribution(
    coverage: ChangeCoverage, golden: Mapping[str, Iterable[Measured]]
) -> list[dict[str, object]]:
    """Per executable line: whether it is credited to the golden tests, and the test
    contexts of the golden runs that ran it (every test, "" for collection)."""
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
    "CONTEXT_ENV",
    "CONTEXT_PLUGIN",
    "COVERAGE_PACKAGE",
    "MEASURE_VERSION",
    "RUNTIME",
    "SYSMON_PYTHON",
    "ChangeCoverage",
    "Credited",
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
