"""Why a test id is in one list and not the other: a named cause with evidence, or unexplained."""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping

from builder.compare.ids import cut, duplicate_index, short_path_option
from validation.grading import FAILED_BEFORE_AND_AFTER, SKIPPED
from validation.runs.junit import CONNECTION_ERRORS

JUNK_ID = "junk_id"
"""The reference id names no test (pytest's ``[100%]`` progress column, an id without ``::``),
or names a test of a file the runs were not given (:func:`foreign_file`): a line printed from
inside a test — a nested pytest run of pytester — that the reference's parser read as a
result."""
XFAIL_EXCLUDED = "xfail_excluded"
"""The test's outcome is declared (xfail/xpass): our grading leaves it out of both lists."""
REFERENCE_EMPTY = "reference_empty"
"""The reference lists of the instance are both empty while ours are not: its run aborted
(e.g. a pytest collection error) before it reported any test."""
REFERENCE_LIST_EMPTY = "reference_list_empty"
"""One reference list is empty while the other is not, and ours lists tests there: a reference
``PASS_TO_PASS`` with no test at all, although the touched files hold tests that pass before
and after the fix in our runs — the reference gives nothing to compare them with."""
REFERENCE_RUN_CRASHED = "reference_run_crashed"
"""The reference lists every test of the instance (of several files) as FAIL_TO_PASS and none
as PASS_TO_PASS, while our runs pass some of them before the fix: its run before the fix
crashed (a collection error that stopped the session, an INTERNALERROR) and reported no test,
which counts every test as failing."""
COLLECTION_ABORT = "collection_abort"
"""The reference's pytest run stopped part way (a collection error without
``--continue-on-collection-errors``, or an INTERNALERROR): the tests of the files it never
reached are absent from its lists, or listed as FAIL_TO_PASS when the stopped run was the one
before the fix (see :mod:`builder.compare.aborts`). Given only with evidence of the stop: our
runs' collection errors."""
SYMPY_LAST_TEST = "sympy_last_test"
"""sympy's reporter artifact: SWE-bench's sympy lists lack one test per file (the file's last),
recognised by its pattern: the only test of its file the reference lacks, while it lists others
of that file, and the last test function of the file (``run_metadata.last_tests``)."""
NEEDS_NETWORK = "needs_network"
"""Our runs have no network: the test failed before and after the fix with a connection error
(``run_metadata.needs_network``), so it is in neither of our lists, while the reference, whose
runs had the network, lists it."""
CUT_COLLISION = "cut_collision"
"""Several of our pytest ids are one id as SWE-bench's parser records them: up to their first
whitespace (parametrize ids with a space), or with a parametrize id that is a path reduced to
its last component (:func:`builder.compare.ids.short_path_option`). It keeps one status for
them all, so the reference lists the shared id in one list while ours are in both (or in the
other)."""
BEFORE_OUTCOME_DIFFERS = "before_outcome_differs"
"""Ours lists the test in FAIL_TO_PASS and the reference in PASS_TO_PASS, or the reverse: the
test passes after the fix on both sides, and the runs before it disagree (ours failed it, the
reference's passed it, or the reverse)."""
SKIPPED_HERE = "skipped_here"
"""Our golden runs skipped the test (``run_metadata.unlisted_tests``: pytest's reason, e.g. an
optional package the environment lacks), so it is in neither of our lists."""
FAILS_HERE = "fails_here"
"""The test failed before and after the fix in our runs (F→F, ``run_metadata.unlisted_tests``
with the failure's first line), so it is in neither of our lists."""
OPTIONAL_PACKAGE = "optional_package"
"""An optional package present on one side only: our runs skipped the test for lack of a module
the reference's environment had (the skip reason names it), or the test's file imports a module
only when it is installed (``run_metadata.optional_imports``), our runs ran its tests, and the
reference lists no test of the file."""
NOT_PASSED_IN_REFERENCE = "not_passed_in_reference"
"""Ours lists the test and the reference lists it in neither list, while it lists other tests of
its file (so its runs reached the file): the reference's runs did not see the transition ours
did — for a PASS_TO_PASS id, they did not pass it both before and after the fix; for a
FAIL_TO_PASS id, they did not see it fail before and pass after. The reference publishes no run
logs, so what its runs saw instead (a failure, a skip) is not known; reproduced by hand, such
tests failed there for dependency versions other than ours."""
UNEXPLAINED = "unexplained"
"""No recognised cause: a real disagreement to look at (environment, flakiness, grading)."""

