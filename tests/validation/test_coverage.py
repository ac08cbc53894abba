"""Golden change coverage ΔC: patch lines, our rcfile, and measured fixture repositories."""

import json
import os
import types
from pathlib import Path

import coverage
import pytest

import validation.coverage
from builder.core.config import ValidationConfig
from builder.core.records import DropReason
from tests.support.git import GitRepo
from tests.support.runtime import copied
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS, runs_of
from validation.coverage import (
    CONTEXT_ENV,
    CONTEXT_PLUGIN,
    RUNTIME,
    Measured,
    change_coverage,
    coverage_requirement,
    measure,
    patch_lines,
    rcfile,
)
from validation.coverage import plugin as context_plugin
from validation.stage import ValidateStage

# ---------------------------------------------------------------------------------------------
# Units: which lines, numbered how, and the ΔC arithmetic.


def test_patch_lines_number_removed_in_r_and_added_in_r_x(tmp_path):
    repo = GitRepo(tmp_path / "r")
    repo.commit({"pkg/a.py": "one\ntwo\nthree\nfour\n", "README.md": "x\n", "pkg/gone.py": "g\n"})
    patch = repo.diff(
        {
            "pkg/a.py": "zero\none\nTWO\nthree\nfour\nfive\n",  # +1 at top, 2 modified, +6
            "README.md": "y\n",  # not Python: never measured
            "pkg/gone.py": None,
            "pkg/new.py": "n\n",
        }
    )
    lines = patch_lines(patch)
    assert lines.removed == {"pkg/a.py": {2}, "pkg/gone.py": {1}}
    assert lines.added == {"pkg/a.py": {1, 3, 6}, "pkg/new.py": {1}}


def test_rcfile_measures_only_the_changed_files_in_the_run_dir():
    text = rcfile(["pkg/b.py", "pkg/a.py"], "/run/scratch/golden-before-0.coverage")
    assert "data_file = /run/scratch/golden-before-0.coverage\n" in text
    assert "include =\n    pkg/a.py\n    pkg/b.py\n" in text
    for option in (
        "parallel = true",
        "concurrency = multiprocessing, thread",
        "patch = subprocess",
        "dynamic_context = test_function",
        "relative_files = true",
    ):
        assert option + "\n" in text
    assert "core =" not in text


def test_rcfile_contexts_by_the_runner_allow_sys_monitoring_from_3_12():
    by_runner = rcfile(["a.py"], "d", contexts="runner", python="3.11")
    assert "dynamic_context" not in by_runner and "core =" not in by_runner
    assert "core = sysmon\n" in rcfile(["a.py"], "d", contexts="runner", python="3.12")
    # coverage's dynamic contexts cannot run on sys.monitoring: the default core stays
    assert "core =" not in rcfile(["a.py"], "d", contexts="test_function", python="3.13")
    with pytest.raises(ValueError, match="contexts"):
        rcfile(["a.py"], "d", contexts="per-line")


def test_coverage_requirement_per_python():
    assert coverage_requirement("3.11") == "coverage==7.10.7"
    assert coverage_requirement("3.8") == "coverage==7.6.1"
    assert coverage_requirement("3.6") == "coverage==6.2"


def _measured(**files):
    return Measured(
        {path.replace("__", "/") + ".py": frozenset(v) for path, v in files.items()}, {}
    )


def test_change_coverage_counts_each_line_on_its_own_side():
    lines = patch_lines(
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        "@@ -10,2 +10,3 @@\n x\n+y\n z\n"
    )
    assert lines.removed == {"pkg/m.py": {2}} and lines.added == {"pkg/m.py": {2, 11}}
    golden = {"before": [_measured(pkg__m={2})], "after": [_measured(pkg__m={1, 3})]}
    existing = {"before": [], "after": [_measured(pkg__m={2, 11})]}
    change = change_coverage(lines, golden, existing)
    # executable: removed 2 (golden, on R), added 2 and 11 (existing, on R∘X)
    assert change.executable == (("before", "pkg/m.py", 2), ("after", "pkg/m.py", 2),
                                 ("after", "pkg/m.py", 11))  # fmt: skip
    assert change.golden == round(1 / 3, 6) and change.existing == round(2 / 3, 6)
    # a line executed only on the other side does not count
    nothing = change_coverage(lines, {"before": [_measured(pkg__m={11})]}, {})
    assert nothing.executable == () and nothing.golden is None


