"""Tests for recipes/github/collect.py: real git mirrors, real PyGithub, a loopback GitHub."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from builder.core.pipeline import RejectedLog
from builder.core.records import Candidate
from builder.core.store import ResultStore
from recipes.demo.github_replay import (
    FAULT_KINDS,
    ReplayServer,
    make_comment,
    make_fixtures,
    make_issue,
    make_pull,
)
from recipes.github import collect as collect_module
from recipes.github.client import GitHubClient, RetryPolicy
from recipes.github.collect import CollectStage, collect
from recipes.recipe import Recipe
from tests.support.git import GIT_ENV, GitRepo

REPO = "octo-org/octo-repo"
CODE = "def area(w, h):\n    return w * h\n"
TEST = "from pkg.calc import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"
POLICY = RetryPolicy(backoff_base_s=0.01, secondary_wait_s=0.01, max_attempts=10)
FIRST_COMMIT = "2024-01-01T00:00:00Z"  # GIT_ENV's commit date


class World:
    """A repository with ``refs/pull/N/head`` per PR and the GitHub fixtures describing them."""

    def __init__(self, root: Path) -> None:
        self.git = GitRepo(root / "repo")
        self.base = self.git.commit(
            {"pkg/calc.py": CODE, "tests/test_calc.py": TEST, "README.md": "# calc\n"}, "base"
        )
        self.pulls: list[dict[str, Any]] = []
        self.issues: list[dict[str, Any]] = []
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.closing: dict[int, list[int]] = {}

    def pull(
        self,
        number: int,
        files: dict[str, str | bytes | None],
        body: str = "",
        *,
        message: str = "change",
        merged: bool = True,
        closing: tuple[int, ...] = (),
        mode: str | None = None,
    ) -> None:
        self.git.git("checkout", "-q", "-B", f"pr-{number}", self.base)
        for name, content in files.items():
            target = self.git.path / name
            if content is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                data = content if isinstance(content, bytes) else content.encode()
                target.write_bytes(data)
        if mode:
            os.chmod(self.git.path / mode, 0o755)
        self.git.git("add", "-A")
        self.git.git("commit", "-q", "-m", message)
        head = self.git.git("rev-parse", "HEAD").strip()
        self.git.git("update-ref", f"refs/pull/{number}/head", head)
        self.git.git("checkout", "-q", "main")
        created = f"2024-01-02T{number % 24:02d}:00:00Z"
        closed = f"2024-01-03T{number % 24:02d}:00:00Z"
        self.pulls.append(
            make_pull(
                REPO, number, title=f"PR {number}", body=body, created_at=created,
                closed_at=closed, merged_at=closed if merged else None,
                base_sha=self.base, head_sha=head,
            )
        )  # fmt: skip
        if closing:
            self.closing[number] = list(closing)

    def issue(self, number: int, body: str | None = "It is broken.", comments=()) -> None:
        self.issues.append(
            make_issue(
                REPO, number, title=f"Issue {number}", body=body,
                created_at="2023-12-20T00:00:00Z", comments=len(comments),
            )
        )  # fmt: skip
        if comments:
            self.comments[number] = [
                make_comment(REPO, number, number * 100 + i, body=text, created_at=when)
                for i, (when, text) in enumerate(comments)
            ]

    def fixtures(self) -> dict[str, Any]:
        return make_fixtures(
            REPO, pulls=self.pulls, issues=self.issues, comments=self.comments,
            closing_issues=self.closing,
        )  # fmt: skip


def _fix(tag: str) -> dict[str, str]:
    """A code change plus a test change."""
    return {
        "pkg/calc.py": CODE + f"\n\ndef {tag}():\n    return 1\n",
        "tests/test_calc.py": TEST + f"\n\ndef test_{tag}():\n    assert True\n",
    }


class Run:
    """One collect run's results."""

    def __init__(self, server, client, run, rejected, work: Path) -> None:
        self.server, self.client, self.run, self.work = server, client, run, work
        self.rows = [json.loads(row) for row in rejected._rows.get("collect", [])]

    @property
    def kept(self) -> dict[int, Candidate]:
        return {c.pull_number: c for c in self.run.candidates}

    @property
    def dropped(self) -> dict[int, tuple[str, dict[str, str]]]:
        return {int(r["record"]["number"]): (r["reason"], r["evidence"]) for r in self.rows}


