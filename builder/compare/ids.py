"""Test ids in the reference's form per runner: cut at the first whitespace, and a pytest
parametrize id that is an absolute path reduced to its last component, as SWE-bench did; a
duplicate parametrize id's index in one form whatever the pytest that wrote it."""

from __future__ import annotations

import re

from validation.runs.runners import make_runner
from validation.runs.test_ids import PLACEHOLDERS

DEFAULT_RUNNER = "pytest"
"""The runner of an instance whose run_metadata names none (pytest node ids)."""

_JUNK = re.compile(r"^\[\s*\d+%\]$")
"""pytest's progress column (``[100%]``), which SWE-bench's parser read as a test id."""


def cut(test_id: str) -> str:
    """``test_id`` up to its first whitespace: SWE-bench splits each log line there, so a
    pytest parametrize id with a space (``test_x[a b]``) is recorded as ``test_x[a``."""
    parts = test_id.split(maxsplit=1)
    return parts[0] if parts else ""


_OPTION = re.compile(r"(.*?)\[(.*)\]")
"""A pytest id's name and the bracket part of its parametrize id (first ``[`` to last ``]``)."""


def short_path_option(test_id: str) -> str:
    """``test_id`` with a parametrize id that starts with one ``/`` (and has no ``*``) reduced to
    ``/`` and its last path component, as SWE-bench's ``parse_log_pytest_options`` (its parser
    for requests, pylint, pydicom) records it: ``test_stdin[/testbed/tests/m.py-m-/testbed/m.py]``
    is ``test_stdin[/m.py]``. A canonical id's path (``<testbed>/tests/m.py``: ``test_ids``) is
    such a path. Idempotent; other ids are returned unchanged."""
    found = _OPTION.search(test_id)
    if found is None:
        return test_id
    main, option = found.groups()
    if option.startswith(PLACEHOLDERS):  # a path of the run's machine, made canonical
        option = "/" + option.split(">", 1)[1].lstrip("/")
    if not option.startswith("/") or option.startswith("//") or "*" in option:
        return test_id
    return f"{main}[/{option.split('/')[-1]}]"


_DUPLICATE_INDEX = re.compile(r"(?<=\d)_(?=\d+\]$)")
"""The underscore pytest ≥ 8.0 puts between a duplicate parametrize id ending in a digit and
the index that makes it unique."""


def duplicate_index(test_id: str) -> str:
    """``test_id`` with a duplicate parametrize id's index in pytest's earlier form: pytest
    8.0 writes ``test_unparse[1234-1234_0]`` where pytest 7 and earlier wrote
    ``test_unparse[1234-12340]`` (the same test, the second of two ``1234`` cases). Both
    sides are keyed so, so a record and a run of either pytest match. Idempotent."""
    return _DUPLICATE_INDEX.sub("", test_id, count=1)


def pytest_key(test_id: str) -> str:
    """The key of a pytest id: cut at its first whitespace, then :func:`short_path_option`
    and :func:`duplicate_index`."""
    return duplicate_index(short_path_option(cut(test_id)))


_QUALIFIED = re.compile(r"^(?P<name>\w+) \((?P<where>[\w.]+)\.(?P=name)\)(?P<rest>.*)$", re.DOTALL)
"""unittest's id on Python ≥ 3.11, ``name (module.Class.name)``: the method name repeated
inside the parentheses (earlier Pythons print ``name (module.Class)``)."""


def reference_key(test_id: str, runner: str) -> str:
    """The key a reference id is compared by: pytest ids as :func:`pytest_key` makes them; the
    ``name (module.Class)`` form of Django/unittest (a Python ≥ 3.11 id, which repeats the
    name inside the parentheses, in that form too, so records of either era match runs of
    either era) and sympy's bare names as they are."""
    if runner == DEFAULT_RUNNER:
        return pytest_key(test_id)
    text = test_id.strip()
    qualified = _QUALIFIED.match(text)
    if qualified:
        return f"{qualified['name']} ({qualified['where']}){qualified['rest']}"
    return text


def our_key(test_id: str, runner: str) -> str:
    """The key one of our ``path::[Class::]name`` ids is compared by (the reference's form);
    an unknown runner raises ValueError (run_metadata names only kinds a spec may name)."""
    return reference_key(make_runner(runner).swe_bench_id(test_id), runner)


def is_junk(test_id: str, runner: str) -> bool:
    """A reference id that names no test: pytest's progress column, an empty id, or (pytest) an
    id with no ``::`` node separator outside its parametrize brackets."""
    text = test_id.strip()
    if not text or _JUNK.match(text):
        return True
    if runner == DEFAULT_RUNNER:
        return "::" not in text.split("[", 1)[0]
    return False
