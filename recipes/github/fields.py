"""Per-PR facts: the diff and commits from a local git mirror, issues and comments from the API."""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
from pathlib import Path
from typing import Any

from github import Github, GithubException, UnknownObjectException

from builder.core.gitutil import GitError, git_env
from recipes.github.client import GitHubClient
from recipes.github.listing import parse_time

__all__ = [
    "CLOSING_QUERY",
    "IssueFacts",
    "PullCommits",
    "closing_issue_numbers",
    "closing_issue_numbers_batch",
    "fetch_issue",
    "hints_before",
    "pull_commits",
]

CLOSING_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 50) {
        nodes { number repository { nameWithOwner } }
      }
    }
  }
}
"""


def _git_bytes(mirror: Path, *args: str) -> bytes:
    command = ["git", *args]
    completed = subprocess.run(command, cwd=mirror, capture_output=True, env=git_env())
    if completed.returncode != 0:
        stderr = completed.stderr.decode("utf-8", "replace")
        raise GitError(list(args), completed.returncode, stderr)
    return completed.stdout


@dataclasses.dataclass(frozen=True)
class PullCommits:
    """What git knows of a PR: its diff from the merge base, commit messages and first date."""

    diff: str
    messages: tuple[str, ...]
    first_commit_at: dt.datetime | None


def pull_commits(mirror: Path, base_sha: str, head_sha: str) -> PullCommits:
    """Diff ``merge-base(base, head)..head`` (as GitHub shows a PR) and the PR's own commits.

    The diff keeps its bytes: it is decoded with ``surrogateescape`` so that non-UTF-8
    content survives (and can be recognised by the caller).
    """
    raw = _git_bytes(
        mirror,
        "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv",
        "--find-renames", f"{base_sha}...{head_sha}", "--",
    )  # fmt: skip
    log = _git_bytes(mirror, "log", "--format=%aI%x00%B%x00", f"{base_sha}..{head_sha}", "--")
    fields = log.decode("utf-8", "replace").split("\x00")
    dates = [parse_time(d.strip()) for d in fields[0:-1:2]]
    messages = tuple(m.strip("\n") for m in fields[1::2])
    return PullCommits(
        diff=raw.decode("utf-8", "surrogateescape"),
        messages=messages,
        first_commit_at=min(dates) if dates else None,
    )


def closing_issue_numbers(client: GitHubClient, repo: str, number: int) -> list[int]:
    """GitHub's own closing references of a PR (GraphQL), restricted to ``repo``."""
    owner, name = repo.split("/")
    variables = {"owner": owner, "name": name, "number": number}

    def query(github: Github) -> dict[str, Any]:
        return github.requester.graphql_query(CLOSING_QUERY, variables)[1]

    data = client.call("graphql", query)
    return _same_repo_numbers(
        ((data.get("data") or {}).get("repository") or {}).get("pullRequest"), repo
    )


GRAPHQL_BATCH = 50
"""Pull requests asked about per GraphQL query (aliases ``pr<N>``)."""

_BATCH_QUERY = """
query($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
%s
  }
}
"""
_BATCH_FIELD = (
    "    pr%d: pullRequest(number: %d) { closingIssuesReferences(first: 50) "
    "{ nodes { number repository { nameWithOwner } } } }"
)


def _same_repo_numbers(pull: dict[str, Any] | None, repo: str) -> list[int]:
    nodes = ((pull or {}).get("closingIssuesReferences") or {}).get("nodes") or []
    return [
        int(node["number"])
        for node in nodes
        if str((node.get("repository") or {}).get("nameWithOwner", repo)).lower() == repo.lower()
    ]


def closing_issue_numbers_batch(
    client: GitHubClient, repo: str, numbers: list[int]
) -> dict[int, list[int]]:
    """GitHub's closing references of many PRs, ``GRAPHQL_BATCH`` per call.

    A batch GitHub answers with errors (e.g. a PR it cannot resolve) is left out of the
    result, so those PRs are asked about one by one with :func:`closing_issue_numbers`.
    """
    owner, name = repo.split("/")
    found: dict[int, list[int]] = {}
    for start in range(0, len(numbers), GRAPHQL_BATCH):
        chunk = numbers[start : start + GRAPHQL_BATCH]
        query = _BATCH_QUERY % "\n".join(_BATCH_FIELD % (n, n) for n in chunk)

        def ask(github: Github, query: str = query) -> dict[str, Any]:
            return github.requester.graphql_query(query, {"owner": owner, "name": name})[1]

        try:
            data = client.call("graphql", ask)
        except GithubException:
            continue
        pulls = (data.get("data") or {}).get("repository") or {}
        for number in chunk:
            if f"pr{number}" in pulls:
                found[number] = _same_repo_numbers(pulls[f"pr{number}"], repo)
    return found


@dataclasses.dataclass(frozen=True)
class IssueFacts:
    """One referenced number as the API answered: an issue, a pull request, or nothing."""

    number: int
    kind: str  # "issue", "pull_request" or "missing"
    title: str = ""
    body: str = ""
    created_at: str = ""
    comments: int = 0


def fetch_issue(client: GitHubClient, repo: str, number: int) -> IssueFacts:
    """``GET /repos/{repo}/issues/{number}``: one call; a 404 or 410 is ``missing``."""

    def get(github: Github) -> dict[str, Any]:
        return github.get_repo(repo).get_issue(number).raw_data

    try:
        data = client.call("issues", get)
    except UnknownObjectException:
        return IssueFacts(number, "missing")
    if data.get("pull_request"):
        return IssueFacts(number, "pull_request")
    return IssueFacts(
        number,
        "issue",
        title=data.get("title") or "",
        body=data.get("body") or "",
        created_at=data.get("created_at") or "",
        comments=int(data.get("comments") or 0),
    )


def hints_before(
    client: GitHubClient, repo: str, issue: IssueFacts, before: dt.datetime | None
) -> list[str]:
    """Bodies of the issue's comments created before ``before`` (the PR's first commit).

    Comments come oldest first, so paging stops at the first one that is too late; an issue
    without comments costs no call.
    """
    if issue.comments == 0 or before is None:
        return []
    bodies: list[str] = []
    page = 0
    while True:

        def get(github: Github, page: int = page) -> list[tuple[dt.datetime, str]]:
            comments = github.get_repo(repo).get_issue(issue.number).get_comments()
            return [(c.created_at, c.body or "") for c in comments.get_page(page)]

        items = client.call("comments", get)
        for created, body in items:
            if created.replace(tzinfo=created.tzinfo or dt.timezone.utc) >= before:
                return bodies
            bodies.append(body)
        if len(items) < 100:
            return bodies
        page += 1
