"""The runner registry against the runner kinds a spec may name; pytest through its launcher;
a pytest run's own crash told from its exit code and log."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from builder.core.records import TestStatus
from validation import measured_run
from validation.environments.environment import EnvironmentSpec, LocalEnvironments
from validation.environments.interpreters import Interpreters
from validation.environments.specs import RUNNER_KINDS, Settings
from validation.runs import pytest_launcher
from validation.runs.runners import PYTEST_LAUNCHER, RUNNERS, make_runner


def test_the_registry_implements_exactly_the_kinds_a_spec_may_name():
    assert sorted(RUNNERS) == sorted(RUNNER_KINDS)
    assert all(runner.kind == kind for kind, runner in RUNNERS.items())
    assert Settings.model_json_schema()["properties"]["runner"]["enum"] == list(RUNNER_KINDS)


@pytest.mark.parametrize("kind", RUNNER_KINDS)
def test_every_kind_a_spec_names_makes_a_runner(kind):
    runner = make_runner(Settings(runner=kind).runner)
    assert runner.kind == kind and runner.command("python", ["tests/test_a.py"], "r")


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown test runner 'nose'.*pytest"):
        make_runner("nose")


@pytest.mark.parametrize(
    ("kind", "test_id", "swe_bench_id"),
    [
        ("django", "tests/app/tests.py::Cls::test_x", "test_x (app.tests.Cls)"),
        ("unittest", "app1/test_same.py::SameTests::test_it", "test_it (app1.test_same.SameTests)"),
        ("sympy", "sympy/core/tests/test_basic.py::test_equality", "test_equality"),
        ("pytest", "tests/test_a.py::test_b[1]", "tests/test_a.py::test_b[1]"),
    ],
)
def test_ids_convert_to_the_form_of_swe_bench_records(kind, test_id, swe_bench_id):
    assert make_runner(kind).swe_bench_id(test_id) == swe_bench_id


def test_pytest_starts_through_the_launcher_when_the_session_provides_it():
    runner = make_runner("pytest")
    assert runner.runtime is PYTEST_LAUNCHER
    files = ["tests/test_a.py"]
    launched = runner.command("python", files, "r.xml", ("-p", "plug"), runtime="/tools/abc")
    assert launched[:2] == ["python", "/tools/abc/_swt_pytest.py"]
    assert launched[2:] == runner.options("r.xml") + [
        "--no-header", "--tb=native", "-p", "plug", *files,
    ]  # fmt: skip
    plain = runner.command("python", files, "r.xml")
    assert plain[:3] == ["python", "-m", "pytest"] and "--no-header" not in plain  # pytest < 6
    assert "--tb=native" not in plain
    own = make_runner("pytest", ["python", "-m", "pytest", "-x"])  # a spec's test_command wins
    given = own.command("python", files, "r.xml", runtime="/tools/abc")
    assert given[:4] == list(own.launcher) and "--no-header" not in given  # as the spec says


def test_launcher_takes_the_deselect_options_out_to_apply_them_itself():
    args = ["-rA", "--deselect", "t.py::a", "--deselect=t.py::b", "t.py"]
    assert pytest_launcher.deselections(args) == (["-rA", "t.py"], ["t.py::a", "t.py::b"])


PREFIXED = "def test_a():\n    pass\n\n\ndef test_ab():\n    pass\n"


def test_the_launcher_leaves_out_exactly_the_tests_named(tmp_path):
    """pytest's ``--deselect`` leaves out every test whose node id starts with the one named:
    ``test_a`` takes ``test_ab`` with it, and a repetition would miss its verdict. Through the
    launcher only ``test_a`` is left out."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_p.py").write_text(PREFIXED)
    runner = make_runner("pytest")
    folder = PYTEST_LAUNCHER.place(tmp_path / "tools")
    left_out = runner.deselect_options(["tests/test_p.py::test_a"])
    ran = {}
    for name, runtime in (("launched", str(folder)), ("plain", None)):
        report = tmp_path / f"{name}.xml"
        command = runner.command(sys.executable, ["tests/test_p.py"], str(report), left_out,
                                 runtime=runtime)  # fmt: skip
        subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
        ran[name] = runner.results(report.read_bytes(), ["tests/test_p.py"])[0]
    assert ran["launched"] == {"tests/test_p.py::test_ab": TestStatus.PASSED}
    assert ran["plain"] == {}  # pytest's own option took both