def _collect(
    world_fixtures: dict[str, Any],
    repo_path: Path,
    work: Path,
    recipe: Recipe | None = None,
    tokens: tuple[str, ...] = ("token-a",),
    **server_settings: Any,
) -> Run:
    with ReplayServer(world_fixtures, **server_settings) as server:
        client = GitHubClient(server.url, list(tokens), POLICY)
        rejected = RejectedLog()
        run = collect(
            [recipe or Recipe(repo=REPO)], client, work_dir=work, state_dir=work / "state",
            repos={REPO: str(repo_path)}, store=ResultStore(work / "store"),
            rejected=rejected, echo=lambda _: None,
        )  # fmt: skip
        return Run(server, client, run, rejected, work)


@pytest.fixture(scope="module")
def linking(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Run]:
    world = World(tmp_path_factory.mktemp("linking"))
    for number in (1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21):
        world.issue(number)
    world.pull(2, _fix("a"), "Fixes #1")
    world.pull(4, _fix("b"), "This closes: #3.")
    world.pull(6, _fix("c"), "RESOLVED octo-org/Octo-Repo#5")
    world.pull(8, _fix("d"), "fixed https://github.com/octo-org/octo-repo/issues/7")
    world.pull(10, _fix("e"), "No keyword here.", message="Tidy\n\nResolves #9")
    world.pull(12, _fix("f"), "Linked in the sidebar.", closing=(11,))
    world.pull(14, _fix("g"), "<!-- fixes #13 -->\nFixes other-org/other#13")
    world.pull(16, _fix("h"), "Fixes #2 (a pull request) and fixes #999 (nothing)")
    world.pull(18, _fix("i"), "fixes #19, fixes #17")
    world.pull(
        20,
        _fix("j"),
        "`Fixes #21` in code, and see https://github.com/octo-org/octo-repo/issues/21",
    )
    run = _collect(world.fixtures(), world.git.path, tmp_path_factory.mktemp("linking-work"))
    return world, run


@pytest.mark.parametrize(
    ("pull", "issues"),
    [(2, (1,)), (4, (3,)), (6, (5,)), (8, (7,)), (10, (9,)), (12, (11,)), (18, (17, 19))],
    ids=["hash", "colon", "owner-repo", "url", "commit-message", "graphql", "two"],
)
def test_each_linking_form(linking, pull: int, issues: tuple[int, ...]) -> None:
    _, run = linking
    assert run.kept[pull].issue_numbers == issues


def test_what_does_not_link(linking) -> None:
    _, run = linking
    assert run.dropped[14] == ("no_linked_issue", {"pull": "14", "searched": (
        "title, body, 1 commit message(s), closingIssuesReferences")})  # fmt: skip
    assert run.dropped[16][1]["references"] == "#2 (pull request), #999 (missing)"
    assert run.dropped[20][0] == "no_linked_issue"
    assert set(run.kept) | set(run.dropped) == set(range(2, 21, 2))


def test_linking_api_use_is_batched(linking) -> None:
    _, run = linking
    graphql = [c for c in run.server.calls if c.path == "/graphql"]
    assert len(graphql) == 1  # one aliased query for all ten PRs
    issue_paths = sorted(c.path for c in run.server.calls if "/issues/" in c.path)
    expected = [1, 2, 3, 5, 7, 9, 11, 17, 19, 999]
    assert issue_paths == sorted(f"/repos/{REPO}/issues/{n}" for n in expected)
    assert run.client.total_calls == len(run.server.calls) == 1 + 1 + len(expected)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Run]:
    world = World(tmp_path_factory.mktemp("shapes"))
    for number in range(1, 40, 2):
        world.issue(number)
    world.issue(41, body="   ")
    world.issue(43, comments=[
        ("2023-12-21T00:00:00Z", "Try the other branch."),
        ("2023-12-31T23:59:59Z", "Still broken for me."),
        (FIRST_COMMIT, "Fixed in the PR."),
        ("2024-01-05T00:00:00Z", "Thanks!"),
    ])  # fmt: skip
    world.pull(2, _fix("a"), "Fixes #1", merged=False)
    world.pull(4, {"pkg/calc.py": CODE + "# more\n"}, "Fixes #3")
    world.pull(6, {"tests/test_calc.py": TEST + "# more\n"}, "Fixes #5")
    world.pull(8, {"setup.cfg": "[x]\n", "tests/test_calc.py": TEST + "# x\n"}, "Fixes #7")
    many = {f"pkg/m{i}.py": "x = 1\n" for i in range(4)} | {"tests/test_m.py": "x = 1\n"}
    world.pull(10, many, "Fixes #9")
    world.pull(12, {"pkg/logo.png": b"\x89PNG\x00\x01", **_fix("b")}, "Fixes #11")
    world.pull(14, {"tests/data/blob.bin": b"\x00\x01\x02", **_fix("c")}, "Fixes #13")
    renamed = {"pkg/calc.py": None, "pkg/geometry.py": CODE}
    world.pull(16, {**renamed, "tests/test_calc.py": TEST.replace("calc", "geometry")}, "Fixes #15")
    world.pull(18, _fix("d"), "Fixes #17", mode="pkg/calc.py")
    touched_test = {"tests/test_calc.py": TEST + "#\n"}
    world.pull(20, {"pkg/calc.py": CODE + "# caf\xe9\n", **touched_test}, "Fixes #19")
    world.pull(22, {"pkg/calc.py": CODE.encode() + b"# caf\xe9\n", **touched_test}, "Fixes #21")
    world.pull(24, _fix("e"), "Fixes #41")
    world.pull(26, _fix("f"), "Fixes #43")
    run = _collect(
        world.fixtures(), world.git.path, tmp_path_factory.mktemp("shapes-work"),
        Recipe.model_validate({"repo": REPO, "version": "1.2", "limits": {"max_files": 4}}),
    )  # fmt: skip
    return world, run


