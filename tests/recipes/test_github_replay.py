"""Tests for the GitHub replay server and its fixture objects: raw HTTP and the real PyGithub."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import github
import pytest
import requests
from github import Auth, GithubException, GithubRetry

from recipes.demo.github_objects import (
    CANONICAL_API_URL,
    load_fixtures,
    make_comment,
    make_fixtures,
    make_issue,
    make_pull,
)
from recipes.demo.github_replay import FAULT_KINDS, Call, FiredFault, ReplayServer

REPO = "octo-org/octo-repo"
N_PULLS = 250
N_COMMENTS = 75


def _pull(number: int) -> dict[str, Any]:
    """Every third pull is open, the others closed; odd closed ones are merged."""
    if number % 3 == 0:
        return make_pull(REPO, number, title=f"PR {number}")
    merged = f"2024-03-{number % 28 + 1:02d}T12:00:00Z" if number % 2 else None
    closed = merged or f"2024-03-{number % 28 + 1:02d}T13:00:00Z"
    return make_pull(REPO, number, title=f"PR {number}", closed_at=closed, merged_at=merged)


def _fixtures() -> dict[str, Any]:
    pulls = [_pull(n) for n in range(1, N_PULLS + 1)]
    pulls[6] = make_pull(
        REPO,
        7,
        title="Fix the frobnicator",
        body="Fixes #1000",
        user="alice",
        created_at="2024-01-01T07:04:05Z",  # keeps creation order == number order
        merged_at="2024-01-05T06:07:08Z",
        merge_commit_sha="a" * 40,
        base_ref="main",
        base_sha="b" * 40,
        head_ref="fix-frob",
        head_sha="c" * 40,
        labels=["bug"],
    )
    comments = [
        make_comment(
            REPO,
            1000,
            i,
            body=f"comment {i}",
            created_at=f"2024-02-01T00:{i % 60:02d}:00Z",
            updated_at=f"2024-02-{1 + i // 60:02d}T00:{i % 60:02d}:00Z",
        )
        for i in range(1, N_COMMENTS + 1)
    ]
    return make_fixtures(
        REPO,
        pulls=pulls,
        issues=[
            make_issue(REPO, 1000, title="Frobnicator broken", body="It breaks.", user="bob"),
            make_issue(REPO, 1001, title="Closed one", closed_at="2024-01-09T00:00:00Z"),
        ],
        comments={1000: comments, 7: [make_comment(REPO, 7, 9001, body="LGTM")]},
        closing_issues={7: [1000, {"number": 5, "repository": "other/elsewhere"}]},
    )


FIXTURES = _fixtures()


@pytest.fixture
def server():
    with ReplayServer(FIXTURES) as replay:
        yield replay


def _client(server: ReplayServer, token: str = "t", **settings: Any) -> github.Github:
    settings.setdefault("seconds_between_requests", None)
    settings.setdefault("seconds_between_writes", None)
    return github.Github(base_url=server.url, auth=Auth.Token(token), **settings)


class _Raw:
    """A raw HTTP response from the replay server."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def _raw(
    server: ReplayServer,
    path: str,
    method: str = "GET",
    body: Any = None,
    token: str | None = "t",
) -> _Raw:
    """Send one request with http.client (no retries, nothing in between)."""
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    headers = {"Authorization": f"token {token}"} if token else {}
    payload = json.dumps(body).encode() if body is not None else None
    if payload is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        return _Raw(response.status, dict(response.getheaders()), response.read())
    finally:
        connection.close()


def _links(header: str) -> dict[str, str]:
    links = {}
    for part in header.split(", "):
        url, rel = part.split("; ")
        links[rel.removeprefix('rel="').removesuffix('"')] = url.strip("<>")
    return links


# ---------------------------------------------------------------------------
# REST endpoints through PyGithub


