"""Runs a test command under coverage.py with our rcfile and writes what it measured as JSON.

Run by the environment's interpreter (Python 3.6 syntax; the standard library and coverage.py),
copied into the run as ``_swt_measure.py`` with the context plugin beside it::

    python _swt_measure.py RCFILE RCFILE_TEXT REPORT WANTED_JSON ARGS...

It writes our rcfile, finds the first line of the statement holding each wanted line (for the
plugin, and for the report), runs ``python ARGS`` under ``coverage run`` (its own command line,
in this process: one interpreter start), then combines the parallel data files (children
included) and writes what was measured as JSON in the shape of coverage's JSON report: per file
its executed statements, and the contexts (tests) of the wanted lines only (coverage's own
report with every line's contexts costs seconds on real code), and how the plugin re-armed lines
per test (``rearm``). A wanted line inside a multi-line statement (a continuation line) counts
as executed when its statement is, and gets its statement's contexts: coverage reports
statements by their first line, so a patch changing only ``or getattr(...)`` on line 3 of an
expression would otherwise never look executed. Exits with the command's own exit code. One
command: a backend may give every command a fresh scratch dir (Docker does), so writing,
measuring and reporting cannot be split.
"""

import json
import os
import sys

import coverage
from coverage.cmdline import main as coverage_main
from coverage.python import PythonFileReporter

PLUGIN = "_swt_test_contexts"
"""The context plugin's module name (its file is beside this one)."""
CONTEXT_ENV = "SWT_TEST_CONTEXT"
"""Set by the plugin per test; this process's own static context stays empty."""
WANTED_ENV = "SWT_WANTED_LINES"
"""Tells the plugin which file holds the wanted lines."""
WANTED_FILE = "_swt_wanted_lines.json"
"""Beside the rcfile: the wanted lines (and their statements' first lines) per real path."""


def statement_starts(cov, wanted):
    """Per file, per wanted line: the first lines of the statements holding it (the line itself
    when the file cannot be analysed)."""
    starts = {}
    for path, lines in wanted.items():
        try:
            reporter = PythonFileReporter(os.path.abspath(path), cov)
            starts[path] = {n: set(reporter.translate_lines([n])) for n in lines}
        except (coverage.CoverageException, OSError):  # no source to analyse: the raw lines
            starts[path] = {n: {n} for n in lines}
    return starts


def wanted_by_real_path(starts):
    """What the plugin re-arms: the wanted lines and their first lines, per real path."""
    return {
        os.path.realpath(path): sorted(set(lines).union(*lines.values()))
        for path, lines in starts.items()
    }


def measured_files(cov, starts):
    """Per measured (repo-relative) file: executed statements and the wanted lines' contexts."""
    files = {}
    data = cov.get_data()
    for name in sorted(data.measured_files()):
        path = os.path.relpath(name) if os.path.isabs(name) else name
        first_lines = starts.get(path, {})
        try:
            _, statements, _, missing, _ = cov.analysis2(name)
            executed = set(statements) - set(missing)
        except coverage.CoverageException:  # no source to analyse: the raw lines
            executed = set(data.lines(name) or ())
        executed |= {n for n, first in first_lines.items() if first and first <= executed}
        by_line = data.contexts_by_lineno(name)
        contexts = {}
        for n, first in first_lines.items():
            names = set(by_line.get(n, ())).union(*(by_line.get(f, ()) for f in first))
            if names:
                contexts[str(n)] = sorted(names)
        files[path] = {"executed_lines": sorted(executed), "contexts": contexts}
    return files


def main(argv):
    """Measure ``python ARGS`` (see the module's docstring); the command's exit code."""
    rcfile, text, report, wanted = argv[:4]
    folder = os.path.dirname(os.path.abspath(rcfile))
    os.makedirs(folder, exist_ok=True)
    with open(rcfile, "w") as handle:
        handle.write(text)
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # the plugin, for pytest -p
    os.environ.pop(CONTEXT_ENV, None)  # this process's static context stays empty
    cov = coverage.Coverage(config_file=rcfile)
    cov.load()  # initialized: coverage.py 6 (Python 3.6) builds the reporter's exclusions here
    starts = statement_starts(cov, json.loads(wanted))
    wanted_file = os.path.join(folder, WANTED_FILE)
    with open(wanted_file, "w") as handle:
        json.dump(wanted_by_real_path(starts), handle)
    os.environ[WANTED_ENV] = wanted_file
    code = coverage_main(["run", "--rcfile=" + rcfile] + argv[4:])
    result = {"files": {}, "rearm": getattr(sys.modules.get(PLUGIN), "REARM", None)}
    try:
        cov.combine()
        cov.save()
        result["files"] = measured_files(cov, starts)
    except coverage.CoverageException as error:  # no data: nothing measured ran
        result["no_data"] = str(error)
    with open(report, "w") as handle:
        json.dump(result, handle)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