@pytest.mark.parametrize(
    ("pull", "reason", "evidence"),
    [
        (2, "not_merged", {"state": "closed"}),
        (4, "no_test_change", {"files": "pkg/calc.py"}),
        (6, "no_code_change", {"files": "tests/test_calc.py"}),
        (8, "no_python_code_change", {"files": "setup.cfg"}),
        (10, "too_many_files", {"files": "5", "limit": "4"}),
        (12, "binary_code_change", {"files": "pkg/logo.png"}),
        (22, "diff_not_utf8", {"files": "pkg/calc.py"}),
        (24, "empty_problem_statement", {"issues": "#41"}),
    ],
)
def test_named_drops_with_evidence(shapes, pull: int, reason: str, evidence: dict) -> None:
    _, run = shapes
    assert run.dropped[pull] == (reason, {"pull": str(pull), **evidence})


def test_cheap_drops_cost_no_api_call(shapes) -> None:
    _, run = shapes
    asked = {int(c.path.split("/")[5]) for c in run.server.calls if "/issues/" in c.path}
    assert asked.isdisjoint({1, 3, 5, 7, 9, 11, 21})
    assert sorted(run.kept) == [14, 16, 18, 20, 26]


def _applies(repo: Path, commit: str, patch: str, tmp_path: Path) -> bool:
    tree = tmp_path / f"tree-{abs(hash(patch))}"
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), commit], cwd=repo,
                   env=env, check=True, capture_output=True)  # fmt: skip
    try:
        done = subprocess.run(["git", "apply", "--check", "-"], cwd=tree, input=patch.encode(),
                              env=env, capture_output=True)  # fmt: skip
        return done.returncode == 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo, env=env)


def test_renames_binary_tests_and_mode_changes_split_and_apply(shapes, tmp_path) -> None:
    world, run = shapes
    binary, renamed, mode = run.kept[14], run.kept[16], run.kept[18]
    assert "GIT binary patch" in binary.test_patch and "tests/data/blob.bin" in binary.test_patch
    assert "rename from pkg/calc.py\nrename to pkg/geometry.py" in renamed.patch
    assert "old mode 100644\nnew mode 100755" in mode.patch
    for candidate in (binary, renamed, mode, run.kept[20]):
        assert "tests/" not in candidate.patch and "pkg/" not in candidate.test_patch
        assert _applies(world.git.path, candidate.base_commit, candidate.test_patch, tmp_path)
        assert _applies(world.git.path, candidate.base_commit, candidate.patch, tmp_path)
    assert "caf\xe9" in run.kept[20].patch