def test_pygithub_lists_pulls_across_pages(server: ReplayServer) -> None:
    gh = _client(server, per_page=100)
    repo = gh.get_repo(REPO)
    pulls = list(repo.get_pulls(state="all", sort="created", direction="asc"))
    assert [p.number for p in pulls] == list(range(1, N_PULLS + 1))
    list_calls = [c for c in server.calls if c.path == f"/repos/{REPO}/pulls"]
    assert len(list_calls) == 3
    assert [c.query.get("page") for c in list_calls] == [None, "2", "3"]
    assert all(c.query["per_page"] == "100" for c in list_calls)
    assert all(c.query["state"] == "all" for c in list_calls)
    assert server.calls[0] == Call("GET", f"/repos/{REPO}", {})


def test_pull_list_filters_and_sorts(server: ReplayServer) -> None:
    repo = _client(server, per_page=100).get_repo(REPO)
    open_numbers = [p.number for p in repo.get_pulls()]  # GitHub default: open, newest first
    assert open_numbers == sorted((n for n in range(1, N_PULLS + 1) if n % 3 == 0), reverse=True)
    closed = [p.number for p in repo.get_pulls(state="closed", sort="updated")]
    assert len(closed) == N_PULLS - len(open_numbers)
    updated = [repo.get_pull(n).updated_at for n in closed[:5]]
    assert updated == sorted(updated)  # sort=updated defaults to ascending
    assert repo.get_pulls(state="all").totalCount == N_PULLS
    assert [p.number for p in repo.get_pulls(state="all", base="nope")] == []


def test_invalid_pull_list_parameters_are_422(server: ReplayServer) -> None:
    response = _raw(server, f"/repos/{REPO}/pulls?state=merged")
    assert response.status == 422
    assert response.json()["message"] == "Validation Failed"
    with pytest.raises(GithubException) as caught:
        list(_client(server).get_repo(REPO).get_pulls(direction="sideways"))
    assert caught.value.status == 422


def test_list_items_omit_detail_fields_like_github(server: ReplayServer) -> None:
    listed = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=5").json()
    assert "merged" not in listed[0] and "commits" not in listed[0]
    assert "merged_at" in listed[0]
    repo = _client(server).get_repo(REPO)
    first = next(iter(repo.get_pulls(state="all", direction="asc")))
    before = len(server.calls)
    assert first.merged is True  # not in the list: PyGithub completes the object
    assert server.calls[before:] == [Call("GET", f"/repos/{REPO}/pulls/1", {})]


def test_fetch_pull(server: ReplayServer) -> None:
    pull = _client(server).get_repo(REPO).get_pull(7)
    assert pull.number == 7
    assert pull.title == "Fix the frobnicator"
    assert pull.body == "Fixes #1000"
    assert pull.state == "closed"
    assert pull.merged is True
    assert pull.merged_at == datetime(2024, 1, 5, 6, 7, 8, tzinfo=timezone.utc)
    assert pull.created_at == datetime(2024, 1, 1, 7, 4, 5, tzinfo=timezone.utc)
    assert pull.merge_commit_sha == "a" * 40
    assert pull.base.sha == "b" * 40
    assert pull.base.ref == "main"
    assert pull.base.repo.full_name == REPO
    assert pull.head.sha == "c" * 40
    assert pull.head.ref == "fix-frob"
    assert pull.user.login == "alice"
    assert [label.name for label in pull.labels] == ["bug"]
    assert pull.html_url == f"https://github.com/{REPO}/pull/7"
    assert pull.url == f"{server.url}/repos/{REPO}/pulls/7"  # API URLs point at the server


