"""Tests for the deterministic offline demo generator (real git, real pytest runs)."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from builder.core.records import DropReason
from recipes.demo.cases import PULLS
from recipes.demo.generate import DEMO_REPO, EXPECTED, VERSION, DemoPaths
from recipes.demo.github_demo import GITHUB_EXPECTED
from recipes.demo.make import generate_demo

PROJECT_ROOT = Path(__file__).resolve().parents[2]
RECORD_KEYS = [
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "environment_setup_commit",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
]
MALFORMED = "swt-demo__calc-33"
APPLICABLE = sorted(iid for iid, outcome in EXPECTED.items() if outcome != "MALFORMED_RECORD")
HANG_SECONDS = 10
RUN_SECONDS = 120
_SUMMARY_LINE = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.MULTILINE)
_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/", re.MULTILINE)


def _git(cwd: Path, *args: str, stdin: str | None = None, check: bool = True):
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=check
    )


def _load(records: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    return {row["instance_id"]: row for row in rows}


def _touched(diff: str) -> list[str]:
    return _DIFF_HEADER.findall(diff)


def _is_test_file(path: str) -> bool:
    return path.startswith("tests/") and path.endswith(".py")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoPaths:
    return generate_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def records(demo: DemoPaths) -> dict[str, dict]:
    return _load(demo.records)


@pytest.fixture
def checkout(demo: DemoPaths, tmp_path: Path):
    """A factory for a fresh clone of the demo repository, detached at a commit."""

    def make(commit: str) -> Path:
        path = tmp_path / "checkout"
        _git(tmp_path, "clone", "--quiet", "--no-checkout", str(demo.repo), str(path))
        _git(path, "checkout", "--quiet", "--detach", commit)
        return path

    return make


SHOWN = {
    "MALFORMED_RECORD", "NOT_MERGED", "NO_TEST_CHANGE", "NO_PYTHON_CODE_CHANGE", "NO_LINKED_ISSUE",
    "EMPTY_PROBLEM_STATEMENT", "TEST_PATCH_DOES_NOT_APPLY", "GOLDEN_PATCH_DOES_NOT_APPLY",
    "NO_TEST_FILES", "TIMEOUT", "NO_FAIL_TO_PASS", "PASS_TO_FAIL",
}  # fmt: skip
"""The drop reasons the demo is there to show, at least one pull request each."""


def test_the_demo_shows_every_stage_and_drop_reason_it_is_for() -> None:
    outcomes = set(EXPECTED.values()) | set(GITHUB_EXPECTED.values())
    assert outcomes - {"kept"} == SHOWN
    assert all(reason in DropReason.__members__ for reason in SHOWN)
    assert "kept" in EXPECTED.values() and "kept" in GITHUB_EXPECTED.values()
    assert any(pull.expected == "out_of_range" for pull in PULLS)  # the recipe's date window
    assert [pull.number for pull in PULLS] == sorted({pull.number for pull in PULLS})


def test_every_data_file_ships_in_the_wheel() -> None:
    """pyproject's package-data globs (as setuptools expands them) cover recipes/demo/data."""
    recipes = PROJECT_ROOT / "recipes"
    with open(PROJECT_ROOT / "pyproject.toml", "rb") as handle:
        patterns = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["recipes"]
    shipped = {
        path
        for pattern in patterns
        for path in glob.glob(pattern, root_dir=recipes, recursive=True)
    }
    tracked = _git(PROJECT_ROOT, "ls-files", "recipes/demo/data").stdout.split()
    assert tracked and {str(Path(path).relative_to("recipes")) for path in tracked} <= shipped


def _history(repo: Path) -> list[str]:
    return _git(repo, "log", "--format=%H", "main").stdout.split()


@pytest.mark.slow
def test_generation_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    first = generate_demo(tmp_path / "a")
    second = generate_demo(tmp_path / "b")
    assert _history(first.repo) == _history(second.repo)
    assert first.records.read_bytes() == second.records.read_bytes()
    records = first.records.read_bytes()
    again = generate_demo(tmp_path / "a")
    assert again == first
    assert again.records.read_bytes() == records
    assert _history(again.repo) == _history(second.repo)


@pytest.mark.slow
def test_command_line_generates_the_demo(tmp_path: Path, demo: DemoPaths) -> None:
    out = tmp_path / "cli"
    subprocess.run(
        [sys.executable, "-m", "recipes.demo.make", str(out)],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    )
    assert (out / "records.jsonl").read_bytes() == demo.records.read_bytes()


def test_repository_is_a_clean_linear_main(demo: DemoPaths) -> None:
    assert _git(demo.repo, "rev-parse", "--is-bare-repository").stdout.strip() == "false"
    assert _git(demo.repo, "for-each-ref", "--format=%(refname)").stdout.split() == [
        "refs/heads/main"
    ]
    assert _git(demo.repo, "symbolic-ref", "HEAD").stdout.strip() == "refs/heads/main"
    assert _git(demo.repo, "status", "--porcelain").stdout == ""
    assert len(_git(demo.repo, "worktree", "list").stdout.splitlines()) == 1
    assert _git(demo.repo, "rev-list", "--merges", "main").stdout == ""
    files = _git(demo.repo, "ls-files").stdout.split()
    assert {"pyproject.toml", "README.md", "calc/stats.py", "tests/test_stats.py"} <= set(files)