def test_candidate_fields(shapes) -> None:
    world, run = shapes
    candidate = run.kept[26]
    assert candidate.instance_id == "octo-org__octo-repo-26"
    assert candidate.repo == REPO and candidate.base_commit == world.base
    assert candidate.problem_statement == "Issue 43\nIt is broken.\n"
    assert candidate.hints_text == "Try the other branch.\nStill broken for me."
    assert candidate.created_at == "2024-01-02T02:00:00Z"
    assert candidate.merged_at == "2024-01-03T02:00:00Z"
    assert candidate.issue_numbers == (43,)
    assert candidate.issue_created_at == ("2023-12-20T00:00:00Z",)
    assert candidate.pull_number == 26 and candidate.version == "1.2"
    assert candidate.source == "github" and candidate.environment_setup_commit == ""
    assert candidate.patch.startswith("diff --git a/pkg/calc.py b/pkg/calc.py\n")
    assert candidate.test_patch.startswith("diff --git a/tests/test_calc.py b/tests/test_calc.py\n")


def test_rerun_reuses_every_stored_result_and_lists_one_page(shapes, tmp_path) -> None:
    world, first = shapes
    recipe = Recipe.model_validate({"repo": REPO, "version": "1.2", "limits": {"max_files": 4}})
    with ReplayServer(world.fixtures()) as server:
        runs = []
        for _ in range(2):
            client = GitHubClient(server.url, ["t"], POLICY)
            result = collect(
                [recipe], client, work_dir=tmp_path, state_dir=tmp_path / "state",
                repos={REPO: str(world.git.path)}, store=ResultStore(tmp_path / "store"),
                rejected=RejectedLog(), echo=lambda _: None,
            )  # fmt: skip
            runs.append((result, client.total_calls))
    (cold, cold_calls), (warm, warm_calls) = runs
    assert cold.stats.cached == 0 and warm.stats.cached == warm.stats.seen == 13
    assert warm_calls == 1 and cold_calls == 1 + 1 + 6 + 1  # list, graphql, issues, comments
    assert warm.listings[REPO].incremental and not cold.listings[REPO].incremental
    dumps = [c.model_dump() for c in first.run.candidates]
    assert [c.model_dump() for c in warm.candidates] == [c.model_dump() for c in cold.candidates]
    assert [c.model_dump() for c in cold.candidates] == dumps


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory):
    from recipes.demo.synthetic import build_world

    return build_world(tmp_path_factory.mktemp("synthetic"), 60)


@pytest.mark.slow
def test_crashed_collect_resumes_without_redoing_finished_prs(synthetic, tmp_path, monkeypatch):
    from recipes.demo.synthetic import expected_outcome

    original = CollectStage.process
    done: list[int] = []

    def crash_after_ten(self, record):
        if len(done) == 10:
            raise KeyboardInterrupt("killed")
        done.append(record.number)
        return original(self, record)

    fixtures = synthetic.fixtures
    with ReplayServer(fixtures) as server:

        def run_once() -> Any:
            client = GitHubClient(server.url, ["t"], POLICY)
            return collect(
                [Recipe(repo=synthetic.repo)], client, work_dir=tmp_path,
                state_dir=tmp_path / "state", repos={synthetic.repo: str(synthetic.mirror)},
                store=ResultStore(tmp_path / "store"), rejected=RejectedLog(),
                echo=lambda _: None,
            ), client  # fmt: skip

        monkeypatch.setattr(CollectStage, "process", crash_after_ten)
        with pytest.raises(KeyboardInterrupt):
            run_once()
        assert not (tmp_path / "state").exists()  # the state waits for every PR's result
        monkeypatch.setattr(CollectStage, "process", original)
        processed: list[int] = []

        def counting(self, record):
            processed.append(record.number)
            return original(self, record)

        monkeypatch.setattr(CollectStage, "process", counting)
        resumed, _ = run_once()
    assert resumed.stats.cached == 10 and resumed.stats.seen == 60
    assert set(processed).isdisjoint(done) and len(processed) == 50
    kept = {c.instance_id for c in resumed.candidates}
    assert kept == {synthetic.instance_id(i) for i in range(60) if expected_outcome(i) == "kept"}


