"""Replay GitHub REST/GraphQL responses from fixture data on a loopback HTTP server."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode

from recipes.demo.github_graphql import answer_graphql
from recipes.demo.github_limits import FAULT_KINDS, Limits, request_id
from recipes.demo.github_objects import (
    CANONICAL_API_URL,
    issue_from_pull,
    load_fixtures,
    make_comment,
    make_fixtures,
    make_issue,
    make_pull,
)
from recipes.demo.github_store import RepoData, index_fixtures, invalid, not_found
from recipes.demo.loopback import LoopbackServer, Refusal, Request, Response, ServedRequest

__all__ = [
    "FAULT_KINDS",
    "Call",
    "FiredFault",
    "ReplayServer",
    "ServedRequest",
    "make_comment",
    "make_fixtures",
    "make_issue",
    "make_pull",
]

_DEFAULT_PER_PAGE = 30
_MAX_PER_PAGE = 100
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
_REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
_NUMBER = r"/(?P<number>[1-9][0-9]*)"


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


class ReplayServer(LoopbackServer):
    """A GitHub API stand-in on ``127.0.0.1`` that PyGithub can talk to.

    ``fixtures`` maps ``"owner/name"`` to ``repo``, ``pulls``, ``issues``, ``comments``
    (per issue number) and ``closing_issues`` (per pull number); see
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

    server_version = "GitHub.com"

    def __init__(self, fixtures: Mapping[str, Any], **limits: Any) -> None:
        """``limits``: the fault and rate-limit settings of :class:`Limits`."""
        self._limits = Limits(**limits)
        self._store = index_fixtures(fixtures)
        routes = [
            ("POST", "/graphql", lambda request: answer_graphql(self._store, request)),
            ("GET", "/rate_limit", self._rate_limit_overview),
            ("GET", _REPO, lambda request: Response(200, self._repo(request).repo)),
            ("GET", _REPO + "/pulls", self._list_pulls),
            ("GET", _REPO + "/pulls" + _NUMBER, self._get_pull),
            ("GET", _REPO + "/issues" + _NUMBER, self._get_issue),
            ("GET", _REPO + "/issues" + _NUMBER + "/comments", self._issue_comments),
        ]
        super().__init__(routes, name="github-replay")

    @classmethod
    def from_json(cls, path: str | Path, **settings: Any) -> ReplayServer:
        """Start a server on fixtures loaded with :func:`load_fixtures`."""
        return cls(load_fixtures(path), **settings)

    def __enter__(self) -> ReplayServer:
        return self

    def set_fixtures(self, fixtures: Mapping[str, Any]) -> None:
        """Serve other fixtures from now on (e.g. the same repository with newer PRs)."""
        store = index_fixtures(fixtures)
        with self._lock:
            self._store = store

    @property
    def requests(self) -> list[ServedRequest]:
        """Every request received, in order, faults included."""
        return self.log

    @property
    def calls(self) -> list[Call]:
        """``(method, path, query)`` of every request received, faults included."""
        return [Call(r.method, r.path, r.query) for r in self.log]

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of every request, in order (do not print)."""
        return [r.authorization for r in self.log]

    @property
    def faults_fired(self) -> list[FiredFault]:
        """The faults served, in order."""
        return [FiredFault(r.index, r.fault, r.path) for r in self.log if r.fault]

    # -- the loopback hooks -------------------------------------------------------------

    def respond(self, request: Request) -> Response:
        """A fault, or the route's answer charged to the token's budget."""
        auth = request.headers.get("Authorization")
        resource = "graphql" if request.path == "/graphql" else "core"
        response = self._limits.fault(request.index, auth, resource)
        if response is None:
            counts = request.path != "/rate_limit"
            response = self._limits.charge(
                self.dispatch(request), auth, resource, request.index, counts=counts
            )
        response.headers.setdefault("X-GitHub-Request-Id", request_id(request.index))
        return response

    def not_found(self, request: Request) -> Response:
        return not_found()

    def encode(self, body: Any) -> bytes:
        """Serialise a body, pointing canonical API URLs at this server."""
        return super().encode(body).replace(CANONICAL_API_URL.encode(), self.url.encode())

    # -- routes -------------------------------------------------------------------------

    def _repo(self, request: Request) -> RepoData:
        repo = self._store.get(f"{request.params['owner']}/{request.params['name']}".lower())
        if repo is None:
            raise Refusal(not_found())
        return repo

    def _list_pulls(self, request: Request) -> Response:
        repo, query = self._repo(request), request.query
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
                return invalid(name)
        pulls = [
            p
            for p in repo.pulls.values()
            if state in ("all", p.get("state"))
            and query.get("base") in (None, p.get("base", {}).get("ref"))
        ]
        key = "updated_at" if sort == "updated" else "created_at"
        pulls.sort(key=lambda p: (p.get(key) or "", p["number"]), reverse=direction == "desc")
        listed = [{k: v for k, v in p.items() if k not in _PULL_DETAIL_FIELDS} for p in pulls]
        return self._page(listed, request)

    def _pull(self, request: Request) -> tuple[RepoData, dict[str, Any]]:
        repo = self._repo(request)
        pull = repo.pulls.get(int(request.params["number"]))
        if pull is None:
            raise Refusal(not_found())
        return repo, pull

    def _get_pull(self, request: Request) -> Response:
        return Response(200, self._pull(request)[1])

    def _get_issue(self, request: Request) -> Response:
        repo, number = self._repo(request), int(request.params["number"])
        if number in repo.issues:
            return Response(200, repo.issues[number])
        return Response(200, issue_from_pull(repo.full_name, self._pull(request)[1]))

    def _issue_comments(self, request: Request) -> Response:
        repo, number = self._repo(request), int(request.params["number"])
        if number not in repo.issues and number not in repo.pulls:
            return not_found()
        comments = repo.comments.get(number, [])
        if "since" in request.query:
            since = _parse_time(request.query["since"])
            if since is None:
                return invalid("since")
            comments = [c for c in comments if _comment_time(c) >= since]
        return self._page(comments, request)

    def _page(self, items: list[Any], request: Request) -> Response:
        """Serve one page of ``items`` with GitHub-style ``Link`` headers."""
        query = request.query
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
                f'<{self.url}{request.path}?{urlencode({**query, "page": str(n)})}>; rel="{rel}"'
                for n, rel in links
            )
        return Response(200, chunk, headers)

    def _rate_limit_overview(self, request: Request) -> Response:
        return Response(200, self._limits.overview(request.headers.get("Authorization")))


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
