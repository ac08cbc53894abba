"""Log parsers on real logs of Django's runner, sympy's test runner and unittest (samples/)."""

from pathlib import Path

import pytest

from builder.core.records import TestStatus
from validation.runs.parsers import django as django_parser
from validation.runs.parsers import file_for_module
from validation.runs.parsers import sympy as sympy_parser
from validation.runs.parsers import unittest as unittest_parser
from validation.runs.runners import make_runner

SAMPLES = Path(__file__).parent / "samples"
S = TestStatus

UNITTEST_FILES = ["app1/test_same.py", "app2/test_same.py", "app2/test_broken.py"]
UNITTEST_EXPECTED = {
    "app1/test_same.py::SameTests::test_documented": S.PASSED,  # docstring line in between
    "app1/test_same.py::SameTests::test_errors": S.ERROR,
    "app1/test_same.py::SameTests::test_fails": S.FAILED,
    "app1/test_same.py::SameTests::test_it": S.PASSED,
    "app1/test_same.py::SameTests::test_prints": S.PASSED,  # output between "..." and "ok"
    "app1/test_same.py::SameTests::test_skipped": S.SKIPPED,
    "app1/test_same.py::SameTests::test_subtests": S.FAILED,  # one subTest failed
    "app1/test_same.py::SameTests::test_xfail": S.XFAIL,
    "app1/test_same.py::SameTests::test_xpass": S.XPASS,
    "app2/test_same.py::SameTests::test_it": S.FAILED,  # same name, other file, other status
}


@pytest.mark.parametrize("sample", ["unittest-py311.log", "unittest-py38.log"])
def test_unittest_verbose_log(sample):
    parsed = unittest_parser.parse((SAMPLES / sample).read_text(), UNITTEST_FILES)
    assert parsed.tests == UNITTEST_EXPECTED
    assert parsed.collection_errors == ("app2/test_broken.py",)
    assert parsed.completed


DJANGO_FILES = ["tests/app1/tests.py", "tests/app2/tests.py", "tests/app2/test_broken.py"]


@pytest.mark.parametrize("sample", ["django-5.2-py311.log", "django-3.2-py38.log"])
def test_django_runner_log(sample):
    parsed = django_parser.parse((SAMPLES / sample).read_text(), DJANGO_FILES)
    assert parsed.tests == {
        "tests/app1/tests.py::DatabaseTests::test_db": S.PASSED,
        "tests/app1/tests.py::SameNameTests::test_documented": S.PASSED,
        "tests/app1/tests.py::SameNameTests::test_errors": S.ERROR,
        "tests/app1/tests.py::SameNameTests::test_fails": S.FAILED,
        "tests/app1/tests.py::SameNameTests::test_same": S.PASSED,
        "tests/app1/tests.py::SameNameTests::test_skipped": S.SKIPPED,
        "tests/app1/tests.py::SameNameTests::test_xfail": S.XFAIL,
        "tests/app1/tests.py::SameNameTests::test_xpass": S.XPASS,
        "tests/app2/tests.py::SameNameTests::test_same": S.FAILED,
    }
    assert parsed.collection_errors == ("tests/app2/test_broken.py",)
    assert parsed.completed


@pytest.mark.parametrize("sample", ["sympy-1.9-py38.log", "sympy-1.12-py311.log"])
def test_sympy_bin_test_log(sample):
    parsed = sympy_parser.parse((SAMPLES / sample).read_text(), [])
    a, b = "sympy/zzswt_a/tests/test_same.py", "sympy/zzswt_b/tests/test_same.py"
    assert parsed.tests == {
        f"{a}::test_same": S.PASSED,
        f"{a}::test_fails": S.FAILED,
        f"{a}::test_errors": S.ERROR,
        f"{a}::test_xfail": S.XFAIL,
        f"{a}::test_xpass": S.XPASS,
        f"{a}::test_skipped": S.SKIPPED,
        f"{a}::test_raises": S.PASSED,
        f"{a}::test_prints": S.PASSED,  # printed output pushed "ok" onto the next line
        f"{b}::test_same": S.FAILED,  # same name, other file
    }
    assert parsed.collection_errors == ("sympy/zzswt_b/tests/test_broken.py",)
    assert parsed.completed