@pytest.mark.slow
def test_ten_percent_faults_give_exactly_the_fault_free_candidates(synthetic, tmp_path) -> None:
    repos = {synthetic.repo: str(synthetic.mirror)}

    def run(work: Path, **faults: Any):
        with ReplayServer(synthetic.fixtures, **faults) as server:
            client = GitHubClient(server.url, ["token-a", "token-b"], POLICY)
            result = collect(
                [Recipe(repo=synthetic.repo)], client, work_dir=work, state_dir=work / "state",
                repos=repos, store=ResultStore(work / "store"), rejected=RejectedLog(),
                echo=lambda _: None,
            )  # fmt: skip
            return result, server.faults_fired

    clean, none = run(tmp_path / "clean")
    faulty, fired = run(tmp_path / "faulty", fault_rate=0.1, seed=7, reset_after=1)
    assert none == []
    assert len(fired) >= 5 and {f.kind for f in fired} == set(FAULT_KINDS)
    assert [c.model_dump() for c in faulty.candidates] == [c.model_dump() for c in clean.candidates]
    assert faulty.stats.to_dict() == clean.stats.to_dict()
    assert len(clean.candidates) == sum(1 for i in range(60) if i % 20 not in range(12, 19))


@pytest.mark.slow
def test_tokens_are_never_printed_logged_or_stored(
    synthetic, tmp_path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    secret = "ghp_COLLECTSECRET0123456789abcdef"
    caplog.set_level(logging.DEBUG)
    with ReplayServer(synthetic.fixtures, faults={2: "rate_limit", 5: "bad_gateway"}) as server:
        client = GitHubClient(server.url, [secret], POLICY)
        result = collect(
            [Recipe(repo=synthetic.repo)], client, work_dir=tmp_path, state_dir=tmp_path / "state",
            repos={synthetic.repo: str(synthetic.mirror)}, store=ResultStore(tmp_path / "store"),
            rejected=RejectedLog(),
        )  # fmt: skip
        assert set(server.authorizations) == {f"token {secret}"}
    assert result.candidates
    captured = capsys.readouterr()
    assert "API calls" in captured.out
    for text in (captured.out, captured.err, caplog.text, repr(client), client.summary()):
        assert secret not in text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def test_module_exports() -> None:
    assert collect_module.STAGE == "collect" and collect_module.SOURCE_NAME == "github"


def test_missing_commits_and_unparsable_diffs_are_named_drops(tmp_path, monkeypatch) -> None:
    world = World(tmp_path / "w")
    world.issue(1)
    world.pull(2, _fix("a"), "Fixes #1")
    world.pull(4, _fix("b"), "Fixes #1")
    world.pulls[0]["head"]["sha"] = "f" * 40  # a head the mirror does not have
    original = collect_module.pull_commits

    def garbled(mirror, base, head):
        facts = original(mirror, base, head)
        return dataclasses.replace(facts, diff="diff --git a/x b/x\nthis is not a hunk\n")

    monkeypatch.setattr(collect_module, "pull_commits", garbled)
    run = _collect(world.fixtures(), world.git.path, tmp_path / "work")
    reason, evidence = run.dropped[2]
    assert reason == "commits_unavailable" and "f" * 40 in evidence["error"]
    reason, evidence = run.dropped[4]
    assert reason == "diff_unparsable" and "unexpected line" in evidence["error"]
    assert run.run.candidates == []


def test_a_commit_that_cannot_be_fetched_is_an_infra_error_tried_again(tmp_path) -> None:
    """The mirror's origin out of reach when a PR's head must be fetched: a fault of the
    machine (not stored), so the next run, with the origin back, judges the PR."""
    world = World(tmp_path / "w")
    world.issue(1)
    world.pull(2, _fix("a"), "Fixes #1")
    first = _collect(world.fixtures(), world.git.path, tmp_path / "work")
    assert set(first.kept) == {2}
    world.pull(4, _fix("b"), "Fixes #1")  # after the mirror was cloned: it must be fetched
    away = world.git.path.rename(tmp_path / "w" / "away")  # the origin unreachable
    offline = _collect(world.fixtures(), world.git.path, tmp_path / "work")
    reason, evidence = offline.dropped[4]
    assert reason == "infra_error" and evidence["fault"] == "repository", evidence
    assert "fetch" in evidence["error"], evidence
    assert offline.run.stats.cached == 1  # PR 2 from the store; PR 4 not stored
    away.rename(world.git.path)
    again = _collect(world.fixtures(), world.git.path, tmp_path / "work")
    assert set(again.kept) == {2, 4} and again.dropped == {}
    assert again.run.stats.cached == 1  # PR 4 judged anew, now that its head could be fetched


def test_cli_collect_without_recipes_is_a_usage_error(tmp_path, capsys) -> None:
    from builder.cli import main

    assert main(["collect", "--work-dir", str(tmp_path), "--no-progress"]) == 2
    assert "needs source.recipes" in capsys.readouterr().err