@pytest.mark.parametrize(
    ("text", "numbers"),
    [("3.0.7", (3, 0, 7)), ("4.0.0rc1", (4, 0, 0)), ("8.4.0.dev12+g1", (8, 4, 0)),
     ("2.9", (2, 9))],
)  # fmt: skip
def test_launcher_reads_release_numbers(text, numbers):
    assert pytest_launcher.version(text) == numbers


def test_launcher_leaves_out_options_older_pytests_lack_with_their_values():
    options = make_runner("pytest").options("r.xml") + ["--no-header"]
    assert pytest_launcher.supported(options + ["t.py"], (8, 3, 5)) == options + ["t.py"]
    assert pytest_launcher.supported(options + ["t.py"], (6, 0)) == options + ["t.py"]
    assert pytest_launcher.supported(options + ["t.py"], (5, 4, 3)) == options[:-1] + ["t.py"]
    assert pytest_launcher.supported(options + ["t.py"], (2, 9, 2)) == [
        "-rA", "-p", "no:cacheprovider", "--junitxml=r.xml", "t.py",
    ]  # fmt: skip
    assert pytest_launcher.supported(["--override-ini=a=b", "-x"], (2, 9)) == ["-x"]
    assert pytest_launcher.supported(["--override-ini=a=b", "-x"], (3, 0)) == [
        "--override-ini=a=b", "-x",
    ]  # fmt: skip


OLD_PROJECT = {
    "tests/__init__.py": "",
    "tests/test_a.py": "import helper\nimport pytest\n\ndef test_pass():\n"
    "    assert helper.VALUE == 1\n\ndef test_fail():\n    assert helper.VALUE == 2\n\n"
    "@pytest.mark.xfail(reason='known')\ndef test_xpass():\n    pass\n\n"
    "import os\n\n@pytest.mark.parametrize('where', [os.getcwd() + '/d.txt'])\n"
    "def test_where(where):\n    pass\n",
    "tests/test_broken.py": "import no_such_module_swt\n",
    "helper.py": "VALUE = 1\n",
    "tox.ini": "[pytest]\n",  # the rootdir, for every pytest
}


@pytest.mark.slow
@pytest.mark.parametrize("pin", ["pytest==2.9.2", "pytest==4.6.11"])
def test_old_pytests_run_the_command_and_their_results_are_read(pin, tmp_path):
    """The same command line on pytest 2.9 (no -o, no --continue-on-collection-errors: it would
    reject them; it goes on past collection errors by itself) and 4.6 (on Python 3.6): it runs,
    imports from the working directory as ``python -m pytest`` does, its ids are canonical and
    its report is read."""
    interpreters = Interpreters()
    if interpreters.find("3.6") is None:
        pytest.skip("no Python 3.6 interpreter on this machine")
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(
        EnvironmentSpec(python="3.6", packages=(pin,))
    )
    project = tmp_path / "project"
    for name, text in OLD_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    runner = make_runner("pytest")
    folder = PYTEST_LAUNCHER.place(tmp_path / "tools")
    files = ["tests/test_a.py", "tests/test_broken.py"]
    report = tmp_path / "report.xml"
    left_out = runner.deselect_options(["tests/test_a.py::test_fail"])  # pytest 3.5's option
    command = runner.command(str(python), files, str(report), left_out, runtime=str(folder))
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
    assert "unrecognized arguments" not in done.stderr and done.returncode != 0
    plain = runner.command(str(python), files, str(tmp_path / "plain.xml"))  # python -m pytest
    rejected = subprocess.run(plain, cwd=project, capture_output=True, text=True, timeout=120)
    assert ("unrecognized arguments: -o" in rejected.stderr) == (pin == "pytest==2.9.2")
    assert report.is_file(), done.stdout + done.stderr
    results = runner.results(report.read_bytes(), files)
    assert results is not None
    tests, errors = results
    assert len(errors) == 1 and "test_broken" in errors[0]  # 2.9's report names the module
    assert tests == {  # test_fail deselected: by the launcher's plugin on pytest 2.9
        "tests/test_a.py::test_pass": TestStatus.PASSED,
        # pytest 2.9 reports it as a skip with its own message; 4.6 gets the launcher's mark
        "tests/test_a.py::test_xpass": TestStatus.XPASS,
        # the checkout in a parametrize id, made canonical by the launcher on either pytest
        "tests/test_a.py::test_where[<testbed>/d.txt]": TestStatus.PASSED,
    }