def test_records_are_swe_bench_shaped(demo: DemoPaths, records: dict[str, dict]) -> None:
    lines = demo.records.read_text(encoding="utf-8").splitlines(keepends=True)
    assert all(line.endswith("\n") for line in lines)
    numbers = [int(iid.rsplit("-", 1)[1]) for iid in records]
    assert numbers == sorted(numbers)
    assert set(records) == set(EXPECTED)
    history = _history(demo.repo)
    for iid, record in records.items():
        keys = [key for key in RECORD_KEYS if not (iid == MALFORMED and key == "base_commit")]
        assert list(record) == keys
        assert record["repo"] == DEMO_REPO
        assert record["version"] == VERSION
        assert record["environment_setup_commit"] == history[0]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["created_at"])
        assert isinstance(json.loads(record["FAIL_TO_PASS"]), list)
        assert isinstance(json.loads(record["PASS_TO_PASS"]), list)
        assert iid == MALFORMED or record["base_commit"] in history
    assert EXPECTED[MALFORMED] == "MALFORMED_RECORD"
    assert len({record.get("base_commit") for record in records.values()}) >= 4


@pytest.mark.parametrize("iid", APPLICABLE)
def test_patches_split_code_from_tests(records: dict[str, dict], iid: str) -> None:
    record = records[iid]
    code_files, test_files = _touched(record["patch"]), _touched(record["test_patch"])
    assert code_files and not any(path.startswith("tests/") for path in code_files)
    if EXPECTED[iid] == "NO_TEST_FILES":
        assert test_files and not any(_is_test_file(path) for path in test_files)
    else:
        assert test_files and all(_is_test_file(path) for path in test_files)


@pytest.mark.parametrize("iid", APPLICABLE)
def test_patches_apply_as_the_case_says(records: dict[str, dict], checkout, iid: str) -> None:
    record = records[iid]
    path = checkout(record["base_commit"])
    for field, reason in (
        ("test_patch", "TEST_PATCH_DOES_NOT_APPLY"),
        ("patch", "GOLDEN_PATCH_DOES_NOT_APPLY"),
    ):
        result = _git(path, "apply", "--check", "-", stdin=record[field], check=False)
        assert (result.returncode == 0) == (EXPECTED[iid] != reason), (field, result.stderr)


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize(
    ("iid", "field"),
    [("swt-demo__calc-16", "test_patch"), ("swt-demo__calc-23", "patch")],
)
def test_stale_patches_resist_fuzzy_application(
    records: dict[str, dict], checkout, iid: str, field: str
) -> None:
    """Even SWE-bench's ``patch --fuzz`` fallback rejects them: they remove lines base lacks."""
    path = checkout(records[iid]["base_commit"])
    result = subprocess.run(
        ["patch", "--dry-run", "--batch", "--fuzz=5", "-p1"],
        cwd=path,
        input=records[iid][field],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0, result.stdout


def _pytest(path: Path, test_files: list[str], timeout: float) -> dict[str, str] | None:
    """Per-test statuses of one pytest run in ``path``, or None when it hit ``timeout``."""
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONPATH": str(path)}
    with subprocess.Popen(
        command + test_files,
        cwd=path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return None
    return {node: status for status, node in _SUMMARY_LINE.findall(output)}


def _passed(statuses: dict[str, str]) -> set[str]:
    return {node for node, status in statuses.items() if status == "PASSED"}


def _run_case(record: dict, path: Path) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """Statuses of the touched test files with the test patch, then with the golden patch too."""
    test_files = [file for file in _touched(record["test_patch"]) if _is_test_file(file)]
    _git(path, "apply", "-", stdin=record["test_patch"])
    before = _pytest(path, test_files, HANG_SECONDS)
    _git(path, "apply", "-", stdin=record["patch"])
    after = _pytest(path, test_files, RUN_SECONDS)
    return before, after


def _outcome(before: dict[str, str] | None, after: dict[str, str] | None) -> str:
    if before is None or after is None:
        return "TIMEOUT"
    if _passed(before) - _passed(after):
        return "PASS_TO_FAIL"
    if not _passed(after) - _passed(before):
        return "NO_FAIL_TO_PASS"
    return "kept"


@pytest.mark.slow
@pytest.mark.parametrize(
    "iid",
    [
        "swt-demo__calc-7",
        "swt-demo__calc-10",
        "swt-demo__calc-18",
        "swt-demo__calc-21",
        "swt-demo__calc-26",
    ],
)
def test_running_the_tests_gives_the_expected_outcome(
    records: dict[str, dict], checkout, iid: str
) -> None:
    record = records[iid]
    before, after = _run_case(record, checkout(record["base_commit"]))
    assert _outcome(before, after) == EXPECTED[iid], (before, after)
    if EXPECTED[iid] == "PASS_TO_FAIL":
        assert _passed(after) - _passed(before), "the golden patch should fix the new test"
    if EXPECTED[iid] == "TIMEOUT":
        assert before is None and after and set(after.values()) == {"PASSED"}
    if EXPECTED[iid] == "kept":
        assert sorted(_passed(after) - _passed(before)) == sorted(
            json.loads(record["FAIL_TO_PASS"])
        )
        assert sorted(_passed(before) & _passed(after)) == sorted(
            json.loads(record["PASS_TO_PASS"])
        )
        assert set(after.values()) == {"PASSED"}
