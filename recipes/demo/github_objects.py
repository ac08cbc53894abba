"""GitHub REST objects (users, repositories, pulls, issues, comments) built as fixtures."""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "CANONICAL_API_URL",
    "WEB_URL",
    "issue_from_pull",
    "load_fixtures",
    "make_comment",
    "make_fixtures",
    "make_issue",
    "make_pull",
    "make_repo",
    "make_user",
    "split_repo",
]

#: API base URL used inside fixture objects; the replay server rewrites it to its own URL.
CANONICAL_API_URL = "https://api.github.com"
WEB_URL = "https://github.com"
_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)


def make_user(login: str = "octocat") -> dict[str, Any]:
    """Build a GitHub user object as embedded in other REST objects."""
    user_id = _stable_id("user", login)
    api = f"{CANONICAL_API_URL}/users/{login}"
    return {
        "login": login,
        "id": user_id,
        "node_id": f"U_{user_id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{WEB_URL}/{login}",
        "followers_url": f"{api}/followers",
        "repos_url": f"{api}/repos",
        "type": "User",
        "user_view_type": "public",
        "site_admin": False,
    }


def make_repo(full_name: str, *, default_branch: str = "main") -> dict[str, Any]:
    """Build a repository object for ``"owner/name"``."""
    owner, name = split_repo(full_name)
    repo_id = _stable_id("repo", full_name.lower())
    api = f"{CANONICAL_API_URL}/repos/{full_name}"
    return {
        "id": repo_id,
        "node_id": f"R_{repo_id}",
        "name": name,
        "full_name": full_name,
        "private": False,
        "owner": make_user(owner),
        "html_url": f"{WEB_URL}/{full_name}",
        "description": None,
        "fork": False,
        "url": api,
        "pulls_url": f"{api}/pulls{{/number}}",
        "issues_url": f"{api}/issues{{/number}}",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_url": f"git://github.com/{full_name}.git",
        "ssh_url": f"git@github.com:{full_name}.git",
        "clone_url": f"{WEB_URL}/{full_name}.git",
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "pushed_at": "2024-01-01T00:00:00Z",
        "language": "Python",
        "archived": False,
        "disabled": False,
        "visibility": "public",
        "default_branch": default_branch,
        "has_issues": True,
    }


def make_pull(
    repo: str,
    number: int,
    *,
    title: str = "",
    body: str | None = None,
    state: str | None = None,
    user: str = "octocat",
    created_at: str | datetime | None = None,
    updated_at: str | datetime | None = None,
    closed_at: str | datetime | None = None,
    merged_at: str | datetime | None = None,
    merge_commit_sha: str | None = None,
    base_ref: str = "main",
    base_sha: str | None = None,
    head_ref: str | None = None,
    head_sha: str | None = None,
    draft: bool = False,
    labels: Iterable[str] = (),
) -> dict[str, Any]:
    """Build a full pull request object (as ``GET /repos/{o}/{r}/pulls/{n}`` returns it).

    A pull with ``merged_at`` is merged and closed; dates default to
    ``2024-01-01T00:00:00Z`` plus ``number`` hours; SHAs default to stable fake values.
    """
    created = _iso(created_at) or _iso(_EPOCH + timedelta(hours=number))
    merged = _iso(merged_at)
    closed = _iso(closed_at) or merged
    state = state or ("closed" if closed else "open")
    repo_object = make_repo(repo)
    api = f"{CANONICAL_API_URL}/repos/{repo}"
    html = f"{WEB_URL}/{repo}/pull/{number}"
    pull_id = _stable_id("pull", repo.lower(), str(number))
    author = make_user(user)
    head_ref = head_ref or f"topic-{number}"
    return {
        "url": f"{api}/pulls/{number}",
        "id": pull_id,
        "node_id": f"PR_{pull_id}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{number}",
        "commits_url": f"{api}/pulls/{number}/commits",
        "review_comments_url": f"{api}/pulls/{number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{number}/comments",
        "statuses_url": f"{api}/statuses/{head_sha or _fake_sha(repo, number, 'head')}",
        "number": number,
        "state": state,
        "locked": False,
        "title": title,
        "user": author,
        "body": body,
        "labels": [_label(repo, name) for name in labels],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": created,
        "updated_at": _iso(updated_at) or max(d for d in (created, closed) if d),
        "closed_at": closed,
        "merged_at": merged,
        "merge_commit_sha": merge_commit_sha or _fake_sha(repo, number, "merge"),
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": _pull_part(repo_object, head_ref, head_sha or _fake_sha(repo, number, "head")),
        "base": _pull_part(repo_object, base_ref, base_sha or _fake_sha(repo, number, "base")),
        "_links": {
            "self": {"href": f"{api}/pulls/{number}"},
            "html": {"href": html},
            "issue": {"href": f"{api}/issues/{number}"},
            "comments": {"href": f"{api}/issues/{number}/comments"},
            "commits": {"href": f"{api}/pulls/{number}/commits"},
        },
        "author_association": "CONTRIBUTOR",
        "auto_merge": None,
        "draft": draft,
        "merged": merged is not None,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": make_user("maintainer") if merged else None,
        "comments": 0,
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": 1,
        "deletions": 0,
        "changed_files": 1,
    }


