"""Runs pytest with only the options the installed pytest has: ``python _swt_pytest.py ARGS...``.

Run by the environment's interpreter (Python 3.6 syntax; the standard library and pytest), copied
into the run (``runners.PYTEST_LAUNCHER``). The builder asks for every option it reads results
through (``PytestRunner.options``); a pytest older than one of them (a project's bound on pytest
may ask for one that old) would reject the whole command ("unrecognized arguments"), so such an
option and its value are left out (:data:`SINCE`). pytest then runs in this process as
``python -m pytest`` would: the working directory first on ``sys.path``. Exits with pytest's
exit code.

The run also gets :class:`Outcomes`, a plugin that marks an unexpected pass of an xfail test in
the JUnit report: pytest writes a non-strict xpass there as a plain pass. A pytest older than
``--deselect`` (:data:`DESELECT_SINCE`) gets :class:`Deselect` in its place, which leaves the
same tests out at collection.
"""

import os
import re
import sys

SINCE = {
    "-o": ((3, 0), 1),
    "--override-ini": ((3, 0), 1),
    "--continue-on-collection-errors": ((3, 0), 0),
    "--no-header": ((6, 0), 0),
}
"""Option → (the first pytest that has it, how many values follow it as separate arguments).
From pytest's changelog and sources: 3.0.0 (2016-08-18) added ``-o``/``--override-ini`` and
``--continue-on-collection-errors``, 6.0.0 (2020-07-28) ``--no-header``. Options of every
pytest (``-p``, ``-r``, ``--junitxml``) are not listed: an ``-r`` character a pytest does not
know is ignored by it."""


DESELECT = "--deselect"
DESELECT_SINCE = (3, 5)
"""pytest 3.5.0 (2018-03-21) added ``--deselect NODEID_PREFIX`` (its changelog, #3198); the
builder passes it to leave tests out of a run (the existing-test pass)."""


def version(text):
    """The release numbers of a version string: ``"3.0.7"`` → (3, 0, 7), ``"4.0.0rc1"`` →
    (4, 0, 0); what is not a number ends it."""
    numbers = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.group() != part:
            break
    return tuple(numbers)


def supported(args, installed):
    """``args`` without the options the pytest of version ``installed`` lacks (nor their values:
    ``-o VALUE`` goes whole, ``--option=value`` is one argument)."""
    kept = []
    skip = 0
    for arg in args:
        if skip:
            skip -= 1
            continue
        name, _, value = arg.partition("=")
        since = SINCE.get(name)
        if since is not None and installed < since[0]:
            skip = 0 if value else since[1]
            continue
        kept.append(arg)
    return kept


def deselections(args, installed):
    """``args`` without their ``--deselect`` options, and the node id prefixes those named,
    when the pytest of version ``installed`` lacks the option; else ``args`` as they are."""
    if installed >= DESELECT_SINCE:
        return list(args), []
    kept, prefixes = [], []
    rest = iter(args)
    for arg in rest:
        if arg == DESELECT:
            prefixes.append(next(rest, ""))
        elif arg.startswith(DESELECT + "="):
            prefixes.append(arg[len(DESELECT) + 1 :])
        else:
            kept.append(arg)
    return kept, [prefix for prefix in prefixes if prefix]


class Deselect:
    """``--deselect`` for a pytest that lacks it: the collected tests whose node id starts with
    one of ``prefixes`` are left out and reported as deselected, as pytest 3.5 does."""

    def __init__(self, prefixes):
        self.prefixes = tuple(prefixes)

    def pytest_collection_modifyitems(self, config, items):
        chosen = [item for item in items if not item.nodeid.startswith(self.prefixes)]
        dropped = [item for item in items if item.nodeid.startswith(self.prefixes)]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = chosen


OUTCOME_PROPERTY = "swt_outcome"
"""The JUnit ``<property>`` name :class:`Outcomes` writes (its value: :data:`XPASSED`)."""
XPASSED = "xpassed"


class Outcomes:
    """Marks each non-strict xpass (a test marked xfail that passed) in the JUnit report with
    the property ``swt_outcome=xpassed``: pytest's report has the same empty ``<testcase/>``
    for it as for a pass, while its terminal summary says ``XPASS``. A strict xpass is a
    failure in the report already. The property goes on the teardown report, whose
    ``user_properties`` the JUnit plugin writes (pytest 3.2 and later; an older pytest's
    report stays as it was)."""

    def __init__(self):
        self.xpassed = set()

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed and hasattr(report, "wasxfail"):
            self.xpassed.add(report.nodeid)
        elif report.when == "teardown" and report.nodeid in self.xpassed:
            properties = getattr(report, "user_properties", None)
            if isinstance(properties, list):
                properties.append((OUTCOME_PROPERTY, XPASSED))


def first(function, pytest):
    """``function`` as a hook implementation called before the other plugins' (the JUnit
    plugin's among them), in the form the installed pytest knows."""
    hookimpl = getattr(pytest, "hookimpl", None)
    if hookimpl is not None:
        return hookimpl(tryfirst=True)(function)
    function.tryfirst = True  # pytest before 2.8 reads the attribute
    return function


def main(args):
    sys.path[0] = os.getcwd()  # as `python -m pytest`: the working directory, not this folder
    import pytest

    Outcomes.pytest_runtest_logreport = first(Outcomes.pytest_runtest_logreport, pytest)
    installed = version(pytest.__version__)
    arguments, prefixes = deselections(supported(args, installed), installed)
    plugins = [Outcomes(), *([Deselect(prefixes)] if prefixes else [])]
    return int(pytest.main(arguments, plugins=plugins))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
