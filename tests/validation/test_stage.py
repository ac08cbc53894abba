"""The validation stage on real fixture repositories: the kept path and every drop reason.

Every test that runs the stage is parametrized over :data:`BACKENDS` (tests/support/
stage_fixtures.py) through the ``make_case`` fixture (tests/validation/conftest.py); a backend
joins by adding its name there. Repetitions and coverage are off here unless they are the
subject (test_flaky.py and test_coverage.py exercise them).
"""

import json
from pathlib import Path

import pytest

from builder.core.config import ValidationConfig
from builder.core.pipeline import Outcome
from builder.core.records import DropReason
from recipes.swe_bench import to_candidate
from tests.support.git import GitRepo
from tests.support.records import swe_record
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS, runs_of
from validation.stage import ValidateStage


@pytest.mark.slow
def test_kept_with_fail_to_pass_and_pass_to_pass(make_case):
    """The test patch adds test_add and deletes test_old, which the base commit has."""
    base = {
        "pkg/__init__.py": CODE,
        "tests/test_pkg.py": TESTS + "\n\ndef test_old():\n    assert add(0, 0) == 0\n",
    }
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": FIXED}, base_files=base
    )
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert instance.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    assert instance.golden_coverage is None  # coverage off
    assert instance.run_metadata["runner"] == "pytest"
    assert instance.run_metadata["runs_per_side"] == "1"
    stats = instance.stats
    assert (stats.codebase_files, stats.codebase_lines) == (2, 15)
    assert (stats.golden_test_files_edited, stats.golden_test_lines_edited) == (1, 4)
    assert stats.golden_tests.fail_to_pass == 1 and stats.golden_tests.pass_to_pass == 1
    # the test file at the base commit (test_double, test_old) run before/after the fix: P→P
    assert stats.existing_tests.pass_to_pass == 2
    assert stats.existing_tests.fail_to_pass == 0 and stats.existing_tests.pass_to_fail == 0
    assert (stats.golden_tests_added, stats.golden_tests_removed) == (1, 1)
    runs = runs_of(outcome)
    assert [(r.suite, r.side, r.repetition) for r in runs] == [
        ("golden", "before", 0), ("golden", "after", 0),
        ("existing", "before", 0), ("existing", "after", 0),
    ]  # fmt: skip
    for run in runs:  # per run: exit code, duration, evidence that the suite ran, its log
        assert run.report_found and run.tests and run.duration_s > 0
        assert run.log_path.endswith(f"{run.suite}-{run.side}-{run.repetition}.log")
    assert [r.exit_code for r in runs] == [1, 0, 0, 0]


@pytest.mark.slow
def test_import_error_before_the_fix_counts_as_failing(make_case):
    new_test = "from pkg import triple\n\n\ndef test_triple():\n    assert triple(1) == 3\n"
    outcome = make_case(
        {"tests/test_new.py": new_test, "tests/test_pkg.py": ADD_TEST},
        {"pkg/__init__.py": FIXED + "\n\ndef triple(x):\n    return 3 * x\n"},
    )
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.FAIL_TO_PASS == (
        "tests/test_new.py::test_triple",
        "tests/test_pkg.py::test_add",
    )
    # the other file's passing test is not disturbed by the collection error
    assert outcome.output.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    # the uncollectable file is recorded, for compare's collection_abort evidence
    assert json.loads(outcome.output.run_metadata["collection_errors"]) == {
        "after": [],
        "before": ["tests/test_new.py"],
    }


SAME = "import unittest\n\n\nclass SameTests(unittest.TestCase):\n    def test_it(self):\n"


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["pytest", "unittest"])
def test_same_named_tests_in_two_files_stay_apart(make_case, runner):
    base = {
        "pkg/__init__.py": CODE,
        "tests/__init__.py": "",
        "tests/a/__init__.py": "",
        "tests/b/__init__.py": "",
        "tests/b/test_same.py": SAME + "        from pkg import double\n"
        "        self.assertEqual(double(2), 4)\n",
    }
    fails_first = SAME + "        from pkg import add\n        self.assertEqual(add(1, 2), 3)\n"
    outcome = make_case(
        {"tests/a/test_same.py": fails_first, "tests/b/test_same.py": base["tests/b/test_same.py"]
         + "\n    def test_more(self):\n        pass\n"},
        {"pkg/__init__.py": FIXED},
        base_files=base,
        runner=runner,
    )  # fmt: skip
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.FAIL_TO_PASS == ("tests/a/test_same.py::SameTests::test_it",)
    assert outcome.output.PASS_TO_PASS == (
        "tests/b/test_same.py::SameTests::test_it",
        "tests/b/test_same.py::SameTests::test_more",
    )
    assert all(("unittest" in run.command) == (runner == "unittest") for run in runs_of(outcome))


