"""The validation stage on real fixture repositories: the kept path and every drop reason."""

import itertools

import pytest

from builder.config import ValidationConfig
from builder.records import DropReason
from recipes.swe_bench import to_candidate
from tests.conftest import GitRepo, swe_record
from validation.stage import ValidateStage

CODE = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 2 * x\n"
TESTS = "from pkg import add, double\n\n\ndef test_double():\n    assert double(2) == 4\n"
_names = itertools.count()


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("work")


@pytest.fixture
def make_case(tmp_path, work_dir):
    """Build a repo with ``pkg`` + tests, a candidate from patches, and run the stage on it."""

    def run(test_files, code_files, *, timeout_s=20.0, packages=("pytest",), base_files=None):
        repo = GitRepo(tmp_path / f"repo{next(_names)}")
        base = repo.commit(base_files or {"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
        test_patch = repo.diff(test_files)
        patch = repo.diff(code_files)
        name = f"fixture/repo{next(_names)}"
        candidate = to_candidate(swe_record(name, 1, base, patch, test_patch))
        settings = ValidationConfig(timeout_s=timeout_s, packages=list(packages))
        stage = ValidateStage(settings, work_dir, {name: str(repo.path)})
        return stage.process(candidate)

    return run


ADD_TEST = TESTS + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
FIXED = CODE.replace("a - b", "a + b")


def test_kept_with_fail_to_pass_and_pass_to_pass(make_case):
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert instance.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    assert instance.run_metadata["runner"] == "pytest"
    stats = instance.stats
    assert (stats.codebase_files, stats.codebase_lines) == (2, 11)
    assert (stats.golden_test_files_edited, stats.golden_test_lines_edited) == (1, 4)
    assert stats.golden_tests.fail_to_pass == 1 and stats.golden_tests.pass_to_pass == 1


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


def test_no_fail_to_pass(make_case):
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": CODE + "# no fix\n"})
    assert outcome.verdict.reason is DropReason.NO_FAIL_TO_PASS
    assert "test_add" in outcome.verdict.evidence["fail_to_fail"]


def test_pass_to_fail(make_case):
    broken = FIXED.replace("2 * x", "3 * x")
    outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": broken})
    assert outcome.verdict.reason is DropReason.PASS_TO_FAIL
    assert outcome.verdict.evidence["tests"] == "tests/test_pkg.py::test_double"


def test_timeout_kills_the_run(make_case):
    hang = TESTS + "\n\ndef test_hang():\n    import time\n    time.sleep(600)\n"
    outcome = make_case({"tests/test_pkg.py": hang}, {"pkg/__init__.py": FIXED}, timeout_s=2)
    assert outcome.verdict.reason is DropReason.TIMEOUT
    assert outcome.verdict.evidence["side"] == "before"
    assert float(outcome.verdict.evidence["seconds"]) < 10


def test_no_test_files(make_case):
    outcome = make_case({"tests/data/x.json": "{}\n"}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.NO_TEST_FILES
    assert outcome.verdict.evidence["test_patch_files"] == "tests/data/x.json"


def test_no_tests_collected(make_case):
    outcome = make_case({"tests/test_empty.py": "VALUE = 1\n"}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.reason is DropReason.NO_TESTS_COLLECTED


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


def test_unknown_commit_is_repo_unavailable(tmp_path, work_dir):
    repo = GitRepo(tmp_path / "r")
    repo.commit({"a.py": "x\n"})
    candidate = to_candidate(swe_record("fixture/nocommit", 1, "c" * 40, "p", "t"))
    stage = ValidateStage(ValidationConfig(), work_dir, {"fixture/nocommit": str(repo.path)})
    outcome = stage.process(candidate.model_copy(update={"test_patch": _test_patch(repo)}))
    assert outcome.verdict.reason is DropReason.REPO_UNAVAILABLE
    assert "not found" in outcome.verdict.evidence["error"]


def _test_patch(repo):
    return repo.diff({"tests/test_a.py": "def test_a():\n    pass\n"})


def test_environment_failure_is_a_drop_with_its_log(make_case):
    outcome = make_case(
        {"tests/test_pkg.py": ADD_TEST},
        {"pkg/__init__.py": FIXED},
        packages=("this is not a requirement!!",),
    )
    assert outcome.verdict.reason is DropReason.ENVIRONMENT_FAILED
    assert outcome.verdict.evidence["log"].endswith(".build.log")


def test_worktree_left_locked_by_a_killed_run_is_recovered(tmp_path):
    from validation.gitutil import git
    from validation.repos import RepoCache, worktree

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