@pytest.mark.parametrize("sample", ["sympy-1.5-py38-padded.log", "sympy-1.12-py311-padded.log"])
def test_sympy_summary_centred_between_equals_signs_completes_the_run(sample):
    """A summary short enough for one line is centred with ``=`` padding
    (``==== tests finished: 2 passed, 1 failed, in 0.12 seconds ====``); a wrapped one is not."""
    parsed = sympy_parser.parse((SAMPLES / sample).read_text(), [])
    path = "sympy/zzswt_c/tests/test_pad.py"
    assert parsed.tests == {
        f"{path}::test_ok": S.PASSED,
        f"{path}::test_other": S.PASSED,
        f"{path}::test_bad": S.FAILED,
    }
    assert parsed.completed
    header = (SAMPLES / sample).read_text().split("tests finished", 1)[0]
    assert not sympy_parser.parse(header, []).completed


@pytest.mark.parametrize(
    "parser, sample",
    [
        (unittest_parser, "unittest-py311.log"),
        (django_parser, "django-5.2-py311.log"),
        (sympy_parser, "sympy-1.12-py311.log"),
    ],
)
def test_a_log_cut_short_is_not_a_completed_run(parser, sample):
    """A run killed during test_fails: what ran is read, the rest is missing, not completed."""
    text = (SAMPLES / sample).read_text()
    cut = text[: text.index("test_fails") + len("test_fails")]
    parsed = parser.parse(cut, UNITTEST_FILES + DJANGO_FILES)
    assert not parsed.completed
    assert parsed.tests and not any("test_fails" in test for test in parsed.tests)


@pytest.mark.parametrize(
    "parser, sample",
    [
        (unittest_parser, "unittest-py38.log"),
        (django_parser, "django-3.2-py38.log"),
        (sympy_parser, "sympy-1.9-py38.log"),
    ],
)
def test_the_metadata_shims_line_in_a_log_changes_nothing(parser, sample):
    """Runs start behind validation/metadata.py's shim, which may print a line to stderr first
    (the log is these runners' report)."""
    text = (SAMPLES / sample).read_text()
    line = "swt: package metadata of pkg as of the base commit: version 1.0 (installed: 1.1)\n"
    files = UNITTEST_FILES + DJANGO_FILES
    parsed = parser.parse(text, files)
    assert parsed.tests and parser.parse(line + text, files) == parsed


def test_module_names_map_to_files_only_when_unambiguous():
    files = ["tests/a/tests.py", "tests/b/tests.py", "tests/app/test_x.py"]
    assert file_for_module("a.tests", files) == "tests/a/tests.py"
    assert file_for_module("tests.app.test_x", files) == "tests/app/test_x.py"
    assert file_for_module("tests", files) is None  # ambiguous: two files end in .tests
    assert file_for_module("c.tests", files) is None


def test_runner_registry_commands_and_completion():
    files = ["tests/app/tests.py"]
    assert make_runner("django").command("python", files, "r") == [
        "python", "tests/runtests.py", "--verbosity", "2", "--parallel", "1", "app.tests",
    ]  # fmt: skip
    assert make_runner("unittest").command("python", files, "r") == [
        "python", "-m", "unittest", "-v", "tests.app.tests",
    ]  # fmt: skip
    assert make_runner("sympy").command("python", ["sympy/a/tests/test_b.py"], "r") == [
        "python", "bin/test", "-C", "--verbose", "sympy/a/tests/test_b.py",
    ]  # fmt: skip
    launched = make_runner("pytest", ["python", "-m", "pytest", "-p", "no:randomly"])
    assert launched.command("python", ["t/test_a.py"], "r.xml") == [
        "python", "-m", "pytest", "-p", "no:randomly", "-rA", "-p", "no:cacheprovider",
        "-o", "junit_family=xunit1", "--continue-on-collection-errors", "--junitxml=r.xml",
        "t/test_a.py",
    ]  # fmt: skip
    assert make_runner("django", ["python", "runtests.py"]).command("python", files, "r") == [
        "python", "runtests.py", "--verbosity", "2", "--parallel", "1", "app.tests",
    ]  # fmt: skip
    log = (SAMPLES / "unittest-py311.log").read_bytes()
    runner = make_runner("unittest")
    assert runner.report_name is None  # the log is the report
    assert runner.completed(log) and not runner.completed(None)
    tests, errors = runner.results(log, UNITTEST_FILES)
    assert tests == UNITTEST_EXPECTED and errors == ["app2/test_broken.py"]