def test_fetch_issue_and_pull_as_issue(server: ReplayServer) -> None:
    repo = _client(server).get_repo(REPO)
    issue = repo.get_issue(1000)
    assert (issue.title, issue.body, issue.user.login, issue.state) == (
        "Frobnicator broken",
        "It breaks.",
        "bob",
        "open",
    )
    assert issue.pull_request is None
    assert repo.get_issue(1001).closed_at == datetime(2024, 1, 9, tzinfo=timezone.utc)
    as_issue = repo.get_issue(7)  # a pull request is an issue too
    assert as_issue.pull_request is not None
    assert as_issue.pull_request.merged_at == datetime(2024, 1, 5, 6, 7, 8, tzinfo=timezone.utc)
    assert as_issue.title == "Fix the frobnicator"
    with pytest.raises(github.UnknownObjectException):
        repo.get_issue(999)


def test_issue_comments_paginate(server: ReplayServer) -> None:
    comments = list(_client(server).get_repo(REPO).get_issue(1000).get_comments())
    assert [c.id for c in comments] == list(range(1, N_COMMENTS + 1))
    assert comments[0].body == "comment 1"
    assert comments[0].user.login == "octocat"
    pages = [c for c in server.calls if c.path.endswith("/issues/1000/comments")]
    assert len(pages) == 3  # 75 comments at GitHub's default 30 per page


def test_issue_comments_since(server: ReplayServer) -> None:
    since = datetime(2024, 2, 2, tzinfo=timezone.utc)
    issue = _client(server).get_repo(REPO).get_issue(1000)
    comments = list(issue.get_comments(since=since))
    assert [c.id for c in comments] == list(range(60, N_COMMENTS + 1))
    assert server.calls[-1].query["since"] == "2024-02-02T00:00:00Z"
    assert _raw(server, f"/repos/{REPO}/issues/1000/comments?since=yesterday").status == 422


def test_pull_issue_comments(server: ReplayServer) -> None:
    pull = _client(server).get_repo(REPO).get_pull(7)
    assert [c.body for c in pull.get_issue_comments()] == ["LGTM"]
    assert _raw(server, f"/repos/{REPO}/issues/4242/comments").status == 404


def test_repository_paths_are_case_insensitive(server: ReplayServer) -> None:
    response = _raw(server, "/repos/OCTO-ORG/Octo-Repo/pulls/7")
    assert response.status == 200
    assert response.json()["number"] == 7


def test_not_found(server: ReplayServer) -> None:
    for path in ("/nope", "/repos/x/y", f"/repos/{REPO}/pulls/99999", f"/repos/{REPO}/labels"):
        response = _raw(server, path)
        assert response.status == 404, path
        assert response.json()["message"] == "Not Found"
        assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert _raw(server, f"/repos/{REPO}/pulls", method="POST", body={}).status == 404
    with pytest.raises(github.UnknownObjectException):
        _client(server).get_repo("nobody/nothing")


# ---------------------------------------------------------------------------
# pagination headers


def test_link_headers_on_a_middle_page(server: ReplayServer) -> None:
    response = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=100&page=2")
    assert len(response.json()) == 100
    link = response.headers["Link"]
    assert [part.split("; ")[1] for part in link.split(", ")] == [
        'rel="prev"',
        'rel="next"',
        'rel="last"',
        'rel="first"',
    ]
    links = _links(link)
    base = f"{server.url}/repos/{REPO}/pulls"
    for rel, page in (("prev", "1"), ("next", "3"), ("last", "3"), ("first", "1")):
        parts = urlsplit(links[rel])
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == base
        assert parse_qs(parts.query) == {"state": ["all"], "per_page": ["100"], "page": [page]}


def test_link_headers_on_first_last_and_only_pages(server: ReplayServer) -> None:
    first = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=100")
    assert set(_links(first.headers["Link"])) == {"next", "last"}
    last = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=100&page=3")
    assert len(last.json()) == 50
    assert set(_links(last.headers["Link"])) == {"prev", "first"}
    beyond = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=100&page=9")
    assert beyond.json() == []
    assert "page=3" in _links(beyond.headers["Link"])["prev"]
    only = _raw(server, f"/repos/{REPO}/issues/7/comments")
    assert len(only.json()) == 1
    assert "Link" not in only.headers