AS_DEFINED = (
    JUNK_ID,
    XFAIL_EXCLUDED,
    REFERENCE_EMPTY,
    REFERENCE_LIST_EMPTY,
    REFERENCE_RUN_CRASHED,
    COLLECTION_ABORT,
    SYMPY_LAST_TEST,
    CUT_COLLISION,
)
"""Artifacts of the reference, proven from its lists (a junk id, an empty list, a crashed or
stopped run with its evidence, sympy's reporter, SWE-bench's id cut), and the benchmark's
definition of the labels (xfail/xpass are no transitions). A list whose every difference has
one of these agrees with the reference *as defined*."""

ENVIRONMENT = (
    NEEDS_NETWORK,
    BEFORE_OUTCOME_DIFFERS,
    SKIPPED_HERE,
    FAILS_HERE,
    OPTIONAL_PACKAGE,
    NOT_PASSED_IN_REFERENCE,
)
"""Environment differences: the two sides' runs saw the test differently (no network here, a
package present on one side, another outcome before the fix, a skip or a failure on one side).
Named, but no agreement: counted apart from :data:`AS_DEFINED`."""

CAUSES = (*AS_DEFINED, *ENVIRONMENT, UNEXPLAINED)
"""Every cause a difference may be given, in the order the table shows them: the artifacts of
:data:`AS_DEFINED` first, then the :data:`ENVIRONMENT` differences, then the rest."""


def missing_cause(
    reference_id: str,
    *,
    junk: bool | str,
    expected_outcome: bool,
    crashed: str = "",
    collection_abort: str = "",
    cut_collision: str = "",
    network_error: str = "",
    before_outcome: str = "",
    unlisted: str = "",
    guarded: Iterable[str] = (),
) -> list[tuple[str, str]]:
    """The causes (each with its evidence) of a reference id our list lacks, the first the one
    it is counted under, the others what else explains it (a cause names the whole reason, or
    the difference shows each of several). ``junk``: it names no
    test, or the evidence of :func:`foreign_file` when it names another file; ``crashed``: the
    evidence of :func:`reference_run_crashed` for it;
    ``collection_abort`` and ``cut_collision``: the evidence
    :func:`builder.compare.aborts.collection_aborts` and :func:`cut_collisions` give it, if any;
    ``network_error``: the connection error our runs recorded for the test
    (``run_metadata.needs_network``); ``before_outcome``: the evidence of
    :func:`before_outcome` when our other list has the test; ``unlisted``: what our runs saw of
    it when it is in neither of our lists (``run_metadata.unlisted_tests``); ``guarded``: the
    modules its file imports only when installed (``run_metadata.optional_imports``)."""
    if junk:
        return [(JUNK_ID, junk if isinstance(junk, str) else f"{reference_id!r} is not a test id")]
    if expected_outcome:
        return [(XFAIL_EXCLUDED, "in run_metadata.expected_outcome_tests")]
    found: list[tuple[str, str]] = []
    if network_error:
        found.append((
            NEEDS_NETWORK,
            f"failed before and after the fix in our runs, which have no network: {network_error}",
        ))  # fmt: skip
    if crashed:
        found.append((REFERENCE_RUN_CRASHED, crashed))
    if collection_abort:
        found.append((COLLECTION_ABORT, collection_abort))
    if cut_collision:
        found.append((CUT_COLLISION, cut_collision))
    if before_outcome and not (crashed or collection_abort or cut_collision):
        # (with one of those, the other list holding it is what that artifact shows)
        found.append((BEFORE_OUTCOME_DIFFERS, before_outcome))
    if unlisted and not (network_error and _names_connection_error(unlisted)):
        cause = unlisted_cause(unlisted, guarded)
        if cause[0] != UNEXPLAINED or not found:
            found.append(cause)
    return found or [(UNEXPLAINED, "")]


_EXCEPTION_TYPE = re.compile(r"([\w.]+):")


def _names_connection_error(outcome: str) -> bool:
    """Whether what our runs saw of a test (``run_metadata.unlisted_tests``) is the connection
    error itself (then a failure there says nothing besides ``needs_network``): the failure's
    exception type when its message starts with one (``AttributeError: 'ConnectionError'
    object has no attribute 'message'`` is not), else anything in it."""
    detail = outcome.partition(": ")[2]
    typed = _EXCEPTION_TYPE.match(detail)
    return CONNECTION_ERRORS.search(typed[1] if typed else detail) is not None


def foreign_file(path: str, run_files: Iterable[str]) -> str:
    """The evidence of a reference pytest id of ``path``, when no file the runs were given (the
    test patch's files, ``run_files``) is that file: empty when one is."""
    files = sorted(set(run_files))
    if not files or path in files:
        return ""
    return (
        f"names a test of {path}, which is not a file the runs were given "
        f"({', '.join(files)}): a line printed from inside a test (e.g. a nested pytest run) "
        "that the reference's parser read as a result"
    )


