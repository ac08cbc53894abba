"""pytest plugin of measured runs: coverage.py's context is the running test's node id.

Run by the environment's interpreter (Python 3.6 syntax; the standard library, coverage.py and
pytest), copied into the run as ``_swt_test_contexts.py`` beside ``_swt_measure.py``, which puts
that folder on ``sys.path``; the runner loads it with ``-p _swt_test_contexts``. Exact test ids
as contexts, one context switch per test instead of a callback per function call, and it works
with the sys.monitoring core.
"""

import copy
import json
import os
import sys

import coverage
import pytest

CONTEXT_ENV = "SWT_TEST_CONTEXT"
"""The running test's node id, for child processes' static context (the rcfile reads it)."""
WANTED_ENV = "SWT_WANTED_LINES"
"""The JSON file (written by ``_swt_measure.py``) of the wanted lines per absolute path."""

_monitoring = getattr(sys, "monitoring", None)
REARM = None
"""How lines already seen report again in the next test: None (the tracer reports every line
event: Python <= 3.11), "code" (coverage's sys.monitoring events re-armed on the code objects
holding wanted lines only), "restart" (every tool's events restarted: complete but costly)."""
_wanted = None
_armed = {}  # tracer tool id -> the code objects holding wanted lines
_scanned = {}  # tracer tool id -> how many of its code objects were looked at


def read_wanted(path):
    """The wanted lines (and their statements' first lines) per real path; none when no file is
    named (the plugin loaded without ``_swt_measure.py``)."""
    if not path:
        return {}
    with open(path) as handle:
        return {name: set(lines) for name, lines in json.load(handle).items()}


def _wanted_lines():
    global _wanted
    if _wanted is None:
        _wanted = read_wanted(os.environ.get(WANTED_ENV))
    return _wanted


def _sysmon_tracers(measuring):
    # coverage.py's sys.monitoring tracer: its tool id, the code objects it has seen, and its
    # activity flag (the collector saves data at a context switch only after activity)
    tracers = getattr(getattr(measuring, "_collector", None), "tracers", None) or ()
    needed = ("myid", "code_objects", "code_infos", "_activity")
    return [t for t in tracers if all(hasattr(t, name) for name in needed)]


def _rearm(measuring):
    """Lines the core switched off report again, in the code objects of wanted lines only
    (restart_events would re-arm every event of every code object, pytest's included)."""
    tracers = _sysmon_tracers(measuring)
    if not tracers:
        _monitoring.restart_events()
        return "restart"
    wanted = _wanted_lines()
    for tracer in tracers:
        armed = _armed.setdefault(tracer.myid, [])
        seen = tracer.code_objects
        for code in seen[_scanned.get(tracer.myid, 0) :]:
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


def children_context(measuring, nodeid):
    """Child processes this test starts record ``nodeid`` as their static context."""
    os.environ[CONTEXT_ENV] = nodeid  # multiprocessing children read our rcfile anew
    # patch = subprocess (coverage.py >= 7.10) hands the parsed config on to Python children;
    # a coverage.py without config.serialize has no such children to tell
    if "COVERAGE_PROCESS_CONFIG" in os.environ and hasattr(measuring.config, "serialize"):
        config = copy.copy(measuring.config)
        config.context = nodeid
        os.environ["COVERAGE_PROCESS_CONFIG"] = config.serialize()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    # One switch per test (each saves the data so far: ~0.3 ms): what runs between two tests
    # (pytest's own code) counts for the one before; what runs before the first, for "".
    global REARM
    measuring = coverage.Coverage.current()
    if measuring is not None:
        children_context(measuring, item.nodeid)
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