def test_golden_coverage_counts_only_the_lines_credited_to_the_golden_tests():
    lines = patch_lines("--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    run = Measured({"pkg/m.py": frozenset({2})}, {"pkg/m.py": {2: ("tests/t.py::test_old",)}})
    golden = {"before": [run], "after": [run]}
    change = change_coverage(lines, golden, {}, credited=lambda measured: {})
    # executable by any test of the golden runs, but none of them is the golden tests'
    assert len(change.executable) == 2 and change.golden == 0.0
    assert change_coverage(lines, golden, {}).golden == 1.0  # by default every line counts


# ---------------------------------------------------------------------------------------------
# Measured on fixture repositories through the stage.

WORKER_CODE = '''\
import multiprocessing
import subprocess
import sys


def _worker(x, queue):
    queue.put(x + x)


def square(x):
    """Computed in a multiprocessing child only."""
    queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_worker, args=(x, queue))
    process.start()
    value = queue.get(timeout=60)
    process.join()
    return value


def child_answer():
    return 41


def answer():
    """Computed in a Python subprocess only."""
    code = "import pkg; print(pkg.child_answer())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True,
                              text=True, check=True).stdout)
'''
WORKER_TESTS = """\
from pkg import answer, square


def test_square():
    assert square(3) == 9


def test_answer():
    assert answer() == 42
"""
HOSTILE_CONFIG = {  # the repository's own coverage settings must not be read
    ".coveragerc": "[run]\nomit = pkg/*\ndata_file = /nonexistent/.coverage\n",
    "setup.cfg": "[coverage:run]\nomit = *\n",
    "pyproject.toml": '[tool.coverage.run]\nomit = ["*"]\nsource = ["nothing"]\n',
}


def _report(outcome) -> dict:
    return json.loads((Path(outcome.verdict.evidence["logs"]) / "coverage.json").read_text())


@pytest.mark.slow
def test_lines_reached_only_in_a_multiprocessing_worker_or_subprocess_count(make_case):
    fixed = WORKER_CODE.replace("x + x", "x * x").replace("return 41", "return 42")
    outcome = make_case(
        {"tests/test_pkg.py": WORKER_TESTS},
        {"pkg/__init__.py": fixed},
        base_files={"pkg/__init__.py": WORKER_CODE, "tests/test_pkg.py": "", **HOSTILE_CONFIG},
        coverage=True,
    )
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == (
        "tests/test_pkg.py::test_answer",
        "tests/test_pkg.py::test_square",
    )
    report = _report(outcome)
    executable = {(line["side"], line["line"]) for line in report["lines"]}
    # line 7 (the worker) and line 21 (the subprocess), removed on R and added on R∘X
    assert executable == {("before", 7), ("after", 7), ("before", 21), ("after", 21)}
    # attributed to the test that started the child (its static context, from the plugin)
    started_by = {7: "tests/test_pkg.py::test_square", 21: "tests/test_pkg.py::test_answer"}
    for line in report["lines"]:
        assert line["contexts"] == [started_by[line["line"]]], line
    assert instance.golden_coverage == 1.0
    assert instance.run_metadata["coverage"] == "on"


@pytest.mark.slow
def test_golden_coverage_is_the_share_the_golden_tests_execute(make_case):
    """The test patch deletes the only test of triple(): its patch lines are executable
    (the existing tests run them) but the golden tests do not execute them."""
    base_code = CODE + "\n\ndef triple(x):\n    return x + x + x + 0\n"
    base_tests = TESTS.replace("add, double", "add, double, triple") + (
        "\n\ndef test_triple():\n    assert triple(2) == 6\n"
    )
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST},
        {"pkg/__init__.py": FIXED + "\n\ndef triple(x):\n    return 3 * x\n"},
        base_files={"pkg/__init__.py": base_code, "tests/test_pkg.py": base_tests},
        coverage=True,
        repetitions=2,
    )
    assert outcome.verdict.kept, outcome.verdict
    report = _report(outcome)
    golden = sorted((line["side"], line["line"]) for line in report["lines"] if line["golden"])
    others = sorted((line["side"], line["line"]) for line in report["lines"] if not line["golden"])
    assert golden == [("after", 2), ("before", 2)]  # add(): run by the golden test_add
    assert others == [("after", 10), ("before", 10)]  # triple(): only the removed test_triple
    assert outcome.output.golden_coverage == 0.5
    assert outcome.output.run_metadata["existing_coverage"] == "0.5"
    # per-test contexts attribute each golden line to the tests that ran it
    contexts = {line["side"]: line["contexts"] for line in report["lines"] if line["golden"]}
    assert any(name.endswith("test_add") for name in contexts["before"])
    # the first repetition of each side is measured, the others run plain
    instrumented = {
        (run.suite, run.side, run.repetition): run.command[1].endswith("/_swt_measure.py")
        for run in runs_of(outcome)
    }
    assert instrumented == {
        ("golden", "before", 0): True, ("golden", "before", 1): False,
        ("golden", "after", 0): True, ("golden", "after", 1): False,
        ("existing", "before", 0): True, ("existing", "after", 0): True,
    }  # fmt: skip