def make_issue(
    repo: str,
    number: int,
    *,
    title: str = "",
    body: str | None = None,
    state: str | None = None,
    user: str = "octocat",
    created_at: str | datetime | None = None,
    updated_at: str | datetime | None = None,
    closed_at: str | datetime | None = None,
    labels: Iterable[str] = (),
    comments: int = 0,
    pull_merged_at: str | datetime | None = None,
    is_pull: bool = False,
) -> dict[str, Any]:
    """Build an issue object; ``is_pull=True`` adds the ``pull_request`` key of a PR."""
    created = _iso(created_at) or _iso(_EPOCH + timedelta(hours=number))
    closed = _iso(closed_at)
    api = f"{CANONICAL_API_URL}/repos/{repo}"
    issue_id = _stable_id("issue", repo.lower(), str(number))
    kind = "pull" if is_pull else "issues"
    issue: dict[str, Any] = {
        "url": f"{api}/issues/{number}",
        "repository_url": api,
        "labels_url": f"{api}/issues/{number}/labels{{/name}}",
        "comments_url": f"{api}/issues/{number}/comments",
        "events_url": f"{api}/issues/{number}/events",
        "html_url": f"{WEB_URL}/{repo}/{kind}/{number}",
        "id": issue_id,
        "node_id": f"I_{issue_id}",
        "number": number,
        "title": title,
        "user": make_user(user),
        "labels": [_label(repo, name) for name in labels],
        "state": state or ("closed" if closed else "open"),
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": comments,
        "created_at": created,
        "updated_at": _iso(updated_at) or max(d for d in (created, closed) if d),
        "closed_at": closed,
        "author_association": "NONE",
        "active_lock_reason": None,
        "body": body,
        "timeline_url": f"{api}/issues/{number}/timeline",
        "performed_via_github_app": None,
        "state_reason": "completed" if closed else None,
    }
    if is_pull:
        issue["pull_request"] = _issue_pull_link(repo, number, _iso(pull_merged_at))
    return issue


def make_comment(
    repo: str,
    issue_number: int,
    comment_id: int,
    *,
    body: str = "",
    user: str = "octocat",
    created_at: str | datetime | None = None,
    updated_at: str | datetime | None = None,
) -> dict[str, Any]:
    """Build an issue comment object."""
    created = _iso(created_at) or _iso(_EPOCH + timedelta(minutes=comment_id))
    api = f"{CANONICAL_API_URL}/repos/{repo}"
    return {
        "url": f"{api}/issues/comments/{comment_id}",
        "html_url": f"{WEB_URL}/{repo}/issues/{issue_number}#issuecomment-{comment_id}",
        "issue_url": f"{api}/issues/{issue_number}",
        "id": comment_id,
        "node_id": f"IC_{comment_id}",
        "user": make_user(user),
        "created_at": created,
        "updated_at": _iso(updated_at) or created,
        "author_association": "NONE",
        "body": body,
        "performed_via_github_app": None,
    }