def test_per_page_is_capped_at_100(server: ReplayServer) -> None:
    response = _raw(server, f"/repos/{REPO}/pulls?state=all&per_page=500")
    assert len(response.json()) == 100
    assert "page=3" in _links(response.headers["Link"])["last"]


# ---------------------------------------------------------------------------
# rate-limit headers, tokens and budgets


def test_every_response_carries_rate_limit_headers(server: ReplayServer) -> None:
    before = int(time.time())
    seen = []
    for path in (f"/repos/{REPO}", f"/repos/{REPO}/pulls/7", "/nope"):
        headers = _raw(server, path).headers
        assert headers["Content-Type"] == "application/json; charset=utf-8"
        assert headers["X-RateLimit-Limit"] == "5000"
        assert headers["X-RateLimit-Resource"] == "core"
        assert int(headers["X-RateLimit-Reset"]) >= before + 3600
        assert int(headers["X-RateLimit-Used"]) + int(headers["X-RateLimit-Remaining"]) == 5000
        seen.append(int(headers["X-RateLimit-Remaining"]))
    assert seen == [4999, 4998, 4997]


def test_rate_limit_endpoint_is_free(server: ReplayServer) -> None:
    gh = _client(server)
    gh.get_repo(REPO)
    overview = gh.get_rate_limit()
    assert overview.resources.core.remaining == 4999
    assert overview.resources.core.limit == 5000
    assert gh.get_rate_limit().resources.core.used == 1
    assert gh.rate_limiting == (4999, 5000)


def test_tokens_have_separate_budgets_and_are_recorded(server: ReplayServer) -> None:
    _client(server, "token-a").get_repo(REPO)
    _client(server, "token-a").get_repo(REPO).get_pull(7)
    b = _client(server, "token-b")
    b.get_repo(REPO)
    assert b.rate_limiting == (4999, 5000)
    assert server.authorizations == ["token token-a"] * 3 + ["token token-b"]
    assert "token-a" not in repr(server.requests) and "token-a" not in repr(server)


@pytest.mark.slow
def test_spent_budget_gives_primary_rate_limit_until_reset() -> None:
    with ReplayServer(FIXTURES, rate_limit=2, rate_limit_window=1) as replay:
        assert [_raw(replay, f"/repos/{REPO}").status for _ in range(3)] == [200, 200, 403]
        refused = _raw(replay, f"/repos/{REPO}")
        assert refused.headers["X-RateLimit-Remaining"] == "0"
        assert refused.json()["message"].startswith("API rate limit exceeded")
        assert _raw(replay, f"/repos/{REPO}", token="other").status == 200
        assert [f.kind for f in replay.faults_fired] == ["exhausted", "exhausted"]
        time.sleep(1.1)
        assert _raw(replay, f"/repos/{REPO}").status == 200


def test_nothing_is_printed(server: ReplayServer, capsys: pytest.CaptureFixture[str]) -> None:
    _client(server, "secret-token").get_repo(REPO).get_pull(7)
    _raw(server, "/nope", token="secret-token")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


# ---------------------------------------------------------------------------
# GraphQL closing references

