"""The demo as GitHub would show it: a repository with PR head refs and fixture API JSON."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recipes.demo.cases import DEMO_REPO, PULLS, Pull
from recipes.demo.github_objects import make_comment, make_fixtures, make_issue, make_pull
from recipes.demo.worktree import apply, git, scratch_worktree

__all__ = ["GITHUB_EXPECTED", "RECIPE", "GitHubDemoPaths", "generate_github_demo"]

RECIPE = Path(__file__).resolve().parents[1] / "repos" / "swt-demo__calc.toml"
"""The demo's recipe file (its ``since`` leaves out PR 5, which is older)."""

GITHUB_EXPECTED: dict[str, str] = {
    pull.instance_id: pull.expected for pull in PULLS if pull.expected != "out_of_range"
}
"""Each demo PR's outcome through the GitHub path (PR 5 is outside the recipe's range)."""


@dataclasses.dataclass(frozen=True)
class GitHubDemoPaths:
    """The demo's GitHub: a bare repository with ``refs/pull/N/head`` and the API fixtures."""

    repo: Path
    fixtures: Path


def _at(stamp: str, hours: float) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(hours=hours)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pull_head(bare: Path, fork: str, pull: Pull) -> str:
    """Commit the PR's diffs on top of ``fork`` and point ``refs/pull/N/head`` at it."""
    date = _at(pull.created_at, -1).replace("Z", "+0000")
    with scratch_worktree(bare, fork) as worktree:
        apply(worktree, pull.patch, pull.test_patch)
        git(worktree, "add", "--all")
        message = pull.commit_message or pull.title
        git(worktree, "commit", "--quiet", "--message", message, date=date)
        sha = git(worktree, "rev-parse", "HEAD").strip()
    git(bare, "update-ref", f"refs/pull/{pull.number}/head", sha)
    return sha


def _comments(pull: Pull) -> list[dict[str, Any]]:
    """The issue's comments: its hints a day before the PR, then any late comment."""
    issue = pull.issue
    comments = [
        make_comment(
            DEMO_REPO, issue.number, issue.number * 100 + index, body=text, user="maintainer",
            created_at=_at(pull.created_at, -24 + index),
        )
        for index, text in enumerate(issue.hints)
    ]  # fmt: skip
    if issue.late_comment:
        late = make_comment(
            DEMO_REPO, issue.number, issue.number * 100 + 99, body=issue.late_comment,
            created_at=_at(pull.created_at, 1),
        )  # fmt: skip
        comments.append(late)
    return comments


def _fixture_objects(pull: Pull, shas: list[str], head: str) -> dict[str, Any]:
    merged_at = _at(pull.created_at, 26) if pull.merged else None
    objects: dict[str, Any] = {
        "pull": make_pull(
            DEMO_REPO, pull.number, title=pull.title, body=pull.body, user="contributor",
            created_at=pull.created_at, closed_at=merged_at or _at(pull.created_at, 26),
            merged_at=merged_at, base_sha=shas[pull.base], head_sha=head,
            head_ref=f"pr-{pull.number}",
        ),
        "issues": [],
        "comments": {},
    }  # fmt: skip
    if pull.issue is not None:
        comments = _comments(pull)
        objects["issues"].append(
            make_issue(
                DEMO_REPO, pull.issue.number, title=pull.issue.title,
                body=pull.issue.body or None, user="reporter",
                created_at=_at(pull.created_at, -48), closed_at=merged_at,
                comments=len(comments),
            )
        )  # fmt: skip
        if comments:
            objects["comments"][pull.issue.number] = comments
    return objects


def generate_github_demo(out_dir: Path, repo: Path, shas: list[str]) -> GitHubDemoPaths:
    """(Re)create ``out_dir/calc.git`` (a bare clone of ``repo`` plus PR heads) and fixtures."""
    out_dir = Path(out_dir)
    paths = GitHubDemoPaths(repo=out_dir / "calc.git", fixtures=out_dir / "fixtures.json")
    if paths.repo.exists():
        shutil.rmtree(paths.repo)
    out_dir.mkdir(parents=True, exist_ok=True)
    git(out_dir, "clone", "--quiet", "--bare", str(repo), str(paths.repo))
    pulls, issues, comments, closing = [], [], {}, {}
    for pull in PULLS:
        head = _pull_head(paths.repo, shas[pull.fork_point], pull)
        objects = _fixture_objects(pull, shas, head)
        pulls.append(objects["pull"])
        issues += objects["issues"]
        comments.update(objects["comments"])
        if pull.closing_issues:
            closing[pull.number] = list(pull.closing_issues)
    git(paths.repo, "worktree", "prune")
    fixtures = make_fixtures(
        DEMO_REPO, pulls=pulls, issues=issues, comments=comments, closing_issues=closing
    )
    text = json.dumps(fixtures, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    paths.fixtures.write_bytes(text.encode("utf-8"))
    return paths
