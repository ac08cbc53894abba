"""Runs pytest with only the options the installed pytest has: ``python _swt_pytest.py ARGS...``.

Run by the environment's interpreter (Python 3.6 syntax; the standard library and pytest), copied
into the run (``runners.PYTEST_LAUNCHER``). The builder asks for every option it reads results
through (``PytestRunner.options``); a pytest older than one of them (a project's bound on pytest
may ask for one that old) would reject the whole command ("unrecognized arguments"), so such an
option and its value are left out (:data:`SINCE`). pytest then runs in this process as
``python -m pytest`` would: the working directory first on ``sys.path``. Exits with pytest's
exit code.

The run also gets :class:`Outcomes`, a plugin that marks an unexpected pass of an xfail test in
the JUnit report: pytest writes a non-strict xpass there as a plain pass. The builder's
``--deselect`` options are the launcher's own (:class:`Deselect`): it leaves out exactly the
tests they name, where pytest's option (3.5 and later; older ones lack it) leaves out every
test whose node id *starts with* one (``t.py::test_a`` takes ``t.py::test_ab`` with it).

Python's tracebacks (:data:`NATIVE_TRACEBACKS`) are asked for, and kept unless the pytest run is
the project's own.

Every node id is made canonical first (:class:`Canonical`, ``test_ids``): the host paths in it
(the checkout, the environment's prefix, the interpreter's, the run's home and temp dir)
become placeholders, in the report, the terminal summary and the ids deselection matches.
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


NATIVE_TRACEBACKS = "--tb=native"
"""pytest's option (1.3.4+) writing a failure's traceback as Python does. pytest's own (``long``,
with each frame's source and arguments) costs more than the tests on projects with many failing
or xfail tests: 20 of 28 s on xarray's ``test_variable.py`` (71 xfail), 28 of 51 s on seaborn's
``test_plot.py`` (74 failing). A test's verdict is made before its traceback is written: what the
style can change is only whether pytest survives writing it (its own formatter calls the reprs of
a frame's arguments; Python's prints none) and how long the run takes. The launcher leaves the
option out when the pytest it runs is the project's own (:func:`runner_under_test`): there the
formatting is code under test, run as the reference's harness ran it."""


DESELECT = "--deselect"
"""The option the builder names a test to leave out with (``PytestRunner.deselect_options``):
taken out of the arguments here and applied by :class:`Deselect`, on every pytest."""


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


def runner_under_test(pytest_file, root):
    """Whether the pytest imported from ``pytest_file`` (its module's file) is the project's own:
    a file under the checkout ``root`` (the pytest repository, whose checkout wins over what the
    environment installed)."""
    found = os.path.realpath(pytest_file)
    root = os.path.realpath(root)
    return found == root or found.startswith(root.rstrip(os.sep) + os.sep)


def deselections(args):
    """``args`` without their ``--deselect`` options, and the node ids those named."""
    kept, ids = [], []
    rest = iter(args)
    for arg in rest:
        if arg == DESELECT:
            ids.append(next(rest, ""))
        elif arg.startswith(DESELECT + "="):
            ids.append(arg[len(DESELECT) + 1 :])
        else:
            kept.append(arg)
    return kept, [node for node in ids if node]


class Deselect:
    """Leaves out at collection the tests whose node id is one of ``ids``, and reports them as
    deselected: only those. pytest's own ``--deselect`` matches node id prefixes, so leaving out
    ``test_a`` would leave out ``test_ab`` too, and its verdict would be missing from the run."""

    def __init__(self, ids):
        self.ids = frozenset(ids)

    def pytest_collection_modifyitems(self, config, items):
        chosen = [item for item in items if item.nodeid not in self.ids]
        dropped = [item for item in items if item.nodeid in self.ids]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = chosen


RAW_ID_PROPERTY = "swt_raw_id"
"""The JUnit ``<property>`` :class:`Canonical` writes on a test whose id it changed: the id as
pytest made it (the evidence; the report's name is the canonical one)."""


class Canonical:
    """Makes each collected item's node id canonical (``test_ids.canonical``) before any other
    plugin reads it, and writes the raw id of a changed one into its JUnit ``<testcase>``."""

    def __init__(self, canonical, places):
        self.canonical = canonical
        self.places = places
        self.raw = {}

    def pytest_collection_modifyitems(self, config, items):
        for item in items:
            raw = item.nodeid
            node = self.canonical(raw, self.places)
            if node != raw and renamed(item, node):
                self.raw[node] = raw

    def pytest_runtest_logreport(self, report):
        raw = self.raw.get(report.nodeid)
        if raw is not None and report.when == "teardown":
            properties = getattr(report, "user_properties", None)
            if isinstance(properties, list):
                properties.append((RAW_ID_PROPERTY, raw))


def renamed(item, node):
    """Gives ``item`` the node id ``node`` on the installed pytest: the structured id of pytest 9
    and later (``_id``, parsed from the text), the ``_nodeid`` of earlier ones (2.x set it the
    first time ``nodeid`` was read). False, with the id left as it was, where neither holds."""
    structured = getattr(item, "_id", None)
    if hasattr(structured, "names") and hasattr(structured, "parse"):
        attribute, value = "_id", type(structured).parse(node)
    elif hasattr(item, "_nodeid"):
        attribute, value = "_nodeid", node
    else:
        return False
    before = getattr(item, attribute)
    setattr(item, attribute, value)
    if item.nodeid == node:
        return True
    setattr(item, attribute, before)
    return False


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
    import _swt_test_ids as test_ids  # this folder's copy of validation/runs/test_ids.py

    sys.path[0] = os.getcwd()  # as `python -m pytest`: the working directory, not this folder
    import pytest

    Canonical.pytest_collection_modifyitems = first(Canonical.pytest_collection_modifyitems, pytest)
    Canonical.pytest_runtest_logreport = first(Canonical.pytest_runtest_logreport, pytest)
    Outcomes.pytest_runtest_logreport = first(Outcomes.pytest_runtest_logreport, pytest)
    installed = version(pytest.__version__)
    arguments, ids = deselections(supported(args, installed))
    if NATIVE_TRACEBACKS in arguments and runner_under_test(pytest.__file__, os.getcwd()):
        arguments = [arg for arg in arguments if arg != NATIVE_TRACEBACKS]
        where = os.path.dirname(os.path.abspath(pytest.__file__))
        sys.stderr.write(
            "swt: tracebacks in pytest's own format: the pytest that runs is the project's ("
            + where
            + ")\n"
        )
    canonical = Canonical(test_ids.canonical, test_ids.process_places())
    plugins = [canonical, Outcomes(), *([Deselect(ids)] if ids else [])]
    return int(pytest.main(arguments, plugins=plugins))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