PARTS = "LIMIT = 1\n\n\ndef add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 3 * x\n"
PARTS_FIXED = PARTS.replace("= 1", "= 2").replace("a - b", "a + b").replace("3 * x", "2 * x")
RUNS_DOUBLE = "from pkg import add, double\n\n\ndef test_double_runs():\n    double(2)\n"
ADDS_TEST_ADD = RUNS_DOUBLE + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # how lines are credited: once is enough
def test_golden_coverage_credits_only_the_tests_the_test_patch_wrote(make_case, backend):
    """The fix changes LIMIT (run at import, while pytest collects), add (run by the new
    test_add only) and double (run by test_double_runs, already in the file): all six lines
    are executable, and only add's two are the golden tests'."""
    outcome = make_case(
        {"tests/test_pkg.py": ADDS_TEST_ADD},
        {"pkg/__init__.py": PARTS_FIXED},
        base_files={"pkg/__init__.py": PARTS, "tests/test_pkg.py": RUNS_DOUBLE},
        coverage=True,
    )
    assert outcome.verdict.kept, outcome.verdict
    report = _report(outcome)
    assert len(report["lines"]) == 6
    golden = sorted((line["side"], line["line"]) for line in report["lines"] if line["golden"])
    assert golden == [("after", 5), ("before", 5)]
    assert outcome.output.golden_coverage == round(2 / 6, 6)
    assert outcome.output.run_metadata["existing_coverage"] == str(round(4 / 6, 6))
    assert "golden_coverage_upper_bound" not in outcome.output.run_metadata
    assert report["golden_coverage_upper_bound"] is False


