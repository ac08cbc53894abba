"""SWT-Bench's log parsers, quirks included, on log samples shaped as their harness's logs
(pytest's ``-rA`` summary, sympy's ``bin/test --verbose``, Django's verbosity 2)."""

from __future__ import annotations

from builder.evaluate.swt.parsers import (
    PARSERS,
    parse_django,
    parse_matplotlib,
    parse_pytest,
    parse_pytest_options,
    parse_pytest_v2,
    parse_seaborn,
    parse_sympy,
)

PYTEST_LOG = """\
+ python -m pytest --no-header -rA tests/test_a.py
============================= test session starts ==============================
collected 5 items

tests/test_a.py .F.sx                                                    [100%]

=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_param[a b]
FAILED tests/test_a.py::test_two - assert 1 == 2
SKIPPED [1] tests/test_a.py:12: no network
XFAIL tests/test_a.py::test_x - known
ERROR tests/test_b.py - ModuleNotFoundError: No module named 'pkg.new'
PASSED
==================== 1 failed, 2 passed, 1 skipped in 0.12s ====================
"""


def test_pytest_reads_summary_lines_with_their_quirks():
    assert parse_pytest(PYTEST_LOG) == {
        "tests/test_a.py::test_one": "PASSED",
        "tests/test_a.py::test_param[a": "PASSED",  # cut at the first space
        "tests/test_a.py::test_two": "FAILED",
        "[1]": "SKIPPED",  # the skip summary's count read as a test
        "tests/test_b.py": "ERROR",  # an uncollectable file
    }  # XFAIL is no status of theirs; a lone status word names no test


def test_a_file_pytest_cannot_find_is_a_test_named_file():
    log = "ERROR: file or directory not found: tests/test_new.py\n\nno tests ran in 0.01s\n"
    assert parse_pytest(log) == {"file": "ERROR:"}


def test_an_inner_pytest_runs_lines_read_as_tests_and_the_last_one_wins():
    """pytest-dev's own tests print inner sessions' summaries: their lines are tests too."""
    log = (
        "PASSED testing/test_x.py::test_outer\n"
        "FAILED test_inner.py::test_fail - assert 0\n"
        "PASSED testing/test_x.py::test_outer\n"
    )
    assert parse_pytest(log) == {
        "testing/test_x.py::test_outer": "PASSED",
        "test_inner.py::test_fail": "FAILED",
    }


def test_options_reduce_an_absolute_path_parameter_to_its_last_component():
    log = (
        "PASSED tests/test_r.py::test_stdin[/testbed/tests/m.py-m-/testbed/m.py]\n"
        "PASSED tests/test_r.py::test_url[//host/x]\n"
        "PASSED tests/test_r.py::test_glob[/a/*.py]\n"
        "PASSED tests/test_r.py::test_rel[a/b]\n"
    )
    assert parse_pytest_options(log) == {
        "tests/test_r.py::test_stdin[/m.py]": "PASSED",
        "tests/test_r.py::test_url[//host/x]": "PASSED",
        "tests/test_r.py::test_glob[/a/*.py]": "PASSED",
        "tests/test_r.py::test_rel[a/b]": "PASSED",
    }


def test_v2_strips_colours_and_reads_lines_ending_in_a_status():
    log = (
        "\x1b[32mPASSED\x1b[0m tests/test_s.py::test_a\n"
        "tests/test_s.py::test_b PASSED\n"
        "\x1b[31mFAILED\x1b[0m tests/test_s.py::test_c - boom\n"
        "PASSED\n"  # theirs raises IndexError here; skipped
    )
    assert parse_pytest_v2(log) == {
        "tests/test_s.py::test_a": "PASSED",
        "tests/test_s.py::test_b": "PASSED",
        "tests/test_s.py::test_c": "FAILED",
    }


def test_seaborn_reads_no_error_or_skip_line():
    log = (
        "PASSED tests/test_c.py::test_a\n"
        "tests/test_c.py::test_b PASSED [ 50%]\n"
        "FAILED tests/test_c.py::test_d - x\n"
        "ERROR tests/test_e.py - ImportError\n"
        "SKIPPED [1] tests/test_c.py:3: no\n"
    )
    assert parse_seaborn(log) == {
        "tests/test_c.py::test_a": "PASSED",
        "tests/test_c.py::test_b": "PASSED",
        "tests/test_c.py::test_d": "FAILED",
    }


