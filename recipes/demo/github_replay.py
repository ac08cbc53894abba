"""Replay GitHub REST/GraphQL responses from fixture data on a loopback HTTP server."""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = [
    "CANONICAL_API_URL",
    "FAULT_KINDS",
    "Call",
    "FiredFault",
    "ReplayServer",
    "ServedRequest",
    "load_fixtures",
    "make_comment",
    "make_commit",
    "make_fixtures",
    "make_issue",
    "make_pull",
    "make_repo",
    "make_user",
]

#: API base URL used inside fixture objects; the server rewrites it to its own URL.
CANONICAL_API_URL = "https://api.github.com"
_WEB_URL = "https://github.com"

#: Fault kinds the server can inject.
FAULT_KINDS: tuple[str, ...] = ("rate_limit", "secondary", "bad_gateway", "drop")

_DEFAULT_PER_PAGE = 30
_MAX_PER_PAGE = 100
_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
_DOCS = "https://docs.github.com/rest"
_PRIMARY_MESSAGE = (
    "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, "
    "please include the request ID {request_id}."
)
_SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID "
    "{request_id}."
)
# Fields GitHub only sends for a single pull request, not in the pulls list.
_PULL_DETAIL_FIELDS = (
    "merged",
    "mergeable",
    "rebaseable",
    "mergeable_state",
    "merged_by",
    "comments",
    "review_comments",
    "maintainer_can_modify",
    "commits",
    "additions",
    "deletions",
    "changed_files",
)
_PULL_SORTS = ("created", "updated", "popularity", "long-running")

# ---------------------------------------------------------------------------
# records of what the server did


class Call(NamedTuple):
    """One request as served: method, path and query parameters (last value wins)."""

    method: str
    path: str
    query: dict[str, str]


class FiredFault(NamedTuple):
    """A fault the server served instead of a normal response."""

    index: int
    kind: str
    path: str


@dataclass(frozen=True)
class ServedRequest:
    """Everything recorded about one request; ``authorization`` is kept out of repr."""

    index: int
    method: str
    path: str
    query: dict[str, str]
    status: int | None
    fault: str | None
    authorization: str | None = field(repr=False)


# ---------------------------------------------------------------------------
# fixture builders


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
        "html_url": f"{_WEB_URL}/{login}",
        "followers_url": f"{api}/followers",
        "repos_url": f"{api}/repos",
        "type": "User",
        "user_view_type": "public",
        "site_admin": False,
    }