@pytest.mark.slow
def test_no_fail_to_pass(make_case):
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": CODE + "# no fix\n"}, repetitions=2
    )
    assert outcome.verdict.reason is DropReason.NO_FAIL_TO_PASS
    assert "test_add" in outcome.verdict.evidence["fail_to_fail"]
    runs = runs_of(outcome)  # a drop names its runs too
    # no F→P candidate in the first pair: no repetition could make one, none is run
    assert [(r.side, r.repetition) for r in runs] == [("before", 0), ("after", 0)]
    assert all(json.loads(r.to_json())["suite"] == "golden" for r in runs)


@pytest.mark.slow
def test_pass_to_fail(make_case):
    broken = FIXED.replace("2 * x", "3 * x")
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": broken})
    assert outcome.verdict.reason is DropReason.PASS_TO_FAIL
    assert outcome.verdict.evidence["tests"] == "tests/test_pkg.py::test_double"


@pytest.mark.slow
def test_timeout_kills_the_run(make_case):
    hang = TESTS + "\n\ndef test_hang():\n    import time\n    time.sleep(600)\n"
    outcome = make_case(
        {"tests/test_pkg.py": hang}, {"pkg/__init__.py": FIXED}, timeout_s=2, repetitions=3
    )
    assert outcome.verdict.reason is DropReason.TIMEOUT
    assert outcome.verdict.evidence["side"] == "before"
    assert outcome.verdict.evidence["suite"] == "golden"
    assert float(outcome.verdict.evidence["seconds"]) < 10
    runs = runs_of(outcome)  # both sides ran at once; the first side's timeout is the drop's
    assert [(r.side, r.repetition) for r in runs] == [("before", 0), ("after", 0)]
    assert all(run.timed_out and run.exit_code is None for run in runs)


