"""SWT-Bench's command and parser per repository (commands.toml) and the runner made of
them: the command words, what changes with coverage, tox's testenv, Django's labels."""

from __future__ import annotations

import pytest

from builder.core.records import TestStatus
from builder.evaluate.swt.commands import (
    SwtBenchRunner,
    ToxError,
    command_for,
    tox_commands,
)

PYTEST = ("pytest", "--no-header", "-rA", "--tb=no", "-p", "no:cacheprovider")


@pytest.mark.parametrize(
    ("repo", "parser"),
    [
        ("astropy/astropy", "pytest_v2"), ("psf/requests", "pytest_options"),
        ("pylint-dev/pylint", "pytest_options"), ("pydicom/pydicom", "pytest_options"),
        ("pallets/flask", "pytest"), ("pydata/xarray", "pytest"), ("mwaskom/seaborn", "seaborn"),
        ("sphinx-doc/sphinx", "pytest_v2"), ("scikit-learn/scikit-learn", "pytest_v2"),
        ("sympy/sympy", "sympy"), ("django/django", "django"),
        ("matplotlib/matplotlib", "matplotlib"), ("pytest-dev/pytest", "pytest"),
    ],
)  # fmt: skip
def test_each_repository_has_swt_benchs_parser(repo, parser):
    command = command_for(repo, "1.0", "pytest")
    assert command.parser == parser and command.source == "swt-bench"


def test_the_commands_are_swt_benchs():
    assert command_for("pallets/flask", "2.3", "pytest").words == PYTEST
    assert command_for("pytest-dev/pytest", "5.4", "pytest").words == ("pytest", "-rA")
    assert command_for("mwaskom/seaborn", "0.12", "pytest").words == (
        "pytest", "--no-header", "-rA")  # fmt: skip
    sympy = command_for("sympy/sympy", "1.1", "sympy")
    assert sympy.words == ("bin/test", "-C", "--verbose")
    assert dict(sympy.env) == {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}
    assert command_for("django/django", "3.0", "django").words[-2:] == ("--parallel", "1")
    assert command_for("django/django", "1.9", "django").words == (
        "./tests/runtests.py", "--verbosity", "2")  # fmt: skip


def test_a_repository_swt_bench_does_not_know_gets_the_documented_default():
    default = command_for("me/mine", "0.1", "pytest")
    assert (default.words, default.parser, default.source) == (PYTEST, "pytest", "default")
    assert command_for("me/mine", "0.1", "sympy").parser == "sympy"
    assert command_for("me/mine", "0.1", "unittest") is None  # no parser of theirs reads it


def _read(files):
    return files.get


def test_a_pytest_command_runs_as_their_tracer_starts_it_and_counting_drops_no_traceback():
    """``python -m pytest``, no launcher: the launcher's plugins run pytest's own code, which
    is the code under test (and counted) in pytest's repository."""
    command = command_for("pallets/flask", "2.3", "pytest")
    plain = SwtBenchRunner(command, coverage=False, read=_read({}))
    assert plain.runtime is None and plain.report_name is None
    words = plain.command("python", ["tests/t.py"], "unused", runtime="/tools/x")
    assert words == ["python", "-m", "pytest", *PYTEST[1:], "tests/t.py"]
    counted = SwtBenchRunner(command, coverage=True, read=_read({}))
    assert "--tb=no" not in counted.command("python", ["tests/t.py"], "unused", runtime="/t")


def test_scripts_run_with_the_environments_python_and_django_gets_labels():
    sympy = SwtBenchRunner(command_for("sympy/sympy", "1.1", "sympy"), False, _read({}))
    assert sympy.command("python", ["sympy/core/tests/test_a.py"], "r") == [
        "python", "bin/test", "-C", "--verbose", "sympy/core/tests/test_a.py",
    ]  # fmt: skip
    assert sympy.env == {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}
    # counted, their traced command's str.strip eats the last file's "y" (test_a.py → test_a.p)
    traced = SwtBenchRunner(command_for("sympy/sympy", "1.1", "sympy"), True, _read({}))
    files = ["sympy/a/tests/test_b.py", "sympy/core/tests/test_a.py"]
    assert traced.command("python", files, "r")[-2:] == [
        "sympy/a/tests/test_b.py", "sympy/core/tests/test_a.p",
    ]  # fmt: skip
    django = SwtBenchRunner(command_for("django/django", "3.0", "django"), False, _read({}))
    words = django.command("python", ["tests/admin_views/tests.py", "tests/a/b.py"], "r")
    assert words[:2] == ["python", "tests/runtests.py"]
    assert words[-2:] == ["admin_views.tests", "a.b"]


SPHINX_TOX = """\
[tox]
envlist = py{36,37,38,39}

[testenv]
usedevelop = True
setenv =
    PYTHONWARNINGS = all
    PYTEST_ADDOPTS = {env:PYTEST_ADDOPTS:} --color yes
commands=
    python -X dev -m pytest --durations 25 {posargs}

[testenv:flake8]
commands=flake8
"""


def test_tox_runs_the_testenv_command_after_their_sed_with_its_variables():
    words, env = tox_commands(SPHINX_TOX)
    assert words == ["python", "-X", "dev", "-m", "pytest", "-rA", "--durations", "25",
                     "{posargs}"]  # fmt: skip
    assert dict(env) == {"PYTHONWARNINGS": "all", "PYTEST_ADDOPTS": "--color yes"}
    command = command_for("sphinx-doc/sphinx", "5.0", "pytest")
    runner = SwtBenchRunner(command, False, _read({"tox.ini": SPHINX_TOX}))
    assert runner.command("python", ["tests/test_build.py"], "r") == [
        "python", "-X", "dev", "-m", "pytest", "-rA", "--durations", "25", "tests/test_build.py",
    ]  # fmt: skip
    assert runner.env["PYTEST_ADDOPTS"] == "--color yes" and runner.runtime is None
    with pytest.raises(ToxError, match="no tox.ini"):
        SwtBenchRunner(command, False, _read({}))
    with pytest.raises(ToxError, match="run no pytest"):
        tox_commands("[testenv]\ncommands = flake8\n")


def test_results_are_the_parsers_with_their_statuses_as_ours():
    runner = SwtBenchRunner(command_for("psf/requests", "2.0", "pytest"), False, _read({}))
    log = b"PASSED t.py::a[/testbed/x.py]\nFAILED t.py::b - no\nERROR t.py\nSKIPPED [1] t.py:1\n"
    tests, errors = runner.results(log, ["t.py"])
    assert errors == []
    assert tests == {
        "t.py::a[/x.py]": TestStatus.PASSED, "t.py::b": TestStatus.FAILED,
        "t.py": TestStatus.ERROR, "[1]": TestStatus.SKIPPED,
    }  # fmt: skip
    assert runner.results(None, ["t.py"]) is None
