"""The demo's repository history and its cases as SWE-bench-format records (deterministic)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from recipes.demo.cases import DATA, DEMO_REPO, HISTORY, PULLS, VERSION, Pull, copy_tree
from recipes.demo.worktree import apply, git, scratch_worktree

__all__ = ["DEMO_REPO", "EXPECTED", "VERSION", "DemoPaths", "write_repo_and_records"]

EXPECTED: dict[str, str] = {pull.instance_id: pull.record for pull in PULLS if pull.record}
"""Each SWE-bench-format record's outcome through validation (or the source's drop)."""


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo (`recipes.demo.make`) put its repository, records and GitHub fixtures."""

    repo: Path
    records: Path
    github_repo: Path
    github_fixtures: Path


def _build_history(repo: Path) -> list[str]:
    """Create the repository and commit :data:`HISTORY` on ``main``; return the commit SHAs."""
    copy_tree(DATA / "repo", repo)
    git(repo, "init", "--quiet")
    apply(repo, *(commit.diff for commit in reversed(HISTORY)), reverse=True)
    shas = []
    for commit in HISTORY:
        apply(repo, commit.diff)
        git(repo, "add", "--all")
        git(repo, "commit", "--quiet", "--message", commit.message, date=commit.date)
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    return shas


def _diff_at(repo: Path, commit: str, diff: str) -> str:
    """``diff`` as git writes it (full index) once applied in a worktree detached at ``commit``."""
    with scratch_worktree(repo, commit) as worktree:
        apply(worktree, diff)
        git(worktree, "add", "--intent-to-add", "--all")
        return git(worktree, "diff", "--no-color", "--no-ext-diff", "--no-renames", "--full-index")


def _record(repo: Path, pull: Pull, shas: list[str]) -> dict[str, str]:
    """The SWE-bench-format record of ``pull``; a malformed one lacks ``base_commit``."""
    fork = shas[pull.fork_point]
    record = {
        "repo": DEMO_REPO,
        "instance_id": pull.instance_id,
        "base_commit": shas[pull.base],
        "patch": _diff_at(repo, fork, pull.patch),
        "test_patch": _diff_at(repo, fork, pull.test_patch),
        "problem_statement": pull.problem_statement,
        "hints_text": "\n".join(pull.issue.hints) if pull.issue else "",
        "created_at": pull.created_at,
        "version": VERSION,
        "environment_setup_commit": shas[-1],
        "FAIL_TO_PASS": json.dumps(list(pull.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(list(pull.pass_to_pass)),
    }
    if pull.record == "MALFORMED_RECORD":
        del record["base_commit"]
    return record


def write_repo_and_records(out_dir: Path) -> tuple[DemoPaths, list[str]]:
    """(Re)create ``out_dir/repo`` and ``records.jsonl``; the paths and the history's commits."""
    out_dir = Path(out_dir).resolve()
    paths = DemoPaths(
        repo=out_dir / "repo",
        records=out_dir / "records.jsonl",
        github_repo=out_dir / "github" / "calc.git",
        github_fixtures=out_dir / "github" / "fixtures.json",
    )
    if paths.repo.exists():
        shutil.rmtree(paths.repo)
    paths.records.unlink(missing_ok=True)
    shas = _build_history(paths.repo)
    lines = [
        json.dumps(_record(paths.repo, pull, shas), ensure_ascii=False) + "\n"
        for pull in PULLS
        if pull.record
    ]
    paths.records.write_bytes("".join(lines).encode("utf-8"))
    return paths, shas