UNITTEST_BASE = (
    "import unittest\n\nfrom pkg import add, double\n\n\n"
    "class DoubleTests(unittest.TestCase):\n    def test_double_runs(self):\n        double(2)\n"
)
UNITTEST_ADDED = (
    UNITTEST_BASE + "\n\nclass AddTests(unittest.TestCase):\n    def test_add(self):\n"
    "        self.assertEqual(add(1, 2), 3)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_without_per_test_contexts_golden_coverage_is_an_upper_bound(make_case, backend):
    """unittest records no test ids as contexts: the golden test files' runs count whole, and
    as one of them existed before the test patch, the instance says it is an upper bound."""
    outcome = make_case(
        {"tests/test_pkg.py": UNITTEST_ADDED},
        {"pkg/__init__.py": PARTS_FIXED},
        base_files={"pkg/__init__.py": PARTS, "tests/test_pkg.py": UNITTEST_BASE},
        coverage=True,
        runner="unittest",
    )
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.golden_coverage == 1.0
    assert outcome.output.run_metadata["golden_coverage_upper_bound"] == "true"
    assert _report(outcome)["golden_coverage_upper_bound"] is True


def test_docs_only_golden_patch_is_coverage_unmeasurable(make_case):
    version_test = (
        "from pathlib import Path\n\n\ndef test_version():\n"
        "    assert Path('docs/VERSION').read_text().strip() == '0.2'\n"
    )
    outcome = make_case(
        {"tests/test_docs.py": version_test},
        {"docs/VERSION": "0.2\n"},
        base_files={"pkg/__init__.py": CODE, "docs/VERSION": "0.1\n", "tests/test_pkg.py": TESTS},
        coverage=True,
    )
    assert outcome.verdict.reason is DropReason.COVERAGE_UNMEASURABLE
    evidence = outcome.verdict.evidence
    assert evidence["error"] == "the golden patch changes no Python line"
    assert evidence["patch_files"] == "docs/VERSION"
    assert "runs" not in evidence  # known from the patch alone: dropped before any test run


@pytest.mark.slow
def test_a_patch_line_inside_a_multi_line_statement_counts(make_case):
    """coverage reports a statement by its first line; the patch changes only its third."""
    code = "def pick(a, b):\n    return (\n        a\n        and b\n    )\n"
    tests = "from pkg import pick\n\n\ndef test_pick():\n    assert pick(0, 2) == 2\n"
    outcome = make_case(
        {"tests/test_pkg.py": tests},
        {"pkg/__init__.py": code.replace("and b", "or b")},
        base_files={"pkg/__init__.py": code, "tests/test_pkg.py": ""},
        coverage=True,
    )
    assert outcome.verdict.kept, outcome.verdict
    report = _report(outcome)
    assert {(line["side"], line["line"]) for line in report["lines"]} == {
        ("before", 4),
        ("after", 4),
    }
    assert outcome.output.golden_coverage == 1.0
    contexts = [line["contexts"] for line in report["lines"]]
    assert all("tests/test_pkg.py::test_pick" in names for names in contexts)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # decided before any run: once is enough
@pytest.mark.parametrize(
    "patch",
    [
        "--- a/pkg/__init__.py\n+++ b/pkg/__init__.py\n@@ -1,3 +1,3 @@\n-def add(a, b):\n",
        "this is not a diff\n",
    ],
    ids=["short-hunk", "no-diff"],
)
def test_a_broken_golden_patch_is_not_called_unmeasurable(make_case, backend, patch):
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {}, patch=patch, coverage=True)
    assert outcome.verdict.reason is DropReason.GOLDEN_PATCH_DOES_NOT_APPLY


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # the drop itself runs on every backend above
def test_unexecuted_python_patch_is_coverage_unmeasurable(make_case, backend):
    """The F→P test passes for a reason the patched Python lines have nothing to do with."""
    version_test = (
        "from pathlib import Path\n\n\ndef test_version():\n"
        "    assert Path('docs/VERSION').read_text().strip() == '0.2'\n"
    )
    unused = CODE + "\n\ndef unused():\n    return 1\n"
    outcome = make_case(
        {"tests/test_docs.py": version_test},
        {"docs/VERSION": "0.2\n", "pkg/__init__.py": unused.replace("return 1", "return 2")},
        base_files={"pkg/__init__.py": unused, "docs/VERSION": "0.1\n", "tests/test_pkg.py": TESTS},
        coverage=True,
    )
    assert outcome.verdict.reason is DropReason.COVERAGE_UNMEASURABLE
    evidence = outcome.verdict.evidence
    assert evidence["patch_files"] == "pkg/__init__.py"
    assert (evidence["python_lines_removed"], evidence["python_lines_added"]) == ("1", "1")
    assert "no line of the golden patch is executed" in evidence["error"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])  # a control of the fixture: once is enough
def test_without_following_children_the_worker_lines_are_lost(make_case, backend, monkeypatch):
    """The control of the worker/subprocess test: the same fixture under an rcfile following no
    child process measures none of its patch lines, so that fixture does prove the following."""
    original = validation.coverage.rcfile

    def parent_only(files, data_file, **options):
        text = original(files, data_file, **options)
        return text.replace("concurrency = multiprocessing, thread\n", "").replace(
            "patch = subprocess\n", ""
        )

    monkeypatch.setattr(validation.coverage, "rcfile", parent_only)
    fixed = WORKER_CODE.replace("x + x", "x * x").replace("return 41", "return 42")
    outcome = make_case(
        {"tests/test_pkg.py": WORKER_TESTS},
        {"pkg/__init__.py": fixed},
        base_files={"pkg/__init__.py": WORKER_CODE, "tests/test_pkg.py": ""},
        coverage=True,
    )
    assert outcome.verdict.reason is DropReason.COVERAGE_UNMEASURABLE


# ---------------------------------------------------------------------------------------------
# The measuring wrapper itself, on real interpreters: 3.6 (the oldest, coverage.py 6.2), 3.11 (C
# tracer) and 3.12 (sys.monitoring).

MEASURED_CODE = (
    "def f(x):\n    y = x + 1\n    return y\n\n\ndef g():\n    return 0\n\n\n"
    "def h(x):\n    return (\n        x\n        or 1\n    )\n"  # 10-14: one statement at 11
)
MEASURED_TESTS = """\
import pytest

from pkg import f, h


def test_one():
    assert f(1) == 2
    assert h(0) == 1


class TestMore:
    @pytest.mark.parametrize("x", [1, 2])
    def test_two(self, x):
        assert f(x) == x + 1
"""
NODE_IDS = [
    "tests/test_a.py::TestMore::test_two[1]",
    "tests/test_a.py::TestMore::test_two[2]",
    "tests/test_a.py::test_one",
]