OUTCOMES = """
import pytest

def test_pass(): pass

@pytest.mark.xfail(reason="known")
def test_xpass(): pass

@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict(): pass

@pytest.mark.xfail(reason="known")
def test_xfail(): assert False

@pytest.mark.parametrize(
    "mode", ["plain", pytest.param("marked", marks=pytest.mark.xfail(reason="bug"))]
)
def test_param(mode): pass

class TestGroup:
    @pytest.mark.xfail(reason="known")
    def test_method(self): pass
"""


def test_the_runner_under_test_is_a_pytest_imported_from_the_checkout(tmp_path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "src" / "_pytest").mkdir(parents=True)
    (tmp_path / "checkout-other").mkdir()
    link = tmp_path / "link"
    link.symlink_to(checkout)
    own = checkout / "src" / "pytest" / "__init__.py"
    assert pytest_launcher.runner_under_test(str(own), str(checkout))
    assert pytest_launcher.runner_under_test(str(own), str(link))  # the same place, named twice
    assert not pytest_launcher.runner_under_test(pytest.__file__, str(checkout))
    beside = tmp_path / "checkout-other" / "pytest.py"  # a sibling whose name starts alike
    assert not pytest_launcher.runner_under_test(str(beside), str(checkout))


FAILING_WITH_ARGUMENTS = {
    "tests/test_f.py": "import pytest\n\n\nclass Costly:\n    def __repr__(self):\n"
    "        return 'COSTLY-REPR'\n\n\n@pytest.fixture\ndef costly():\n    return Costly()\n\n\n"
    "def test_fails(costly):\n    assert costly is None\n\n\n"
    "@pytest.mark.xfail(reason='known')\ndef test_xfail(costly):\n"
    "    raise ValueError(costly)\n\n\n"
    "def test_passes():\n    pass\n",
}
F_STATUSES = {
    "tests/test_f.py::test_fails": TestStatus.FAILED,
    "tests/test_f.py::test_xfail": TestStatus.XFAIL,
    "tests/test_f.py::test_passes": TestStatus.PASSED,
}


def test_the_launcher_asks_for_pythons_tracebacks_with_the_same_verdicts(tmp_path) -> None:
    """pytest's own traceback shows each frame's arguments (their reprs) and source; through
    the launcher the failure is written as Python writes it, and every verdict is as in the
    plain run, where pytest's own format is used."""
    runs = _run_both_ways(tmp_path, FAILING_WITH_ARGUMENTS)
    (launched, launched_log), (plain, plain_log) = runs["launched"], runs["plain"]
    assert launched == plain == F_STATUSES
    assert "Traceback (most recent call last)" in launched_log
    assert "costly = COSTLY-REPR" not in launched_log
    assert "costly = COSTLY-REPR" in plain_log and "Traceback (most" not in plain_log


def test_a_project_that_is_pytest_itself_keeps_pytests_own_tracebacks(tmp_path) -> None:
    """When the pytest the launcher imports lives in the checkout (the pytest repository), its
    traceback formatting is code under test: the launcher leaves the native style out."""
    project = tmp_path / "project"
    installed = os.path.dirname(os.path.dirname(pytest.__file__))
    for package in ("_pytest", "pytest"):
        shutil.copytree(os.path.join(installed, package), project / package)
    runs = _run_both_ways(tmp_path, FAILING_WITH_ARGUMENTS)
    (launched, launched_log) = runs["launched"]
    assert launched == F_STATUSES
    assert "costly = COSTLY-REPR" in launched_log and "Traceback (most" not in launched_log
    assert "swt: tracebacks in pytest's own format: the pytest that runs is the project's" in (
        launched_log
    )
    assert "swt: tracebacks" not in runs["plain"][1]
    # the run's result says which shortcut it did not take, and why (run_metadata.plain_path)
    assert measured_run.plain_path(launched_log).startswith(
        "tracebacks in pytest's own format: the pytest that runs is the project's ("
    )
    assert measured_run.plain_path(runs["plain"][1]) == ""