def test_sympy_keys_tests_by_bare_name_so_two_files_merge():
    log = (
        "sympy/core/tests/test_a.py[2] \n"
        "test_same ok\n"
        "test_only_a F\n"
        "sympy/core/tests/test_b.py[1] \n"
        "test_same E\n"
        "________________________________________________________________________________\n"
        "________ sympy/core/tests/test_a.py:test_only_a ________\n"
    )
    assert parse_sympy(log) == {"test_same": "ERROR", "test_only_a": "FAILED"}


def test_django_reads_verbose_lines_and_failure_headers_override():
    """Django writes ``FAIL`` where their pattern knows ``FAILED``: test_b's match runs on to
    the next line's ``skipped`` and test_c is lost; the ``FAIL:`` header then sets test_b."""
    log = (
        "test_a (app.tests.T) ... ok\n"
        "test_b (app.tests.T) ... FAIL\n"
        "test_c (app.tests.T) ... skipped 'no db'\n"
        "test_d (app.tests.T)\nA docstring. ... ok\n"
        "======================================================================\n"
        "FAIL: test_b (app.tests.T)\n"
        "ERROR: test_a (app.tests.T)\n"
    )
    assert parse_django(log) == {
        "test_a (app.tests.T)": "ERROR",
        "test_b (app.tests.T)": "FAILED",
        "test_d (app.tests.T)": "PASSED",
    }
    assert parse_django("test_c (app.tests.T) ... skipped 'no db'\n") == {
        "test_c (app.tests.T)": "SKIPPED"
    }


def test_matplotlib_names_mouse_buttons_by_number():
    log = "PASSED lib/t.py::test_click[MouseButton.LEFT]\n"
    assert parse_matplotlib(log) == {"lib/t.py::test_click[1]": "PASSED"}


def test_every_parser_is_registered_by_name():
    assert set(PARSERS) == {
        "pytest", "pytest_options", "pytest_v2", "seaborn", "sympy", "django", "matplotlib",
    }  # fmt: skip


def test_the_sympy_scanners_find_what_their_patterns_find():
    """The one-pass scanners give what ``re.finditer`` of their two patterns gives, on random
    logs made of the pieces that matter (underscores, newlines, spaces, ``.py:``, statuses)."""
    import random
    import re

    from builder.evaluate.swt.parsers import _sympy_failures, _sympy_tests

    failures = re.compile(r"_\n(_*) (.*)\.py::?(.*) (_*)", flags=re.MULTILINE)
    tests = re.compile(r"test_([^\s]*)\s+(E|F|ok)\s")
    pieces = ["_", "\n", " ", "\t", ".py:", ":", "a", "test_", "ok", "E", "F", "x.py"]
    rng = random.Random(0)
    for _ in range(5000):
        log = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert _sympy_failures(log) == [m[3] for m in failures.finditer(log)], log
        assert _sympy_tests(log) == [("test_" + m[1], m[2]) for m in tests.finditer(log)], log


def test_the_django_scanner_finds_what_their_patterns_find():
    """The one-pass scanner gives what ``re.finditer`` of their two patterns gives (test lines;
    the names of a failure header), on random logs made of the pieces that matter: names and
    brackets, dots, every keyword, word boundaries (``_``, a letter, a digit, ``é``), Unicode
    and ASCII spaces, newlines."""
    import random
    import re

    from builder.evaluate.swt.parsers import _DjangoScan

    tests = re.compile(
        r"(?P<testname>\b(test|app_unmigrated)([^\s]*)\s+\([^)]*\))((.|\n)(?!\.\.\.))*\s*\.\.\."
        r"((.|\n)(?!\b(test_|app_unmigrated|OK|ok|FAILED|ERROR|skipped)\b))*\s*"
        r"\b(?P<status>OK|ok|FAILED|ERROR|skipped)\b",
        flags=re.MULTILINE,
    )
    names = re.compile(r"(?P<testname>\b(test_|app_unmigrated)([^\s]*)\s+\([^)]*\))")
    pieces = ["test", "test_", "_", "a", "1", "é", "app_unmigrated", " ", "\u00a0", "\n", "\t",
              "(", ")", ".", "...", "ok", "OK", "FAILED", "ERROR", "skipped", "FAIL:"]  # fmt: skip
    rng = random.Random(0)
    for _ in range(5000):
        log = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        scan = _DjangoScan(log)
        assert list(scan.tests()) == [(m["testname"], m["status"]) for m in tests.finditer(log)]
        assert list(scan.names("test_")) == [m.span() for m in names.finditer(log)], log