_MODULE_NAMED = (
    re.compile(r"could not import '(?P<module>[\w.]+)'"),  # pytest.importorskip
    re.compile(r"No module named '(?P<module>[\w.]+)'"),
    # starts only where a run of name characters starts: linear on a long dotted run
    re.compile(
        r"(?<![\w.])(?P<module>[A-Za-z_][\w.]*) (?:is )?not (?:available|installed|importable)\b"
    ),
    re.compile(r"\brequires? (?:the )?(?P<module>[A-Za-z_][\w.]*)"),
)
"""Skip reasons that name a module the environment lacks: importorskip's, an ImportError's,
and the usual ``<module> is not available`` / ``requires <module>`` of skip marks."""
_NOT_MODULES = frozenset({"python", "network", "internet", "a", "an", "the", "this", "that"})


def missing_module(reason: str, guarded: Iterable[str] = ()) -> str:
    """The module a skip ``reason`` says the environment lacks: one of ``guarded`` (modules the
    test's file imports only when installed) named in it, else one of :data:`_MODULE_NAMED`'s
    forms; empty when it names none."""
    words = {word.lower() for word in re.findall(r"[\w.]+", reason)}
    for module in sorted(guarded):
        if module.lower() in words or module.split(".")[0].lower() in words:
            return module
    for pattern in _MODULE_NAMED:
        found = pattern.search(reason)
        if found and found["module"].lower() not in _NOT_MODULES:
            if not found["module"].lower().startswith("python"):
                return found["module"]
    return ""


def unlisted_cause(outcome: str, guarded: Iterable[str] = ()) -> tuple[str, str]:
    """The cause and evidence of a test our golden runs saw as ``outcome`` (a value of
    ``run_metadata.unlisted_tests``): skipped for lack of an optional module (named by the
    reason, or one of ``guarded``, the modules its file imports only when installed), skipped
    otherwise, failed before and after, or (flaky) none."""
    head, _, detail = outcome.partition(": ")
    module = missing_module(detail, guarded) if head == SKIPPED else ""
    if module:
        return OPTIONAL_PACKAGE, (
            f"our golden runs skipped it for lack of {module}, which the reference's "
            f"environment evidently had: {detail}"
        )
    if head == SKIPPED:
        return SKIPPED_HERE, (
            f"our golden runs skipped it: {detail}"
            if detail
            else "our golden runs skipped it (no reason given)"
        )
    if head == FAILED_BEFORE_AND_AFTER:
        text = "failed before and after the fix in our runs"
        return FAILS_HERE, f"{text}: {detail}" if detail else text
    return UNEXPLAINED, f"our golden runs: {outcome}"


def extra_cause(
    *,
    reference_empty: bool,
    crashed: str = "",
    collection_abort: str = "",
    sympy_last: str = "",
    cut_collision: str = "",
    before_outcome: str = "",
    list_empty: str = "",
    optional: str = "",
    not_passed: str = "",
    unproven: str = "",
) -> list[tuple[str, str]]:
    """The causes (each with its evidence, the first the one it is counted under) of one of our
    ids the reference list lacks: every one that applies; ``crashed``:
    the evidence of :func:`reference_run_crashed` for it; ``collection_abort``,
    ``sympy_last`` and ``cut_collision`` are the evidence of
    :func:`builder.compare.aborts.collection_aborts`, :func:`sympy_last_tests` and
    :func:`cut_collisions` for it; ``before_outcome`` that of :func:`before_outcome` when the
    reference's other list has it; ``list_empty`` names the reference list, empty while the
    other is not, that the id is missing from; ``optional`` the evidence of
    :func:`optional_import` when the reference lists no test of its file; ``not_passed`` the
    evidence of :func:`not_passed_in_reference` when the reference lists the id in neither
    list; ``unproven`` what is known of a difference left unexplained (a stopped run's shape
    with no evidence of a stop)."""
    if reference_empty:
        return [(REFERENCE_EMPTY, "FAIL_TO_PASS and PASS_TO_PASS of the reference are both empty")]
    if crashed or collection_abort or sympy_last or cut_collision:
        before_outcome = list_empty = not_passed = ""  # the list shape such an artifact shows
    if list_empty:
        not_passed = ""  # an empty reference list lists none of the file's tests there
    found = [
        (cause, evidence)
        for cause, evidence in (
            (REFERENCE_RUN_CRASHED, crashed),
            (COLLECTION_ABORT, collection_abort),
            (SYMPY_LAST_TEST, sympy_last),
            (CUT_COLLISION, cut_collision),
            (BEFORE_OUTCOME_DIFFERS, before_outcome),
            (
                REFERENCE_LIST_EMPTY,
                list_empty and f"the reference's {list_empty} is empty, its other list not",
            ),
            (OPTIONAL_PACKAGE, optional),
            (NOT_PASSED_IN_REFERENCE, not_passed),
        )
        if evidence
    ]
    return found or [(UNEXPLAINED, unproven)]


