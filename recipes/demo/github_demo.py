"""The demo as GitHub would show it: a repository with PR head refs and fixture API JSON."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recipes.demo import generate as demo
from recipes.demo.generate import CASES, DEMO_REPO, Case, Edit, Replace, Write
from recipes.demo.github_objects import make_comment, make_fixtures, make_issue, make_pull

__all__ = ["GITHUB_EXPECTED", "RECIPE", "GitHubDemoPaths", "Pull", "generate_github_demo"]

RECIPE = Path(__file__).resolve().parents[1] / "repos" / "swt-demo__calc.toml"
"""The demo's recipe file (its ``since`` leaves out PR 5, which is older)."""


@dataclasses.dataclass(frozen=True)
class Pull:
    """One pull request of the demo's GitHub: its commits, text, links and expected outcome."""

    number: int
    expected: str
    fork: int  # HISTORY index the PR branch starts from (the merge base)
    base: int  # HISTORY index the API reports as base.sha
    created_at: str
    title: str
    body: str
    edits: tuple[Edit, ...] = ()
    commit_message: str = ""
    merged: bool = True
    issue: int | None = None  # the issue it is about (created before the PR)
    issue_title: str = ""
    issue_body: str = ""
    hints: tuple[str, ...] = ()  # issue comments before the PR's first commit
    late_comment: str = ""  # an issue comment after the first commit (not a hint)
    closing_issues: tuple[int, ...] = ()  # GitHub's own closing references (GraphQL)

    @property
    def instance_id(self) -> str:
        return f"{DEMO_REPO.replace('/', '__')}-{self.number}"


def _at(stamp: str, hours: float) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(hours=hours)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _case(number: int) -> Case:
    return next(case for case in CASES if case.number == number)


def _issue_parts(case: Case) -> tuple[str, str]:
    title, _, body = case.problem_statement.partition("\n\n")
    return title, body


def _from_case(number: int, title: str, body: str, issue: int, **extra: Any) -> Pull:
    """A PR carrying a demo case's edits, about an issue holding the case's problem statement."""
    case = _case(number)
    expected = extra.pop("expected", case.expected)
    issue_title, issue_body = _issue_parts(case)
    settings: dict[str, Any] = {
        "fork": case.base,
        "base": case.base,
        "edits": case.patch + case.test_patch,
        "hints": (case.hints_text,) if case.hints_text else (),
    }
    settings.update(extra)
    return Pull(
        number=number,
        expected=expected,
        created_at=case.created_at,
        title=title,
        body=body,
        issue=issue,
        issue_title=issue_title,
        issue_body=issue_body,
        **settings,
    )


_MEAN_AT_3 = "def mean(values):\n    return sum(values) / len(values)\n"

PULLS: tuple[Pull, ...] = (
    Pull(  # older than the recipe's since: listing stops before it
        5, "out_of_range", 0, 0, "2024-01-10T10:00:00Z", "Add a README badge", "Cosmetic.",
        edits=(Replace("README.md", "# calc\n", "# calc ![ci](badge.svg)\n"),),
    ),
    _from_case(
        7, "Average the two middle values in median()", "Fixes #6", 6,
        late_comment="Thanks, a fix is up in #7.",
    ),
    _from_case(10, "Parse percentages in parse_number", "closes: #9\n\nSmall change.", 9),
    _from_case(  # the base branch moved on and conflicts with the PR's test change
        16, "Keep integer powers exact", "Resolves swt-demo/calc#15", 15, fork=3, base=4,
        edits=_case(16).patch + (
            Replace(
                "tests/test_arith.py", demo._POWER_ASSERT,
                demo._POWER_ASSERT + "    assert isinstance(power(2, 3), int)\n",
            ),
        ),
    ),
    _from_case(  # linked only through GitHub's closing references (the sidebar)
        18, "Swap inverted clamp bounds", "Sliders can cross; see the linked issue.", 17,
        closing_issues=(17,),
    ),
    _from_case(  # linked from a commit message
        21, "Stop tokenize() from hanging on tabs", "Details in the commit message.", 20,
        commit_message="Skip all whitespace in tokenize\n\nFixes #20",
    ),
    _from_case(  # the base branch moved on and conflicts with the PR's code change
        23, "Raise ValueError for the mean of nothing",
        "Fixed https://github.com/swt-demo/calc/issues/22", 22, fork=3, base=3 + 1,
        edits=(
            Replace(
                "calc/stats.py", _MEAN_AT_3,
                "def mean(values):\n    if not values:\n"
                '        raise ValueError("mean requires at least one data point")\n'
                "    return sum(values) / len(values)\n",
            ),
        ) + _case(23).test_patch,
    ),
    _from_case(26, "Add percentile()", "FIXES #25", 25),
    _from_case(31, "Add summary()", "Resolves #30", 30),
    _from_case(  # #10 is a pull request, and the commented-out reference does not count
        33, "Add multimode()", "Closes #10 (follow-up)\n<!-- Fixes #32 -->", 32,
        expected="NO_LINKED_ISSUE",
    ),
    Pull(
        34, "NOT_MERGED", 6, 6, "2024-03-19T10:00:00Z", "Rewrite stats in numpy", "Fixes #32",
        merged=False, edits=(
            Replace("calc/stats.py", "from collections import Counter\n",
                    "from collections import Counter\n\nimport numpy\n"),
        ),
    ),
    Pull(
        35, "NO_TEST_CHANGE", 6, 6, "2024-03-20T10:00:00Z", "Fix a typo in the README",
        "Fixes #32", edits=(Replace("README.md", "dependency-free", "dependency free"),),
    ),
    Pull(
        37, "EMPTY_PROBLEM_STATEMENT", 6, 6, "2024-03-22T10:00:00Z", "Export the public names",
        "Fixes #36", issue=36, issue_title="Add __all__",
        edits=(
            Replace("calc/__init__.py", '__version__ = "0.1.0"\n',
                    '__all__ = ["__version__"]\n__version__ = "0.1.0"\n'),
            Write("tests/test_init.py", "import calc\n\n\ndef test_all():\n"
                  '    assert calc.__all__ == ["__version__"]\n'),
        ),
    ),
    Pull(
        38, "NO_PYTHON_CODE_CHANGE", 6, 6, "2024-03-23T10:00:00Z", "Require Python 3.9",
        "Fixes #32", edits=(
            Replace("pyproject.toml", '">=3.8"', '">=3.9"'),
            Write("tests/test_version.py", "import sys\n\n\ndef test_python():\n"
                  "    assert sys.version_info >= (3, 9)\n"),
        ),
    ),
)  # fmt: skip