CLOSING_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 10) { nodes { number } }
    }
  }
}
"""


def test_graphql_closing_issues_with_variables(server: ReplayServer) -> None:
    gh = _client(server)
    _, data = gh.requester.graphql_query(
        CLOSING_QUERY, {"owner": "octo-org", "name": "octo-repo", "number": 7}
    )
    nodes = data["data"]["repository"]["pullRequest"]["closingIssuesReferences"]["nodes"]
    assert [n["number"] for n in nodes] == [1000, 5]
    assert nodes[1]["repository"]["nameWithOwner"] == "other/elsewhere"
    assert server.calls[-1] == Call("POST", "/graphql", {})


def test_graphql_closing_issues_with_literals(server: ReplayServer) -> None:
    query = (
        '{ repository(owner: "octo-org", name: "octo-repo") { pullRequest(number: 8) '
        "{ closingIssuesReferences(first: 5) { nodes { number } } } } }"
    )
    response = _raw(server, "/graphql", "POST", {"query": query})
    assert response.status == 200
    assert response.headers["X-RateLimit-Resource"] == "graphql"
    pull = response.json()["data"]["repository"]["pullRequest"]
    assert pull["closingIssuesReferences"]["nodes"] == []


def test_graphql_unknown_pull_and_repo(server: ReplayServer) -> None:
    gh = _client(server)
    with pytest.raises(github.UnknownObjectException):
        gh.requester.graphql_query(
            CLOSING_QUERY, {"owner": "octo-org", "name": "octo-repo", "number": 4242}
        )
    with pytest.raises(github.UnknownObjectException):
        gh.requester.graphql_query(CLOSING_QUERY, {"owner": "x", "name": "y", "number": 1})


def test_graphql_other_queries_and_anonymous_callers(server: ReplayServer) -> None:
    other = _raw(server, "/graphql", "POST", {"query": "{ viewer { login } }"})
    assert other.status == 200 and "errors" in other.json()
    anonymous = _raw(server, "/graphql", "POST", {"query": CLOSING_QUERY}, token=None)
    assert anonymous.status == 401


# ---------------------------------------------------------------------------
# faults served, seen raw


def test_rate_limit_fault_raw() -> None:
    with ReplayServer(FIXTURES, faults={2: "rate_limit"}) as replay:
        assert _raw(replay, f"/repos/{REPO}").status == 200
        now = time.time()
        response = _raw(replay, f"/repos/{REPO}")
        assert response.status == 403
        assert response.headers["X-RateLimit-Remaining"] == "0"
        assert now < int(response.headers["X-RateLimit-Reset"]) <= now + 2
        assert response.headers["Content-Type"] == "application/json; charset=utf-8"
        assert response.json()["message"].startswith("API rate limit exceeded")
        assert _raw(replay, f"/repos/{REPO}").headers["X-RateLimit-Remaining"] == "4998"
        assert replay.faults_fired == [FiredFault(2, "rate_limit", f"/repos/{REPO}")]


@pytest.mark.parametrize("status", [403, 429])
def test_secondary_fault_raw(status: int) -> None:
    with ReplayServer(FIXTURES, faults={1: "secondary"}, secondary_status=status) as replay:
        response = _raw(replay, f"/repos/{REPO}")
        assert response.status == status
        assert response.headers["Retry-After"] == "1"
        assert response.json()["message"].startswith("You have exceeded a secondary rate limit")
        assert response.headers["X-RateLimit-Remaining"] == "5000"


def test_secondary_fault_without_retry_after() -> None:
    with ReplayServer(FIXTURES, faults={1: "secondary"}, retry_after=None) as replay:
        assert "Retry-After" not in _raw(replay, f"/repos/{REPO}").headers


def test_bad_gateway_fault_raw() -> None:
    with ReplayServer(FIXTURES, faults={1: "bad_gateway"}) as replay:
        response = _raw(replay, f"/repos/{REPO}")
        assert response.status == 502
        assert response.headers["Content-Type"] == "application/json; charset=utf-8"


def test_drop_fault_raw() -> None:
    with ReplayServer(FIXTURES, faults={1: "drop"}) as replay:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            _raw(replay, f"/repos/{REPO}")
        assert _raw(replay, f"/repos/{REPO}").status == 200
        assert [r.status for r in replay.requests] == [None, 200]
        assert replay.faults_fired == [FiredFault(1, "drop", f"/repos/{REPO}")]
        assert len(replay.calls) == 2


def test_seeded_random_faults_are_deterministic() -> None:
    def run(seed: int) -> list[FiredFault]:
        with ReplayServer(FIXTURES, fault_rate=0.3, seed=seed) as replay:
            for number in range(1, 41):
                try:
                    _raw(replay, f"/repos/{REPO}/pulls/{number}")
                except (http.client.RemoteDisconnected, ConnectionResetError):
                    pass
            return replay.faults_fired

    first, again, other = run(7), run(7), run(8)
    assert first == again
    assert first != other
    assert 4 <= len(first) <= 24
    assert {f.kind for f in first} <= set(FAULT_KINDS)


def test_fault_rate_extremes_and_kind_selection() -> None:
    with ReplayServer(FIXTURES, fault_rate=1.0, fault_kinds=("bad_gateway",)) as replay:
        assert {_raw(replay, "/rate_limit").status for _ in range(5)} == {502}
    with ReplayServer(FIXTURES, fault_rate=0.0) as replay:
        assert {_raw(replay, "/rate_limit").status for _ in range(5)} == {200}


def test_script_wins_over_random_faults() -> None:
    with ReplayServer(
        FIXTURES, faults={3: "secondary"}, fault_rate=1.0, fault_kinds=("bad_gateway",)
    ) as replay:
        statuses = [_raw(replay, "/rate_limit").status for _ in range(4)]
    assert statuses == [502, 502, 403, 502]


@pytest.mark.parametrize(
    "settings",
    [
        {"faults": {1: "explode"}},
        {"faults": {0: "drop"}},
        {"fault_rate": 1.5},
        {"fault_rate": 0.5, "fault_kinds": ()},
        {"fault_kinds": ("nope",)},
        {"secondary_status": 500},
    ],
)
def test_bad_fault_settings_are_rejected(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ReplayServer(FIXTURES, **settings)


# ---------------------------------------------------------------------------
# what PyGithub does by itself with each fault (documents the installed version)


def _get_repo_name(replay: ReplayServer, **settings: Any) -> tuple[str, float]:
    started = time.monotonic()
    name = _client(replay, **settings).get_repo(REPO).full_name
    return name, time.monotonic() - started


@pytest.mark.slow
def test_pygithub_default_retry_waits_out_a_primary_rate_limit() -> None:
    with ReplayServer(FIXTURES, faults={1: "rate_limit"}) as replay:
        name, elapsed = _get_repo_name(replay)
        assert name == REPO
        assert elapsed >= 1.0  # slept until X-RateLimit-Reset plus one second
        assert [r.status for r in replay.requests] == [403, 200]


@pytest.mark.slow
@pytest.mark.parametrize("status", [403, 429])
def test_pygithub_default_retry_honours_retry_after(status: int) -> None:
    with ReplayServer(FIXTURES, faults={1: "secondary"}, secondary_status=status) as replay:
        name, elapsed = _get_repo_name(replay)
        assert name == REPO
        assert elapsed >= 1.0
        assert [r.status for r in replay.requests] == [status, 200]


@pytest.mark.parametrize("kind", ["bad_gateway", "drop"])
def test_pygithub_default_retry_retries_502_and_drops_at_once(kind: str) -> None:
    with ReplayServer(FIXTURES, faults={1: kind, 2: kind}) as replay:
        name, elapsed = _get_repo_name(replay)
        assert name == REPO
        assert elapsed < 1.0  # urllib3 backoff_factor is 0
        assert len(replay.calls) == 3


@pytest.mark.parametrize(
    ("kind", "status", "error", "error_status"),
    [
        ("rate_limit", 403, github.RateLimitExceededException, 403),
        ("secondary", 403, github.RateLimitExceededException, 403),
        ("secondary", 429, GithubException, 429),
        ("bad_gateway", 403, GithubException, 502),
    ],
)
def test_pygithub_without_retry_raises(
    kind: str, status: int, error: type[GithubException], error_status: int
) -> None:
    with ReplayServer(FIXTURES, faults={1: kind}, secondary_status=status) as replay:
        with pytest.raises(error) as caught:
            _get_repo_name(replay, retry=None)
        assert caught.value.status == error_status
        assert len(replay.calls) == 1


def test_pygithub_without_retry_surfaces_a_drop_as_requests_error() -> None:
    with ReplayServer(FIXTURES, faults={1: "drop"}) as replay:
        with pytest.raises(requests.exceptions.ConnectionError):
            _get_repo_name(replay, retry=None)


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("bad_gateway", requests.exceptions.RetryError),
        ("drop", requests.exceptions.ConnectionError),
    ],
)
def test_pygithub_exhausted_retries_raise_requests_errors(
    kind: str, error: type[Exception]
) -> None:
    with ReplayServer(FIXTURES, faults=dict.fromkeys(range(1, 10), kind)) as replay:
        with pytest.raises(error):
            _get_repo_name(replay, retry=GithubRetry(total=2))
        assert len(replay.calls) == 3


@pytest.mark.slow
def test_pygithub_exhausted_429_retries_raise_github_exception() -> None:
    faults = dict.fromkeys(range(1, 10), "secondary")
    with ReplayServer(FIXTURES, faults=faults, secondary_status=429) as replay:
        with pytest.raises(GithubException) as caught:
            _get_repo_name(replay, retry=GithubRetry(total=1))
        assert caught.value.status == 429
        assert len(replay.calls) == 2


def test_pygithub_max_rate_limit_wait_refuses_long_primary_waits() -> None:
    with ReplayServer(FIXTURES, rate_limit=1) as replay:
        _get_repo_name(replay)
        with pytest.raises(github.RateLimitExceededExceedsMaxWait):
            _get_repo_name(replay, retry=GithubRetry(max_rate_limit_wait=5))


@pytest.mark.slow
def test_pygithub_retry_after_ignores_max_rate_limit_wait() -> None:
    # Surprising but true in the installed PyGithub: with Retry-After present, urllib3
    # sleeps for it and max_rate_limit_wait is never consulted.
    with ReplayServer(FIXTURES, faults={1: "secondary"}, retry_after=2) as replay:
        name, elapsed = _get_repo_name(replay, retry=GithubRetry(max_rate_limit_wait=1))
        assert name == REPO
        assert elapsed >= 2.0


# ---------------------------------------------------------------------------
# lifecycle, fixtures files, concurrency


def test_fixtures_round_trip_through_json(tmp_path: Path) -> None:
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps(FIXTURES), encoding="utf-8")
    assert load_fixtures(path)[REPO]["comments"]["1000"][0]["body"] == "comment 1"
    with ReplayServer.from_json(path) as replay:
        issue = _client(replay).get_repo(REPO).get_issue(1000)
        assert len(list(issue.get_comments())) == N_COMMENTS


def test_load_fixtures_rejects_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="owner/name"):
        load_fixtures(path)


def test_fixture_objects_use_canonical_urls() -> None:
    pull = FIXTURES[REPO]["pulls"][6]
    assert pull["url"] == f"{CANONICAL_API_URL}/repos/{REPO}/pulls/7"
    assert pull["issue_url"].startswith(CANONICAL_API_URL)


def test_stop_is_idempotent_and_releases_the_port() -> None:
    replay = ReplayServer(FIXTURES)
    parts = urlsplit(replay.url)
    assert parts.hostname == "127.0.0.1"
    replay.stop()
    replay.stop()
    with pytest.raises(OSError), socket.create_connection((parts.hostname, parts.port), 1):
        pass


def test_concurrent_requests_are_all_recorded(server: ReplayServer) -> None:
    statuses: list[int] = []

    def worker(number: int) -> None:
        statuses.append(_raw(server, f"/repos/{REPO}/pulls/{number}").status)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(1, 21)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 20
    assert sorted(r.index for r in server.requests) == list(range(1, 21))
    assert sorted(int(c.path.rsplit("/", 1)[1]) for c in server.calls) == list(range(1, 21))