def make_fixtures(
    repo: str,
    *,
    pulls: Iterable[Mapping[str, Any]] = (),
    issues: Iterable[Mapping[str, Any]] = (),
    comments: Mapping[int, Sequence[Mapping[str, Any]]] | None = None,
    closing_issues: Mapping[int, Sequence[int | Mapping[str, Any]]] | None = None,
    repo_object: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the fixture mapping for one repository (merge several with ``|``).

    ``comments`` is keyed by issue (or pull) number, ``closing_issues`` by pull
    number; a closing issue is a number in ``repo`` or
    ``{"number": N, "repository": "owner/name"}``.
    """
    return {
        repo: {
            "repo": dict(repo_object) if repo_object else make_repo(repo),
            "pulls": [dict(p) for p in pulls],
            "issues": [dict(i) for i in issues],
            "comments": {str(k): [dict(c) for c in v] for k, v in (comments or {}).items()},
            "closing_issues": {str(k): list(v) for k, v in (closing_issues or {}).items()},
        }
    }


def load_fixtures(path: str | Path) -> dict[str, Any]:
    """Load a fixture mapping (``{"owner/name": {...}}``) from a JSON file."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: fixtures must be a JSON object keyed by 'owner/name'")
    return data


def split_repo(full_name: str) -> tuple[str, str]:
    """Split ``"owner/name"``."""
    owner, sep, name = full_name.partition("/")
    if not (owner and sep and name) or "/" in name:
        raise ValueError(f"repository must look like 'owner/name', got {full_name!r}")
    return owner, name


def _stable_id(*parts: str) -> int:
    """A positive id that is stable across runs (unlike ``hash``)."""
    return zlib.crc32("\0".join(parts).encode()) % 2_000_000_000 + 1


def _fake_sha(repo: str, number: int, role: str) -> str:
    """A stable fake 40-hex-digit SHA."""
    return hashlib.sha1(f"{repo}#{number}:{role}".encode()).hexdigest()


def _iso(value: str | datetime | None) -> str | None:
    """Format a date the way GitHub does (``2024-01-02T03:04:05Z``)."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _label(repo: str, name: str) -> dict[str, Any]:
    """Build a label object."""
    label_id = _stable_id("label", repo.lower(), name)
    return {
        "id": label_id,
        "node_id": f"LA_{label_id}",
        "url": f"{CANONICAL_API_URL}/repos/{repo}/labels/{name}",
        "name": name,
        "color": "ededed",
        "default": False,
        "description": None,
    }


def _pull_part(repo_object: dict[str, Any], ref: str, sha: str) -> dict[str, Any]:
    """Build the ``head``/``base`` part of a pull request."""
    owner = repo_object["owner"]
    return {
        "label": f"{owner['login']}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": owner,
        "repo": repo_object,
    }


def _issue_pull_link(repo: str, number: int, merged_at: str | None) -> dict[str, Any]:
    """Build the ``pull_request`` key of an issue that is a pull request."""
    html = f"{WEB_URL}/{repo}/pull/{number}"
    return {
        "url": f"{CANONICAL_API_URL}/repos/{repo}/pulls/{number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "merged_at": merged_at,
    }


def issue_from_pull(full_name: str, pull: Mapping[str, Any]) -> dict[str, Any]:
    """The issue view of a pull request, as ``GET /issues/{n}`` returns it."""
    issue = make_issue(
        full_name,
        int(pull["number"]),
        title=pull.get("title", ""),
        body=pull.get("body"),
        state=pull.get("state"),
        created_at=pull.get("created_at"),
        updated_at=pull.get("updated_at"),
        closed_at=pull.get("closed_at"),
        comments=int(pull.get("comments") or 0),
        pull_merged_at=pull.get("merged_at"),
        is_pull=True,
    )
    issue["user"] = pull.get("user", issue["user"])
    issue["labels"] = pull.get("labels", [])
    return issue