@pytest.fixture(scope="module")
def measuring_pythons(tmp_path_factory):
    """An environment with pytest and the pinned coverage.py per Python version (built once)."""
    from validation.environments.environment import EnvironmentSpec, LocalEnvironments
    from validation.environments.interpreters import Interpreters

    interpreters = Interpreters()
    environments = LocalEnvironments(tmp_path_factory.mktemp("envs"), interpreters)

    def python(version: str) -> tuple[str, Path]:
        """("3.12+": the oldest interpreter found from 3.12 on) → (version, its env's python)."""
        if version.endswith("+"):
            floor = tuple(map(int, version[:-1].split(".")))
            found = sorted(
                tuple(map(int, v.split("."))) for v in interpreters.available()
                if tuple(map(int, v.split("."))) >= floor
            )  # fmt: skip
            assert found, f"no Python {version} interpreter found: {interpreters.search_paths}"
            version = ".".join(map(str, found[0]))
        packages = ("pytest", coverage_requirement(version))
        return version, environments.python(EnvironmentSpec(python=version, packages=packages))

    return python


# Hides coverage.py's sys.monitoring tracer from the plugin: it must fall back to restarting
# every event per test (complete attribution, at a higher cost).
HIDE_TRACER = (
    "import _swt_test_contexts\n\n_swt_test_contexts._sysmon_tracers = lambda measuring: []\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("python", "contexts", "rearm"),
    [
        ("3.6", "runner", None),  # the oldest environment Python, with coverage.py 6.2
        ("3.6", "test_function", None),
        ("3.11", "runner", None),
        ("3.11", "test_function", None),
        ("3.12+", "runner", "code"),
        ("3.13+", "runner", "code"),
        ("3.12+", "runner", "restart"),
    ],
)
def test_every_test_running_a_wanted_line_is_its_context(
    measuring_pythons, tmp_path, python, contexts, rearm
):
    """Each of the three tests runs line 2: all three are its contexts, also on the
    sys.monitoring core (3.12+), which reports a line only once unless the plugin re-arms it:
    on the code objects holding wanted lines ("code"), or, without access to coverage's
    tracer, by restarting every event ("restart"). On <= 3.11 the C tracer reports every line
    event and nothing is re-armed."""
    import json

    from validation.coverage import measured_command, read_report
    from validation.runs.runners import make_runner

    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(MEASURED_CODE)
    (tmp_path / "tests" / "test_a.py").write_text(MEASURED_TESTS)
    if rearm == "restart":
        (tmp_path / "tests" / "conftest.py").write_text(HIDE_TRACER)
    runner = make_runner("pytest")
    plugin = runner.context_options(CONTEXT_PLUGIN) if contexts == "runner" else None
    scratch = tmp_path / "scratch"
    python, interpreter = measuring_pythons(python)
    command = runner.command(
        str(interpreter), ["tests/test_a.py"], str(scratch / "r.xml"), plugin or ()
    )
    text = rcfile(["pkg/__init__.py"], str(scratch / "data"), contexts=contexts, python=python)
    sysmon = tuple(map(int, python.split("."))) >= validation.coverage.SYSMON_PYTHON
    assert ("core = sysmon" in text) == sysmon
    wanted = {"pkg/__init__.py": {2, 7, 13}}  # 13: a continuation line of the statement at 11
    runtime = str(RUNTIME.place(tmp_path / "tools"))
    wrapped = measured_command(
        command, runtime, str(scratch / "rc"), text, str(scratch / "cov.json"), wanted
    )
    import subprocess

    done = subprocess.run(wrapped, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((scratch / "cov.json").read_text())["rearm"] == rearm
    measured = read_report((scratch / "cov.json").read_bytes())
    # g's body never runs; 13 counts because its statement (11) ran
    assert measured.executed["pkg/__init__.py"] == {1, 2, 3, 6, 10, 11, 13}
    contexts_of_line = measured.contexts["pkg/__init__.py"]
    assert set(contexts_of_line) == {2, 13}  # only wanted lines carry contexts; 7 never ran
    if contexts == "runner":
        assert list(contexts_of_line[2]) == NODE_IDS
        assert contexts_of_line[13] == ("tests/test_a.py::test_one",)
    else:  # coverage's function contexts: test_two's parameters share one name
        assert len(contexts_of_line[2]) == 2


# ---------------------------------------------------------------------------------------------
# The runtime files (measure.py, plugin.py) imported here, their parts exercised directly.


def test_the_runtime_files_and_the_builder_agree_on_names():
    assert measure.CONTEXT_ENV == context_plugin.CONTEXT_ENV == CONTEXT_ENV
    assert measure.WANTED_ENV == context_plugin.WANTED_ENV
    assert measure.PLUGIN == CONTEXT_PLUGIN  # the module pytest -p loads is the one measured
    assert RUNTIME.script == "_swt_measure.py"
    assert RUNTIME.contents[f"{CONTEXT_PLUGIN}.py"] == Path(context_plugin.__file__).read_bytes()


def test_a_continuation_line_starts_at_its_statements_first_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(MEASURED_CODE)
    cov = coverage.Coverage(data_file=None, config_file=False)
    wanted = {"pkg/__init__.py": [2, 13], "pkg/absent.py": [4]}
    starts = measure.statement_starts(cov, wanted)
    # 13 lies in the statement at 11; a file without source keeps its raw lines
    assert starts == {"pkg/__init__.py": {2: {2}, 13: {11}}, "pkg/absent.py": {4: {4}}}
    assert measure.wanted_by_real_path(starts) == {
        os.path.realpath("pkg/__init__.py"): [2, 11, 13],
        os.path.realpath("pkg/absent.py"): [4],
    }


def test_the_plugin_reads_the_wanted_lines_the_measuring_script_names(tmp_path):
    assert context_plugin.read_wanted(None) == {}  # loaded without the measuring script
    wanted = tmp_path / "wanted.json"
    wanted.write_text(json.dumps({"/r/pkg/a.py": [2, 11]}))
    assert context_plugin.read_wanted(str(wanted)) == {"/r/pkg/a.py": {2, 11}}
    with pytest.raises(FileNotFoundError):  # named but missing: a broken run, not "none wanted"
        context_plugin.read_wanted(str(tmp_path / "absent.json"))


class _Config:
    context = ""

    def serialize(self):
        return f"context={self.context}"


@pytest.mark.parametrize("serializes", [True, False], ids=["coverage>=7.10", "older"])
def test_child_processes_get_the_running_tests_context(monkeypatch, serializes):
    monkeypatch.delenv(CONTEXT_ENV, raising=False)
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", "as measure started")
    config = _Config() if serializes else types.SimpleNamespace(context="")
    measuring = types.SimpleNamespace(config=config)
    context_plugin.children_context(measuring, "tests/test_a.py::test_one")
    assert os.environ[CONTEXT_ENV] == "tests/test_a.py::test_one"  # multiprocessing children
    handed_on = "context=tests/test_a.py::test_one" if serializes else "as measure started"
    assert os.environ["COVERAGE_PROCESS_CONFIG"] == handed_on  # patch = subprocess children
    assert config.context == ""  # this process's own configuration is left as it was


def test_a_measured_runs_stored_command_names_the_script_not_its_source(make_case):
    changed = ADD_TEST.replace("double(2) == 4", "double(3) == 6")  # existing tests run too
    outcome = make_case({"tests/test_pkg.py": changed}, {"pkg/__init__.py": FIXED}, coverage=True)
    assert outcome.verdict.kept, outcome.verdict
    measured = [run for run in runs_of(outcome) if run.repetition == 0]  # read back as stored
    assert {(run.suite, run.side) for run in measured} == {
        ("golden", "before"), ("golden", "after"), ("existing", "before"), ("existing", "after"),
    }  # fmt: skip
    for run in measured:
        assert run.command[1].endswith(f"/{RUNTIME.digest}/_swt_measure.py"), run.command
        assert len(json.dumps(run.command)) < 2000  # with the sources inlined: ~7.5 KB
        assert not any("import " in part for part in run.command), run.command


def test_result_keys_follow_the_runtime_files_content(tmp_path, monkeypatch):
    stage = ValidateStage(ValidationConfig(backend="local", coverage=True), tmp_path / "w", {})
    before = stage.fingerprint()
    monkeypatch.setattr(validation.coverage, "RUNTIME", copied(RUNTIME, tmp_path, monkeypatch))
    assert stage.fingerprint() == before  # the same bytes elsewhere: the same keys
    changed = copied(RUNTIME, tmp_path, monkeypatch, append="#\n")
    monkeypatch.setattr(validation.coverage, "RUNTIME", changed)
    assert stage.fingerprint() != before
    unmeasured = ValidateStage(ValidationConfig(backend="local", coverage=False), tmp_path, {})
    assert "coverage_measure" not in unmeasured.fingerprint()  # not measured: not keyed on them