def test_no_test_files(make_case):
    outcome = make_case({"tests/data/x.json": "{}\n"}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.NO_TEST_FILES
    assert outcome.verdict.evidence["test_patch_files"] == "tests/data/x.json"


@pytest.mark.slow
def test_a_runner_that_fails_is_runner_failed_not_a_test_failure(make_case):
    """A conftest that raises stops pytest before any test runs (a usage error, no report): no
    test verdict is read from such a run, so nothing becomes fail-to-pass."""
    broken = {"tests/test_pkg.py": ADD_TEST, "tests/conftest.py": "raise RuntimeError('no')\n"}
    outcome = make_case(broken, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.RUNNER_FAILED
    evidence = outcome.verdict.evidence
    assert evidence["side"] == "before" and evidence["exit_code"] not in ("0", "1")
    assert "RuntimeError" in evidence["log_tail"]
    assert evidence["log"].endswith("golden-before-0.log")


@pytest.mark.slow
def test_a_run_that_crashes_after_some_tests_is_a_named_drop_not_a_grade(make_case):
    """A hook that raises after the first test ends the session with INTERNALERROR (exit 3)
    while the JUnit report is still written: the tests it never reached would read as failing
    before the fix, so the run is a ``run_crashed`` drop with the error as evidence."""
    hook = (
        "def pytest_runtest_logfinish(nodeid, location):\n"
        "    raise RuntimeError('hook broke after ' + nodeid)\n"
    )
    crashing = {"tests/test_pkg.py": ADD_TEST, "tests/conftest.py": hook}
    outcome = make_case(crashing, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.RUN_CRASHED, outcome.verdict
    evidence = outcome.verdict.evidence
    assert evidence["side"] == "before" and evidence["exit_code"] == "3"
    assert evidence["crash"].startswith("pytest exited 3 (internal error): INTERNALERROR> ")
    assert "RuntimeError: hook broke after tests/test_pkg.py::test_double" in evidence["crash"]
    before = runs_of(outcome)[0]
    assert before.report_found and before.crashed == evidence["crash"]


@pytest.mark.slow
def test_a_crash_before_the_fix_with_clean_runs_after_it_is_the_failure_the_record_is_about(
    make_case,
):
    """pytest-dev's kind of record: the unfixed code makes pytest itself crash while it reports
    (INTERNALERROR) and the fix stops that. The crash before the fix is the failure the record
    is about: kept, the test the crashed run never reached failing before and passing after
    (as SWE-bench's and SWT-Bench's grading read it), the crash named in run_metadata."""
    hook = (
        "import pkg\n\n\n"
        "def pytest_runtest_logfinish(nodeid, location):\n"
        "    if pkg.add(1, 2) != 3:  # the bug under test crashes the reporting\n"
        "        raise RuntimeError('report broke after ' + nodeid)\n"
    )
    crashing = {"tests/test_pkg.py": ADD_TEST, "tests/conftest.py": hook}
    outcome = make_case(crashing, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert instance.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    crash = instance.run_metadata["crashed_before"]
    assert crash.startswith("pytest exited 3 (internal error): INTERNALERROR> ")
    assert "RuntimeError: report broke after tests/test_pkg.py::test_double" in crash
    before, after = runs_of(outcome)[:2]
    assert before.crashed and not after.crashed


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_a_project_that_is_pytest_says_its_runs_kept_pytests_own_tracebacks(make_case):
    """A shortcut the project does not tolerate is not taken, and the record says so: where the
    pytest that runs is the checkout's own (the pytest repository), its traceback format is
    code under test, and ``run_metadata.plain_path`` names the shortcut left out and why."""
    installed = Path(pytest.__file__).parent.parent
    vendored = {
        str(path.relative_to(installed)): path.read_text()
        for package in ("_pytest", "pytest")
        for path in (installed / package).rglob("*.py")
    }
    base = {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS, **vendored}
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST},
        {"pkg/__init__.py": FIXED},
        base_files=base,
        packages=("pytest", "pygments"),  # the vendored pytest's own needs
    )
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.run_metadata["plain_path"].startswith(
        "tracebacks in pytest's own format: the pytest that runs is the project's ("
    )
    assert all(run.plain_path for run in runs_of(outcome))


@pytest.mark.slow
def test_no_tests_collected(make_case):
    outcome = make_case({"tests/test_empty.py": "VALUE = 1\n"}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.NO_TESTS_COLLECTED
    assert outcome.verdict.evidence["log"].endswith("golden-after-0.log")


@pytest.mark.slow
@pytest.mark.parametrize(
    "field, reason",
    [
        ("test_patch", DropReason.TEST_PATCH_DOES_NOT_APPLY),
        ("patch", DropReason.GOLDEN_PATCH_DOES_NOT_APPLY),
    ],
)
def test_patches_that_do_not_apply(tmp_path, make_case, monkeypatch, field, reason):
    """A well-formed patch made against another base is rejected by git apply."""
    elsewhere = GitRepo(tmp_path / "elsewhere")
    elsewhere.commit(
        {"pkg/__init__.py": CODE.replace("double", "twice"), "tests/test_pkg.py": "#\n"}
    )
    foreign = {
        "test_patch": elsewhere.diff({"tests/test_pkg.py": ADD_TEST}),
        "patch": elsewhere.diff({"pkg/__init__.py": FIXED}),
    }[field]
    original = ValidateStage.process
    monkeypatch.setattr(
        ValidateStage,
        "process",
        lambda self, record: original(self, record.model_copy(update={field: foreign})),
    )
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is reason
    assert "does not apply" in outcome.verdict.evidence["error"]


def test_unknown_commit_is_an_infra_error(tmp_path, work_dir, backend):
    repo = GitRepo(tmp_path / "r")
    repo.commit({"a.py": "x\n"})
    candidate = to_candidate(swe_record("fixture/nocommit", 1, "c" * 40, "p", "t"))
    settings = ValidationConfig(backend=backend, repetitions=1, coverage=False)
    stage = ValidateStage(settings, work_dir, {"fixture/nocommit": str(repo.path)})
    outcome = stage.process(candidate.model_copy(update={"test_patch": _test_patch(repo)}))
    assert outcome.verdict.reason is DropReason.INFRA_ERROR
    assert outcome.verdict.evidence["fault"] == "repository"
    assert "not found" in outcome.verdict.evidence["error"]


def _test_patch(repo):
    return repo.diff({"tests/test_a.py": "def test_a():\n    pass\n"})


@pytest.mark.slow
def test_environment_failure_is_a_drop_with_its_log(make_case, tmp_path):
    missing = (tmp_path / "no-such-project").as_uri()
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST},
        {"pkg/__init__.py": FIXED},
        packages=("pytest", f"nothing @ {missing}"),
    )
    assert outcome.verdict.reason is DropReason.ENVIRONMENT_FAILED
    assert outcome.verdict.evidence["log"]
    assert len(outcome.verdict.evidence["environment"]) == 24  # the key of what failed


@pytest.mark.slow
def test_a_stored_environment_failure_holds_while_its_environment_is_the_same(
    tmp_path, work_dir, monkeypatch
):
    """An install-step change that gives only some environments new keys, or a repair the
    install makes for itself, is not in the result key: the records whose environment it
    changes are validated again."""
    from validation.environments.environment import INSTALL_REPAIRS, EnvironmentSpec

    repo = GitRepo(tmp_path / "r")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    candidate = to_candidate(
        swe_record("fixture/envfail", 1, base, repo.diff({"pkg/__init__.py": FIXED}),
                   repo.diff({"tests/test_pkg.py": ADD_TEST}))
    )  # fmt: skip
    missing = (tmp_path / "no-such-project").as_uri()
    settings = ValidationConfig(
        backend="local", repetitions=1, coverage=False, packages=["pytest", f"nothing @ {missing}"]
    )
    stage = ValidateStage(settings, work_dir, {"fixture/envfail": str(repo.path)})
    failed = stage.process(candidate)
    assert failed.verdict.reason is DropReason.ENVIRONMENT_FAILED
    assert stage.holds(candidate, failed)
    key = stage.key(candidate)
    # one stored before the install repaired what it repairs now (no or another version)
    evidence = dict(failed.verdict.evidence)
    assert evidence.pop("install_repairs") == str(INSTALL_REPAIRS)
    for older in ({}, {"install_repairs": str(INSTALL_REPAIRS - 1)}):
        before = Outcome.drop("validate", DropReason.ENVIRONMENT_FAILED, **evidence, **older)
        assert not stage.holds(candidate, before)

    material = EnvironmentSpec.key_material

    def with_a_new_step(spec):  # as a flag only some environments' keys get
        return {**material(spec), "a_new_install_step": True}

    monkeypatch.setattr(EnvironmentSpec, "key_material", with_a_new_step)
    changed = ValidateStage(settings, work_dir, {"fixture/envfail": str(repo.path)})
    assert changed.key(candidate) == key  # the result key does not see it
    assert not changed.holds(candidate, failed)
    other = Outcome.drop("validate", DropReason.NO_FAIL_TO_PASS, **failed.verdict.evidence)
    assert changed.holds(candidate, other)  # only environment failures are checked


def test_worktree_left_locked_by_a_killed_run_is_recovered(tmp_path):
    from builder.core.gitutil import git
    from builder.core.repos import RepoCache, worktree

    repo = GitRepo(tmp_path / "r")
    commit = repo.commit({"a.py": "x\n"})
    cache = RepoCache(tmp_path / "cache", {"o/r": str(repo.path)})
    mirror = cache.mirror("o/r", commit)
    path = tmp_path / "run" / "repo"
    git("worktree", "add", "--detach", str(path), commit, cwd=mirror)
    git("worktree", "lock", str(path), cwd=mirror)
    import shutil

    shutil.rmtree(path)  # as if the process died half-way: registered, locked, missing
    with worktree(mirror, commit, path) as tree:
        assert (tree / "a.py").read_text() == "x\n"
    assert not path.exists()
    assert str(path) not in git("worktree", "list", cwd=mirror)


def test_docker_settings_reach_the_validation_backend(tmp_path):
    """[docker] settings from the config are what the stage's Docker backend uses."""
    from builder.core.config import DockerConfig

    settings = ValidationConfig(backend="docker")
    docker = DockerConfig(memory="1g", pids_limit=64, base_images={"3.9": "mine:3.9"})
    stage = ValidateStage(settings, tmp_path, {}, docker)
    assert stage.backend.name == "docker"
    assert stage.backend.settings.memory == "1g" and stage.backend.settings.pids_limit == 64
    assert "mine:3.9" in stage.fingerprint()["backend"]["base_images"]


def test_a_system_package_the_machine_lacks_is_an_infra_error(tmp_path, work_dir):
    """The local backend does not install system packages: one its spec names and the machine
    lacks is the machine's fault, never a verdict on the instance (not stored; a machine with
    it validates the instance)."""
    repo = GitRepo(tmp_path / "r")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "fixture__system.toml").write_text(
        'repo = "fixture/system"\n[defaults]\npackages = ["pytest"]\n'
        'system_packages = ["no-such-package-swt"]\n'
    )
    record = swe_record(
        "fixture/system", 1, base, repo.diff({"pkg/__init__.py": FIXED}),
        repo.diff({"tests/test_pkg.py": ADD_TEST}),
    )  # fmt: skip
    settings = ValidationConfig(
        backend="local", repetitions=1, coverage=False, spec_dirs=[str(specs)], dated=False
    )
    stage = ValidateStage(settings, work_dir, {"fixture/system": str(repo.path)})
    outcome = stage.process(to_candidate(record))
    assert outcome.verdict.reason is DropReason.INFRA_ERROR
    assert outcome.verdict.evidence["fault"] == "system_packages"
    assert "no-such-package-swt" in outcome.verdict.evidence["error"]