GITHUB_EXPECTED: dict[str, str] = {
    pull.instance_id: pull.expected for pull in PULLS if pull.expected != "out_of_range"
}
"""Each demo PR's outcome through the GitHub path (PR 5 is outside the recipe's range)."""


@dataclasses.dataclass(frozen=True)
class GitHubDemoPaths:
    """The demo's GitHub: a bare repository with ``refs/pull/N/head`` and the API fixtures."""

    repo: Path
    fixtures: Path


def _pull_head(bare: Path, fork: str, pull: Pull) -> str:
    """Commit the PR's edits on top of ``fork`` and point ``refs/pull/N/head`` at it."""
    date = _at(pull.created_at, -1).replace("Z", "+0000")
    message = pull.commit_message or pull.title
    with tempfile.TemporaryDirectory(prefix="swt-demo-pr-") as scratch:
        worktree = Path(scratch) / "worktree"
        demo._git(bare, "worktree", "add", "--quiet", "--detach", str(worktree), fork)
        try:
            for edit in pull.edits:
                edit.apply(worktree)
            demo._git(worktree, "add", "--all")
            demo._git(worktree, "commit", "--quiet", "--message", message, date=date)
            sha = demo._git(worktree, "rev-parse", "HEAD").strip()
        finally:
            demo._git(bare, "worktree", "remove", "--force", str(worktree))
    demo._git(bare, "update-ref", f"refs/pull/{pull.number}/head", sha)
    return sha


def _fixture_objects(pull: Pull, shas: list[str], head: str) -> dict[str, Any]:
    merged_at = _at(pull.created_at, 26) if pull.merged else None
    closed_at = merged_at or _at(pull.created_at, 26)
    objects: dict[str, Any] = {
        "pull": make_pull(
            DEMO_REPO, pull.number, title=pull.title, body=pull.body, user="contributor",
            created_at=pull.created_at, closed_at=closed_at, merged_at=merged_at,
            base_sha=shas[pull.base], head_sha=head, head_ref=f"pr-{pull.number}",
        ),
        "issues": [],
        "comments": {},
    }  # fmt: skip
    if pull.issue is not None:
        comments = [
            make_comment(
                DEMO_REPO, pull.issue, pull.issue * 100 + index, body=text, user="maintainer",
                created_at=_at(pull.created_at, -24 + index),
            )
            for index, text in enumerate(pull.hints)
        ]  # fmt: skip
        if pull.late_comment:
            late = make_comment(
                DEMO_REPO, pull.issue, pull.issue * 100 + 99, body=pull.late_comment,
                created_at=_at(pull.created_at, 1),
            )  # fmt: skip
            comments.append(late)
        objects["issues"].append(
            make_issue(
                DEMO_REPO, pull.issue, title=pull.issue_title, body=pull.issue_body or None,
                user="reporter", created_at=_at(pull.created_at, -48), closed_at=merged_at,
                comments=len(comments),
            )
        )  # fmt: skip
        if comments:
            objects["comments"][pull.issue] = comments
    return objects


def generate_github_demo(out_dir: Path, repo: Path, shas: list[str]) -> GitHubDemoPaths:
    """(Re)create ``out_dir/calc.git`` (a bare clone of ``repo`` plus PR heads) and fixtures."""
    out_dir = Path(out_dir)
    paths = GitHubDemoPaths(repo=out_dir / "calc.git", fixtures=out_dir / "fixtures.json")
    if paths.repo.exists():
        shutil.rmtree(paths.repo)
    out_dir.mkdir(parents=True, exist_ok=True)
    demo._git(out_dir, "clone", "--quiet", "--bare", str(repo), str(paths.repo))
    pulls, issues, comments, closing = [], [], {}, {}
    for pull in PULLS:
        head = _pull_head(paths.repo, shas[pull.fork], pull)
        objects = _fixture_objects(pull, shas, head)
        pulls.append(objects["pull"])
        issues += objects["issues"]
        comments.update(objects["comments"])
        if pull.closing_issues:
            closing[pull.number] = list(pull.closing_issues)
    demo._git(paths.repo, "worktree", "prune")
    fixtures = make_fixtures(
        DEMO_REPO, pulls=pulls, issues=issues, comments=comments, closing_issues=closing
    )
    text = json.dumps(fixtures, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    paths.fixtures.write_bytes(text.encode("utf-8"))
    return paths