def _run_both_ways(tmp_path, project_files: dict[str, str]) -> dict:
    """Writes ``project_files`` (path: text) as a project and runs its test files with pytest
    through the launcher ("launched") and as ``python -m pytest`` ("plain"): for each, the
    statuses read from its report and what it printed."""
    project = tmp_path / "project"
    for name, text in project_files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    runner = make_runner("pytest")
    folder = PYTEST_LAUNCHER.place(tmp_path / "tools")
    files = sorted(name for name in project_files if name.startswith("tests/test_"))
    runs = {}
    for name, runtime in (("launched", str(folder)), ("plain", None)):
        report = tmp_path / f"{name}.xml"
        command = runner.command(sys.executable, files, str(report), runtime=runtime)
        done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
        results = runner.results(report.read_bytes(), files)
        assert results is not None, done.stdout + done.stderr
        runs[name] = (results[0], done.stdout + done.stderr)
    return runs


def test_the_launcher_marks_an_unexpected_pass_that_the_junit_report_shows_as_a_pass(tmp_path):
    """pytest's JUnit report has an empty ``<testcase/>`` for a non-strict xpass, as for a pass;
    through the launcher it is an XPASS, an expected outcome (no transition), like the strict
    one. The same run without the launcher shows why: plain passes."""
    runs = _run_both_ways(tmp_path, {"tests/test_o.py": OUTCOMES})
    statuses = {name: results for name, (results, _) in runs.items()}
    unexpected = ["test_xpass", "test_param[marked]", "TestGroup::test_method"]
    assert statuses["launched"] == {
        "tests/test_o.py::test_pass": TestStatus.PASSED,
        "tests/test_o.py::test_xpass_strict": TestStatus.XPASS,
        "tests/test_o.py::test_xfail": TestStatus.XFAIL,
        "tests/test_o.py::test_param[plain]": TestStatus.PASSED,
        **{f"tests/test_o.py::{name}": TestStatus.XPASS for name in unexpected},
    }
    assert all(
        statuses["plain"][f"tests/test_o.py::{name}"] is TestStatus.PASSED for name in unexpected
    )


HEADER_HOOK = {
    "conftest.py": "import os\n\ndef pytest_report_header(config):\n"
    "    os.environ['SWT_HEADER_HOOK_RAN'] = '1'\n    return 'project header'\n",
    "tests/test_h.py": "import os\n\ndef test_untouched():\n"
    "    assert 'SWT_HEADER_HOOK_RAN' not in os.environ\n",
}


def test_a_projects_header_hook_does_not_run_before_tests_started_through_the_launcher(tmp_path):
    """As in SWE-bench's harness (``--no-header``): what a project's ``pytest_report_header``
    does (astropy 4.0's made deprecation warnings errors for the session) does not reach the
    tests. ``python -m pytest`` runs the hook, and the same test fails."""
    runs = _run_both_ways(tmp_path, HEADER_HOOK)
    seen = {
        name: (results["tests/test_h.py::test_untouched"], "project header" in output)
        for name, (results, output) in runs.items()
    }
    assert seen == {"launched": (TestStatus.PASSED, False), "plain": (TestStatus.FAILED, True)}


def test_pytests_internal_error_is_a_crash_with_its_last_line_and_other_exits_are_not() -> None:
    log = (
        "tests/test_pkg.py .\n"
        "INTERNALERROR> Traceback (most recent call last):\n"
        'INTERNALERROR>   File "conftest.py", line 2, in pytest_runtest_logfinish\n'
        "INTERNALERROR> RuntimeError: hook broke\n"
        "INTERNALERROR>\n"
    )
    pytest_runner = make_runner("pytest")
    assert pytest_runner.crash(3, log) == (
        "pytest exited 3 (internal error): INTERNALERROR> RuntimeError: hook broke"
    )
    assert pytest_runner.crash(1, log) == ""  # tests failed: no crash
    assert make_runner("sympy").crash(3, log) == ""  # another runner's exit codes