def make_repo(full_name: str, *, default_branch: str = "main") -> dict[str, Any]:
    """Build a repository object for ``"owner/name"``."""
    owner, name = _split_repo(full_name)
    repo_id = _stable_id("repo", full_name.lower())
    api = f"{CANONICAL_API_URL}/repos/{full_name}"
    return {
        "id": repo_id,
        "node_id": f"R_{repo_id}",
        "name": name,
        "full_name": full_name,
        "private": False,
        "owner": make_user(owner),
        "html_url": f"{_WEB_URL}/{full_name}",
        "description": None,
        "fork": False,
        "url": api,
        "pulls_url": f"{api}/pulls{{/number}}",
        "issues_url": f"{api}/issues{{/number}}",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_url": f"git://github.com/{full_name}.git",
        "ssh_url": f"git@github.com:{full_name}.git",
        "clone_url": f"{_WEB_URL}/{full_name}.git",
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
    html = f"{_WEB_URL}/{repo}/pull/{number}"
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
        "html_url": f"{_WEB_URL}/{repo}/{kind}/{number}",
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
        "html_url": f"{_WEB_URL}/{repo}/issues/{issue_number}#issuecomment-{comment_id}",
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


def make_commit(
    repo: str,
    sha: str | None = None,
    *,
    message: str = "",
    author: str = "octocat",
    date: str | datetime | None = None,
    parents: Sequence[str] = (),
) -> dict[str, Any]:
    """Build a commit object as listed by ``GET /repos/{o}/{r}/pulls/{n}/commits``."""
    sha = sha or hashlib.sha1(f"{repo}:{message}".encode()).hexdigest()
    when = _iso(date) or _iso(_EPOCH)
    api = f"{CANONICAL_API_URL}/repos/{repo}"
    signature = {"name": author, "email": f"{author}@users.noreply.github.com", "date": when}
    return {
        "sha": sha,
        "node_id": f"C_{sha[:12]}",
        "commit": {
            "author": signature,
            "committer": dict(signature),
            "message": message,
            "tree": {"sha": _fake_sha(repo, 0, sha), "url": f"{api}/git/trees/{sha}"},
            "url": f"{api}/git/commits/{sha}",
            "comment_count": 0,
            "verification": {"verified": False, "reason": "unsigned", "signature": None},
        },
        "url": f"{api}/commits/{sha}",
        "html_url": f"{_WEB_URL}/{repo}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "author": make_user(author),
        "committer": make_user(author),
        "parents": [
            {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{_WEB_URL}/{repo}/commit/{p}"}
            for p in parents
        ],
    }


def make_fixtures(
    repo: str,
    *,
    pulls: Iterable[Mapping[str, Any]] = (),
    issues: Iterable[Mapping[str, Any]] = (),
    comments: Mapping[int, Sequence[Mapping[str, Any]]] | None = None,
    commits: Mapping[int, Sequence[Mapping[str, Any]]] | None = None,
    closing_issues: Mapping[int, Sequence[int | Mapping[str, Any]]] | None = None,
    repo_object: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the fixture mapping for one repository (merge several with ``|``).

    ``comments`` is keyed by issue (or pull) number, ``commits`` and ``closing_issues``
    by pull number; a closing issue is a number in ``repo`` or
    ``{"number": N, "repository": "owner/name"}``.
    """
    return {
        repo: {
            "repo": dict(repo_object) if repo_object else make_repo(repo),
            "pulls": [dict(p) for p in pulls],
            "issues": [dict(i) for i in issues],
            "comments": {str(k): [dict(c) for c in v] for k, v in (comments or {}).items()},
            "commits": {str(k): [dict(c) for c in v] for k, v in (commits or {}).items()},
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


def _split_repo(full_name: str) -> tuple[str, str]:
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
    html = f"{_WEB_URL}/{repo}/pull/{number}"
    return {
        "url": f"{CANONICAL_API_URL}/repos/{repo}/pulls/{number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "merged_at": merged_at,
    }


# ---------------------------------------------------------------------------
# fixture store


@dataclass
class _RepoData:
    """One repository's fixtures, indexed by number."""

    full_name: str
    repo: dict[str, Any]
    pulls: dict[int, dict[str, Any]]
    issues: dict[int, dict[str, Any]]
    comments: dict[int, list[dict[str, Any]]]
    commits: dict[int, list[dict[str, Any]]]
    closing_issues: dict[int, list[int | dict[str, Any]]]


def _index_fixtures(fixtures: Mapping[str, Any]) -> dict[str, _RepoData]:
    """Index fixtures by lower-cased ``owner/name`` (GitHub paths are case-insensitive)."""
    store: dict[str, _RepoData] = {}
    for full_name, entry in fixtures.items():
        _split_repo(full_name)
        store[full_name.lower()] = _RepoData(
            full_name=full_name,
            repo=dict(entry.get("repo") or make_repo(full_name)),
            pulls={int(p["number"]): p for p in entry.get("pulls", ())},
            issues={int(i["number"]): i for i in entry.get("issues", ())},
            comments=_by_number(entry.get("comments")),
            commits=_by_number(entry.get("commits")),
            closing_issues=_by_number(entry.get("closing_issues")),
        )
    return store


def _by_number(mapping: Mapping[Any, list[Any]] | None) -> dict[int, list[Any]]:
    """Turn a mapping keyed by numbers (or their JSON strings) into one keyed by ints."""
    return {int(key): list(value) for key, value in (mapping or {}).items()}


# ---------------------------------------------------------------------------
# responses


@dataclass
class _Response:
    """A response about to be sent (``status=None`` means drop the connection)."""

    status: int | None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    fault: str | None = None
    counts: bool = True  # whether it uses up rate-limit budget


def _error(code: int, message: str, **extra: Any) -> _Response:
    """A GitHub-style JSON error."""
    return _Response(code, {"message": message, "documentation_url": _DOCS, **extra})


def _not_found() -> _Response:
    return _error(404, "Not Found", status="404")


def _invalid(field_name: str) -> _Response:
    error = {"field": field_name, "code": "invalid"}
    return _error(422, "Validation Failed", errors=[error], status="422")


@dataclass
class _Budget:
    """Rate-limit use of one token for one resource within the current window."""

    used: int
    reset: float  # epoch seconds; headers report it rounded up


# ---------------------------------------------------------------------------
# the server


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    replay: ReplayServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _HTTPServer

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._serve()

    def do_POST(self) -> None:  # noqa: N802
        self._serve()

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve()

    def do_PUT(self) -> None:  # noqa: N802
        self._serve()

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve()

    def version_string(self) -> str:
        return "GitHub.com"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay silent: tests should not print requests (or anything near a token)."""

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        response = self.server.replay._handle(
            self.command, self.path, self.headers.get("Authorization"), body
        )
        if response.status is None:
            self.close_connection = True
            return
        payload = self.server.replay._encode(response.body)
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class ReplayServer:
    """A GitHub API stand-in on ``127.0.0.1`` that PyGithub can talk to.

    ``fixtures`` maps ``"owner/name"`` to ``repo``, ``pulls``, ``issues``, ``comments``
    (per issue number), ``commits`` and ``closing_issues`` (per pull number); see
    :func:`make_fixtures`.  URLs under :data:`CANONICAL_API_URL` in fixture objects are
    served rewritten to :attr:`url`.

    GraphQL: ``closingIssuesReferences`` of one pull request, or of several in one query
    with aliases (``pr7: pullRequest(number: 7) {...}``).

    Faults: ``faults`` maps 1-based request ordinals to a kind from :data:`FAULT_KINDS`
    (e.g. ``{3: "rate_limit"}``); independently, each request gets a random fault with
    probability ``fault_rate`` drawn from ``random.Random(seed)`` (kinds from
    ``fault_kinds``), so a seed and a request sequence always give the same faults.  A
    scripted fault wins over a random one.  Faults do not use rate-limit budget.

    Rate limiting: every token (the ``Authorization`` header) has ``rate_limit`` requests
    per ``rate_limit_window`` seconds per resource (``core``, or ``graphql`` for
    ``POST /graphql``, as on GitHub); once spent, requests get the primary rate-limit 403
    until the window resets, recorded as fault ``"exhausted"``.  ``GET /rate_limit`` is
    free, as on GitHub.  Injected ``rate_limit`` faults report ``Remaining: 0`` and a reset
    ``reset_after`` seconds ahead without touching the budget; ``secondary`` faults carry
    ``Retry-After: retry_after`` (no header if ``retry_after`` is None).

    The server starts on construction; use it as a context manager or call :meth:`stop`.
    """

    def __init__(
        self,
        fixtures: Mapping[str, Any],
        *,
        faults: Mapping[int, str] | None = None,
        fault_rate: float = 0.0,
        seed: int = 0,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        secondary_status: int = 403,
        retry_after: int | None = 1,
        reset_after: int = 1,
        rate_limit: int = 5000,
        rate_limit_window: float = 3600,
    ) -> None:
        _check_fault_settings(faults or {}, fault_rate, fault_kinds, secondary_status)
        self._store = _index_fixtures(fixtures)
        self._faults = dict(faults or {})
        self._fault_rate = fault_rate
        self._fault_kinds = tuple(fault_kinds)
        self._random = random.Random(seed)
        self._secondary_status = secondary_status
        self._retry_after = retry_after
        self._reset_after = reset_after
        self._rate_limit = rate_limit
        self._window = rate_limit_window
        self._budgets: dict[tuple[str, str], _Budget] = {}
        self._lock = threading.Lock()
        self._served: list[ServedRequest] = []
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.replay = self
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="github-replay",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    @classmethod
    def from_json(cls, path: str | Path, **settings: Any) -> ReplayServer:
        """Start a server on fixtures loaded with :func:`load_fixtures`."""
        return cls(load_fixtures(path), **settings)

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ReplayServer(url={self.url!r}, served={len(self._served)})"

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def set_fixtures(self, fixtures: Mapping[str, Any]) -> None:
        """Serve other fixtures from now on (e.g. the same repository with newer PRs)."""
        store = _index_fixtures(fixtures)
        with self._lock:
            self._store = store

    @property
    def requests(self) -> list[ServedRequest]:
        """Every request received, in order, faults included."""
        with self._lock:
            return list(self._served)

    @property
    def calls(self) -> list[Call]:
        """``(method, path, query)`` of every request received, faults included."""
        return [Call(r.method, r.path, r.query) for r in self.requests]

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of every request, in order (do not print)."""
        return [r.authorization for r in self.requests]

    @property
    def faults_fired(self) -> list[FiredFault]:
        """The faults served, in order."""
        return [FiredFault(r.index, r.fault, r.path) for r in self.requests if r.fault]

    # -- request handling (called from handler threads) -------------------------------

    def _handle(self, method: str, target: str, auth: str | None, body: bytes) -> _Response:
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        with self._lock:
            index = len(self._served) + 1
            resource = "graphql" if parts.path == "/graphql" else "core"
            response = self._fault_response(index, auth, resource)
            if response is None:
                response = self._route(method, parts.path, query, body, auth)
                response = self._charge(response, auth, resource, index)
            self._served.append(
                ServedRequest(
                    index, method, parts.path, query, response.status, response.fault, auth
                )
            )
        response.headers.setdefault("X-GitHub-Request-Id", _request_id(index))
        return response

    def _fault_response(self, index: int, auth: str | None, resource: str) -> _Response | None:
        """Return the fault to serve for request ``index``, if any."""
        kind = self._faults.get(index)
        roll = self._random.random()
        if kind is None and roll < self._fault_rate:
            kind = self._random.choice(self._fault_kinds)
        if kind is None:
            return None
        budget = self._budget(auth, resource)
        makers: dict[str, Callable[[_Budget, str, int], _Response]] = {
            "rate_limit": self._primary_limit_fault,
            "secondary": self._secondary_fault,
            "bad_gateway": self._bad_gateway_fault,
            "drop": self._drop_fault,
        }
        response = makers[kind](budget, resource, index)
        response.fault = kind
        return response

    def _primary_limit_fault(self, budget: _Budget, resource: str, index: int) -> _Response:
        reset = int(time.time()) + self._reset_after
        return self._primary_limit(_Budget(self._rate_limit, reset), resource, index)

    def _primary_limit(self, budget: _Budget, resource: str, index: int) -> _Response:
        response = _error(403, _PRIMARY_MESSAGE.format(request_id=_request_id(index)))
        response.headers = self._rate_headers(budget, resource, remaining=0)
        return response

    def _secondary_fault(self, budget: _Budget, resource: str, index: int) -> _Response:
        message = _SECONDARY_MESSAGE.format(request_id=_request_id(index))
        response = _error(self._secondary_status, message)
        response.headers = self._rate_headers(budget, resource)
        if self._retry_after is not None:
            response.headers["Retry-After"] = str(self._retry_after)
        return response

    def _bad_gateway_fault(self, budget: _Budget, resource: str, index: int) -> _Response:
        response = _Response(502, {"message": "Server Error"})
        response.headers = self._rate_headers(budget, resource)
        return response

    def _drop_fault(self, budget: _Budget, resource: str, index: int) -> _Response:
        return _Response(None)

    def _charge(
        self, response: _Response, auth: str | None, resource: str, index: int
    ) -> _Response:
        """Use one unit of the token's budget, or refuse with a primary rate limit."""
        budget = self._budget(auth, resource)
        if not response.counts:
            response.headers = {**self._rate_headers(budget, resource), **response.headers}
            return response
        if budget.used >= self._rate_limit:
            refused = self._primary_limit(budget, resource, index)
            refused.fault = "exhausted"
            return refused
        budget.used += 1
        response.headers = {**self._rate_headers(budget, resource), **response.headers}
        return response

    def _budget(self, auth: str | None, resource: str) -> _Budget:
        """The current window's budget for this token and resource."""
        now = time.time()
        key = (auth or "", resource)
        budget = self._budgets.get(key)
        if budget is None or now >= budget.reset:
            budget = _Budget(0, now + self._window)
            self._budgets[key] = budget
        return budget

    def _rate_headers(
        self, budget: _Budget, resource: str, remaining: int | None = None
    ) -> dict[str, str]:
        left = max(self._rate_limit - budget.used, 0) if remaining is None else remaining
        return {
            "Content-Type": "application/json; charset=utf-8",
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-RateLimit-Limit": str(self._rate_limit),
            "X-RateLimit-Remaining": str(left),
            "X-RateLimit-Reset": str(math.ceil(budget.reset)),
            "X-RateLimit-Used": str(self._rate_limit - left),
            "X-RateLimit-Resource": resource,
        }

    def _encode(self, body: Any) -> bytes:
        """Serialise a body, pointing canonical API URLs at this server."""
        text = json.dumps(body, ensure_ascii=False)
        return text.replace(CANONICAL_API_URL, self.url).encode("utf-8")

    # -- routing ----------------------------------------------------------------------

    def _route(
        self, method: str, path: str, query: dict[str, str], body: bytes, auth: str | None
    ) -> _Response:
        if method == "POST" and path == "/graphql":
            return self._graphql(body, auth)
        if method != "GET":
            return _not_found()
        if path == "/rate_limit":
            return self._rate_limit_overview(auth)
        match = re.fullmatch(r"/repos/([^/]+)/([^/]+)((?:/[^/]+)*)", path)
        if match is None:
            return _not_found()
        repo = self._store.get(f"{match[1]}/{match[2]}".lower())
        if repo is None:
            return _not_found()
        return self._repo_route(repo, match[3], path, query)

    def _repo_route(
        self, repo: _RepoData, rest: str, path: str, query: dict[str, str]
    ) -> _Response:
        if rest == "":
            return _Response(200, repo.repo)
        if rest == "/pulls":
            return self._list_pulls(repo, path, query)
        match = re.fullmatch(r"/(pulls|issues)/([1-9][0-9]*)(/commits|/comments)?", rest)
        if match is None:
            return _not_found()
        kind, number, sub = match[1], int(match[2]), match[3]
        handlers: dict[tuple[str, str | None], Callable[[], _Response]] = {
            ("pulls", None): lambda: self._get_pull(repo, number),
            ("pulls", "/commits"): lambda: self._pull_commits(repo, number, path, query),
            ("issues", None): lambda: self._get_issue(repo, number),
            ("issues", "/comments"): lambda: self._issue_comments(repo, number, path, query),
        }
        handler = handlers.get((kind, sub))
        return handler() if handler else _not_found()

    def _list_pulls(self, repo: _RepoData, path: str, query: dict[str, str]) -> _Response:
        state = query.get("state", "open")
        sort = query.get("sort", "created")
        default_direction = "desc" if sort == "created" else "asc"
        direction = query.get("direction", default_direction)
        for name, value, allowed in (
            ("state", state, ("open", "closed", "all")),
            ("sort", sort, _PULL_SORTS),
            ("direction", direction, ("asc", "desc")),
        ):
            if value not in allowed:
                return _invalid(name)
        pulls = [
            p
            for p in repo.pulls.values()
            if state in ("all", p.get("state"))
            and query.get("base") in (None, p.get("base", {}).get("ref"))
        ]
        key = "updated_at" if sort == "updated" else "created_at"
        pulls.sort(key=lambda p: (p.get(key) or "", p["number"]), reverse=direction == "desc")
        listed = [{k: v for k, v in p.items() if k not in _PULL_DETAIL_FIELDS} for p in pulls]
        return self._page(listed, path, query)

    def _get_pull(self, repo: _RepoData, number: int) -> _Response:
        pull = repo.pulls.get(number)
        return _Response(200, pull) if pull is not None else _not_found()

    def _pull_commits(
        self, repo: _RepoData, number: int, path: str, query: dict[str, str]
    ) -> _Response:
        if number not in repo.pulls:
            return _not_found()
        return self._page(repo.commits.get(number, []), path, query)

    def _get_issue(self, repo: _RepoData, number: int) -> _Response:
        if number in repo.issues:
            return _Response(200, repo.issues[number])
        pull = repo.pulls.get(number)
        if pull is None:
            return _not_found()
        return _Response(200, _issue_from_pull(repo.full_name, pull))

    def _issue_comments(
        self, repo: _RepoData, number: int, path: str, query: dict[str, str]
    ) -> _Response:
        if number not in repo.issues and number not in repo.pulls:
            return _not_found()
        comments = repo.comments.get(number, [])
        if "since" in query:
            since = _parse_time(query["since"])
            if since is None:
                return _invalid("since")
            comments = [c for c in comments if _comment_time(c) >= since]
        return self._page(comments, path, query)

    def _page(self, items: list[Any], path: str, query: dict[str, str]) -> _Response:
        """Serve one page of ``items`` with GitHub-style ``Link`` headers."""
        per_page = min(_positive_int(query.get("per_page"), _DEFAULT_PER_PAGE), _MAX_PER_PAGE)
        page = _positive_int(query.get("page"), 1)
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        if page > 1:
            links.append((min(page - 1, last), "prev"))
        if page < last:
            links += [(page + 1, "next"), (last, "last")]
        if page > 1:
            links.append((1, "first"))
        headers = {}
        if links:
            headers["Link"] = ", ".join(
                f'<{self._page_url(path, query, n)}>; rel="{rel}"' for n, rel in links
            )
        return _Response(200, chunk, headers)

    def _page_url(self, path: str, query: dict[str, str], page: int) -> str:
        params = {**query, "page": str(page)}
        return f"{self.url}{path}?{urlencode(params)}"

    def _rate_limit_overview(self, auth: str | None) -> _Response:
        resources = {}
        for resource in ("core", "graphql", "search"):
            budget = self._budget(auth, resource)
            resources[resource] = {
                "limit": self._rate_limit,
                "used": budget.used,
                "remaining": max(self._rate_limit - budget.used, 0),
                "reset": math.ceil(budget.reset),
            }
        body = {"resources": resources, "rate": resources["core"]}
        return _Response(200, body, counts=False)

    def _graphql(self, body: bytes, auth: str | None) -> _Response:
        if not auth:
            return _error(401, "This endpoint requires you to be authenticated.")
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return _error(400, "Problems parsing JSON")
        query = str(request.get("query") or "")
        variables = request.get("variables") or {}
        if "closingIssuesReferences" not in query:
            return _Response(
                200, _graphql_error("replay server only answers closingIssuesReferences")
            )
        aliases = _ALIASED_PULL.findall(query)
        if aliases:
            owner, name, _ = _graphql_target(query, variables)
            if owner is None or name is None:
                return _Response(200, _graphql_error("could not find repository owner/name"))
            return _Response(200, self._aliased_answer(owner, name, aliases))
        owner, name, number = _graphql_target(query, variables)
        if owner is None or name is None or number is None:
            return _Response(200, _graphql_error("could not find repository owner/name/number"))
        return _Response(200, self._closing_issues_answer(owner, name, number))

    def _aliased_answer(
        self, owner: str, name: str, aliases: list[tuple[str, str]]
    ) -> dict[str, Any]:
        """Answer ``alias: pullRequest(number: N) {...}`` fields, several PRs in one query."""
        pulls: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        for alias, number in aliases:
            answer = self._closing_issues_answer(owner, name, int(number))
            if "errors" in answer:
                if answer["data"]["repository"] is None:
                    return answer
                pulls[alias] = None
                error = dict(answer["errors"][0], path=["repository", alias])
                errors.append(error)
            else:
                pulls[alias] = answer["data"]["repository"]["pullRequest"]
        result: dict[str, Any] = {"data": {"repository": pulls}}
        if errors:
            result["errors"] = errors
        return result

    def _closing_issues_answer(self, owner: str, name: str, number: int) -> dict[str, Any]:
        repo = self._store.get(f"{owner}/{name}".lower())
        if repo is None:
            message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
            return {"data": {"repository": None}, **_graphql_error(message, ["repository"])}
        if number not in repo.pulls:
            message = f"Could not resolve to a PullRequest with the number of {number}."
            path = ["repository", "pullRequest"]
            return {"data": {"repository": {"pullRequest": None}}, **_graphql_error(message, path)}
        nodes = [_closing_node(repo, ref) for ref in repo.closing_issues.get(number, [])]
        references = {
            "totalCount": len(nodes),
            "pageInfo": {"hasNextPage": False, "endCursor": None},
            "nodes": nodes,
        }
        pull = {"number": number, "closingIssuesReferences": references}
        return {"data": {"repository": {"pullRequest": pull}}}


def _check_fault_settings(
    faults: Mapping[int, str], rate: float, kinds: Sequence[str], secondary_status: int
) -> None:
    """Reject unknown fault kinds, bad ordinals, rates and statuses early."""
    unknown = {k for k in (*faults.values(), *kinds) if k not in FAULT_KINDS}
    if unknown:
        raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
    if any(not isinstance(i, int) or i < 1 for i in faults):
        raise ValueError("fault script keys are 1-based request ordinals")
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault_rate must be within [0, 1], got {rate}")
    if rate > 0 and not kinds:
        raise ValueError("fault_rate needs at least one fault kind")
    if secondary_status not in (403, 429):
        raise ValueError("secondary rate limits are served as 403 or 429")


def _request_id(index: int) -> str:
    """A GitHub-looking request id, derived from the request ordinal."""
    return f"REPLAY:{index:08X}"


def _positive_int(value: str | None, default: int) -> int:
    """Parse a positive integer query parameter, falling back to ``default``."""
    if value is None or not value.isdigit() or int(value) < 1:
        return default
    return int(value)


def _parse_time(value: str) -> datetime | None:
    """Parse an ISO-8601 timestamp (``Z`` or offset); naive times are UTC."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _comment_time(comment: Mapping[str, Any]) -> datetime:
    """When a comment was last updated (GitHub's ``since`` compares ``updated_at``)."""
    stamp = comment.get("updated_at") or comment.get("created_at") or ""
    return _parse_time(stamp) or datetime.min.replace(tzinfo=timezone.utc)


def _issue_from_pull(full_name: str, pull: Mapping[str, Any]) -> dict[str, Any]:
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


def _graphql_error(message: str, path: list[str] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"message": message}
    if path is not None:
        error.update(type="NOT_FOUND", path=path)
    return {"errors": [error]}


_ALIASED_PULL = re.compile(r"(\w+)\s*:\s*pullRequest\s*\(\s*number\s*:\s*(\d+)\s*\)")
"""``alias: pullRequest(number: N)``: a query asking about several pull requests at once."""


def _graphql_target(query: str, variables: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """Find (owner, name, pull number) in a GraphQL query, loosely.

    Arguments of ``repository(...)`` and ``pullRequest(...)`` are read as literals or
    ``$variables``; failing that, variables called owner / name|repo / number|pr are used.
    """
    repo_args = _graphql_arguments(query, "repository", variables)
    pull_args = _graphql_arguments(query, "pullRequest", variables)
    owner = repo_args.get("owner", variables.get("owner"))
    name = repo_args.get("name", variables.get("name", variables.get("repo")))
    if owner is None and isinstance(name, str) and "/" in name:
        owner, name = name.split("/", 1)
    number = pull_args.get("number")
    for key in ("number", "pr", "pull", "pull_number", "prNumber"):
        number = variables.get(key) if number is None else number
    try:
        number = int(number) if number is not None else None
    except (TypeError, ValueError):
        number = None
    return owner, name, number


def _graphql_arguments(query: str, field_name: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """Parse ``field(arg: value, ...)`` arguments, resolving ``$variables``."""
    match = re.search(rf"\b{field_name}\s*\(([^)]*)\)", query)
    if match is None:
        return {}
    arguments: dict[str, Any] = {}
    pattern = r'(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|\$\w+|-?\d+)'
    for name, raw in re.findall(pattern, match[1]):
        if raw.startswith("$"):
            arguments[name] = variables.get(raw[1:])
        elif raw.startswith('"'):
            arguments[name] = json.loads(raw)
        else:
            arguments[name] = int(raw)
    return arguments


def _closing_node(repo: _RepoData, ref: int | Mapping[str, Any]) -> dict[str, Any]:
    """A ``closingIssuesReferences`` node for a fixture reference."""
    if isinstance(ref, Mapping):
        number = int(ref["number"])
        full_name = str(ref.get("repository", repo.full_name))
    else:
        number, full_name = int(ref), repo.full_name
    issue = repo.issues.get(number, {}) if full_name.lower() == repo.full_name.lower() else {}
    return {
        "number": number,
        "title": issue.get("title", ""),
        "state": str(issue.get("state", "open")).upper(),
        "url": f"{_WEB_URL}/{full_name}/issues/{number}",
        "repository": {"nameWithOwner": full_name},
    }
