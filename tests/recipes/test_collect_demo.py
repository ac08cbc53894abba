"""The bundled demo through `swt-builder collect`: its loopback GitHub, drops and candidates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cli import main
from builder.core.records import Candidate, read_jsonl
from recipes.demo.generate import EXPECTED, DemoPaths
from recipes.demo.github_demo import GITHUB_EXPECTED, RECIPE
from recipes.demo.github_replay import ReplayServer
from recipes.demo.make import generate_demo
from recipes.demo.serve import LOOPBACK_TOKEN
from tests.support.git import GIT_ENV

pytestmark = pytest.mark.slow  # the demo collected end to end from its loopback GitHub

PROJECT_ROOT = Path(__file__).resolve().parents[2]
COLLECT_DROPS = {
    "NOT_MERGED",
    "NO_TEST_CHANGE",
    "NO_CODE_CHANGE",
    "NO_PYTHON_CODE_CHANGE",
    "NO_LINKED_ISSUE",
    "EMPTY_PROBLEM_STATEMENT",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoPaths:
    return generate_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def collected(demo: DemoPaths, tmp_path_factory: pytest.TempPathFactory):
    """``swt-builder collect`` on the demo recipe, twice (the second run is incremental)."""
    out = tmp_path_factory.mktemp("collect")
    argv = ["collect", "--recipe", str(RECIPE), "--output", str(out / "candidates.jsonl")]
    argv += ["--work-dir", str(out / "work"), "--no-progress"]
    argv += ["--set", f'repos={{"swt-demo/calc" = "{demo.github_repo}"}}']
    printed = []
    with (
        ReplayServer.from_json(demo.github_fixtures) as server,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GITHUB_TOKEN", LOOPBACK_TOKEN)
        env.delenv("GITHUB_TOKENS", raising=False)
        for _ in range(2):
            calls_before = len(server.calls)
            stdout = _run_main([*argv, "--base-url", server.url])
            printed.append((stdout, len(server.calls) - calls_before))
    candidates = {c.instance_id: c for c in read_jsonl(out / "candidates.jsonl", Candidate)}
    rejected = [json.loads(line) for line in (out / "rejected" / "collect.jsonl").open()]
    return candidates, rejected, printed


def _run_main(argv: list[str]) -> str:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(argv) == 0
    return buffer.getvalue()


def test_every_demo_pr_reaches_its_collect_outcome(collected) -> None:
    candidates, rejected, _ = collected
    dropped = {row["record"]["instance_id"]: row["reason"] for row in rejected}
    expected_drops = {i: r.lower() for i, r in GITHUB_EXPECTED.items() if r in COLLECT_DROPS}
    assert dropped == expected_drops
    assert set(candidates) == set(GITHUB_EXPECTED) - set(expected_drops)
    assert "swt-demo__calc-5" not in candidates and "swt-demo__calc-5" not in dropped


def test_cli_prints_the_funnel_and_api_calls_and_reruns_incrementally(collected) -> None:
    _, _, printed = collected
    (first, first_calls), (second, second_calls) = printed
    assert f"GitHub API calls: {first_calls}" in first
    assert "collect        13 in      8 kept" in first
    assert first_calls == 1 + 1 + 10 + 2  # list, graphql batch, issues, commented issues
    assert second_calls == 1 and "GitHub API calls: 1" in second
    assert "incremental listing" in second and "13 already in the store" in second


def test_hints_are_the_comments_before_the_first_commit(collected) -> None:
    candidates, _, _ = collected
    seven = candidates["swt-demo__calc-7"]
    assert seven.hints_text.startswith("The usual definition averages the two middle")
    assert "a fix is up" not in seven.hints_text
    assert candidates["swt-demo__calc-21"].hints_text == "`str.isspace()` covers tabs and newlines."
    assert candidates["swt-demo__calc-10"].hints_text == ""
    assert seven.issue_numbers == (6,) and seven.problem_statement.startswith("median() returns")


def test_patches_equal_the_swe_bench_records(collected, demo: DemoPaths) -> None:
    candidates, _, _ = collected
    records = {
        row["instance_id"]: row for row in map(json.loads, demo.records.read_text().splitlines())
    }
    for instance_id in ("swt-demo__calc-7", "swt-demo__calc-10", "swt-demo__calc-18",
                        "swt-demo__calc-21", "swt-demo__calc-26"):  # fmt: skip
        record, candidate = records[instance_id], candidates[instance_id]
        assert candidate.base_commit == record["base_commit"]
        assert candidate.patch == record["patch"], instance_id
        assert candidate.test_patch == record["test_patch"], instance_id
        assert EXPECTED[instance_id] == GITHUB_EXPECTED[instance_id]


def _applies(repo: Path, commit: str, patch: str, tmp_path: Path) -> bool:
    env = {**os.environ, **GIT_ENV}
    tree = tmp_path / "tree"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), commit],
                   cwd=repo, env=env, check=True, capture_output=True)  # fmt: skip
    try:
        done = subprocess.run(["git", "apply", "--check", "-"], cwd=tree, input=patch.encode(),
                              env=env, capture_output=True)  # fmt: skip
        return done.returncode == 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo, env=env)


@pytest.mark.parametrize(
    ("instance_id", "test_patch_applies", "patch_applies"),
    [("swt-demo__calc-16", False, True), ("swt-demo__calc-23", True, False)],
)
def test_stale_base_cases_conflict_where_the_demo_says(
    collected, demo: DemoPaths, tmp_path: Path, instance_id, test_patch_applies, patch_applies
) -> None:
    """The base branch moved on after the PR forked: one half no longer applies at base."""
    candidate = collected[0][instance_id]
    repo = demo.github_repo
    assert _applies(repo, candidate.base_commit, candidate.test_patch, tmp_path) is (
        test_patch_applies
    )
    assert _applies(repo, candidate.base_commit, candidate.patch, tmp_path) is patch_applies


def test_serve_runs_a_command_against_the_fixtures(demo: DemoPaths, tmp_path: Path) -> None:
    script = (
        "import os, sys, urllib.request, json; url = sys.argv[1]; "
        "data = json.load(urllib.request.urlopen(url + '/repos/swt-demo/calc/pulls/7')); "
        "print(data['title'], os.environ['GITHUB_TOKEN'])"
    )
    done = subprocess.run(
        [sys.executable, "-m", "recipes.demo.serve", str(demo.github_fixtures), "--",
         sys.executable, "-c", script, "{base_url}"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, env={**os.environ, "GITHUB_TOKEN": "x"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()[-1]
        == f"Average the two middle values in median() {LOOPBACK_TOKEN}"
    )