def optional_import(path: str, modules: Iterable[str]) -> str:
    """The evidence of one of our tests of ``path``, a file that imports ``modules`` only when
    they are installed, when the reference lists no test of that file."""
    named = ", ".join(sorted(modules))
    return (
        f"{path} imports {named} only when installed (at module level, its tests skipped "
        f"otherwise); our runs ran its tests with {named} installed, the reference lists no "
        f"test of the file: its environment evidently lacked {named}"
    )


def reference_run_crashed(theirs_fail: int, ours_passed: int, files: int) -> str:
    """The evidence of a reference that lists all its ``theirs_fail`` tests (of ``files``
    files) as FAIL_TO_PASS and none as PASS_TO_PASS, ``ours_passed`` of which our runs pass
    before the fix."""
    return (
        f"the reference lists all {theirs_fail} of its tests ({files} files) as FAIL_TO_PASS "
        f"and none as PASS_TO_PASS, {ours_passed} of which our runs pass before the fix: its "
        "run before the fix crashed (a collection error that stopped the session, an "
        "INTERNALERROR) and reported no test, which counts every test as failing"
    )


def not_passed_in_reference(ours: str, path: str, listed: int) -> str:
    """The evidence of one of our ``ours``-list tests of the file ``path`` that the reference
    lists in neither list while it lists ``listed`` other tests of that file."""
    seen = (
        "failed before the fix and passed after it"
        if ours == "FAIL_TO_PASS"
        else "passed before and after the fix"
    )
    theirs = (
        "its runs did not see it fail before and pass after"
        if ours == "FAIL_TO_PASS"
        else "its runs did not pass it both before and after"
    )
    return (
        f"our runs: {seen}; the reference lists it in neither list while it lists {listed} "
        f"other test(s) of {path}: {theirs} (it publishes no run logs that say why)"
    )


def before_outcome(ours: str, theirs: str) -> str:
    """The evidence of a test ours lists in ``ours`` and the reference in ``theirs`` (the
    other list): what each side's run before the fix did with it."""
    what = (
        "our run before the fix failed it; the reference's passed it"
        if ours == "FAIL_TO_PASS"
        else "the reference's run before the fix failed it; ours passed it"
    )
    return f"ours lists it in {ours}, the reference in {theirs}: {what}"


def cut_collisions(
    ours: Mapping[str, Iterable[tuple[str, str]]], theirs: Mapping[str, Iterable[str]]
) -> dict[str, str]:
    """Keys shared by several of our ids (``ours``: list name → (key, id) pairs) that the
    reference lists, with the evidence: which of our ids share it, in which of our lists, and
    where the reference has it."""
    sharing: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for name, pairs in ours.items():
        for key, test in pairs:
            sharing[key].append((name, test))
    listed = {key: name for name, keys in theirs.items() for key in keys}
    return {
        key: (
            f"{len(tests)} of our tests are {key!r} {_how_shared([test for _, test in tests])} "
            f"({'; '.join(f'{test} in our {name}' for name, test in sorted(tests))}); "
            f"SWE-bench's parser made them one id with one status, listed in its {listed[key]}"
        )
        for key, tests in sorted(sharing.items())
        if len(tests) > 1 and key in listed
    }


def _how_shared(tests: Iterable[str]) -> str:
    """How our pytest ids became one key: cut at their first space, a path parametrize id
    reduced to its last component, a duplicate id's index in pytest 7's form, or several."""
    tests = list(tests)
    ways = []
    if any(cut(test) != test for test in tests):
        ways.append("up to their first space")
    if any(short_path_option(cut(test)) != cut(test) for test in tests):
        ways.append("once the path of their parametrize id is cut to its last component")
    if any(duplicate_index(test) != test for test in tests):
        ways.append("once pytest 8's underscore before a duplicate id's index is dropped")
    return " and ".join(ways) or "as they are"


def sympy_last_tests(
    extra: Iterable[str], matched: Iterable[str], last_tests: Mapping[str, str]
) -> dict[str, str]:
    """Our sympy ids (``path::name``) that fit the reporter artifact, with the evidence: the
    only id of its file (over both lists) the reference lacks, while it lists others of it,
    and the file's last test function (``last_tests``: file → name; a file it lacks is not
    known to fit)."""
    extra_by_file = collections.defaultdict(list)
    for test in extra:
        extra_by_file[test.rsplit("::", 1)[0]].append(test)
    matched_by_file = collections.Counter(test.rsplit("::", 1)[0] for test in matched)
    return {
        tests[0]: (
            f"the last test of {path} and the only one of it the reference lacks; "
            f"it lists {matched_by_file[path]} other(s) of that file"
        )
        for path, tests in extra_by_file.items()
        if len(tests) == 1
        and matched_by_file[path]
        and tests[0].rsplit("::", 1)[1] == last_tests.get(path)
    }
