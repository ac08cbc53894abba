"""Tests for recipes/github/client.py: the real PyGithub against the loopback replay server."""

from __future__ import annotations

import logging

import pytest
from github import Github, UnknownObjectException

from recipes.demo.github_replay import ReplayServer, make_fixtures, make_issue, make_pull
from recipes.github.client import (
    GitHubClient,
    GitHubUnavailable,
    RateLimitWaitTooLong,
    RetryPolicy,
    tokens_from_environment,
    web_hosts_for,
)

REPO = "octo-org/octo-repo"
FIXTURES = make_fixtures(
    REPO,
    pulls=[make_pull(REPO, 2, title="A pull")],
    issues=[make_issue(REPO, 1, title="An issue", body="Broken.")],
)
FAST = RetryPolicy(backoff_base_s=0.5, max_attempts=4, secondary_wait_s=7.0, max_wait_s=30.0)


class _Sleeps(list):
    """Records the waits instead of sleeping (the replay server's faults are by ordinal)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _client(server: ReplayServer, tokens=("token-a",), policy=FAST, **kw) -> GitHubClient:
    return GitHubClient(server.url, list(tokens), policy, **kw)


def _title(client: GitHubClient) -> str:
    return client.call("issues", lambda gh: gh.get_repo(REPO).get_issue(1).raw_data["title"])


def test_tokens_from_environment_order_and_dedup() -> None:
    env = {"GITHUB_TOKENS": "a, b\nc,,a", "GITHUB_TOKEN": "d"}
    assert tokens_from_environment(env) == ["a", "b", "c", "d"]
    assert tokens_from_environment({"GITHUB_TOKEN": "b", "GITHUB_TOKENS": "b"}) == ["b"]
    assert tokens_from_environment({}) == []


def test_web_hosts() -> None:
    assert web_hosts_for("https://api.github.com") == ("github.com",)
    assert web_hosts_for("https://ghe.corp.example/api/v3") == ("github.com", "ghe.corp.example")


def test_one_call_is_one_request_and_is_counted() -> None:
    with ReplayServer(FIXTURES) as server:
        client = _client(server)
        assert _title(client) == "An issue"
        assert client.total_calls == 1 and len(server.calls) == 1
        assert server.authorizations == ["token token-a"]
        assert client.calls == {"issues": 1}


def test_not_found_reaches_the_caller_without_retry() -> None:
    with ReplayServer(FIXTURES) as server:
        client = _client(server)
        with pytest.raises(UnknownObjectException):
            client.call("issues", lambda gh: gh.get_repo(REPO).get_issue(99).raw_data)
        assert len(server.calls) == 1


@pytest.mark.parametrize("kind", ["bad_gateway", "drop"])
def test_5xx_and_dropped_connections_back_off_exponentially(kind: str) -> None:
    with ReplayServer(FIXTURES, faults={1: kind, 2: kind}) as server:
        sleeps = _Sleeps()
        client = _client(server, sleep=sleeps)
        assert _title(client) == "An issue"
        assert sleeps == [0.5, 1.0]
        assert client.total_calls == 3 and len(server.calls) == 3


def test_gives_up_after_max_attempts() -> None:
    with ReplayServer(FIXTURES, faults=dict.fromkeys(range(1, 10), "bad_gateway")) as server:
        client = _client(server, sleep=_Sleeps())
        with pytest.raises(GitHubUnavailable, match="gave up after 4 attempts: HTTP 502"):
            _title(client)
        assert len(server.calls) == 4


@pytest.mark.parametrize("status", [403, 429])
def test_secondary_limit_honours_retry_after(status: int) -> None:
    faults = {1: "secondary"}
    with ReplayServer(FIXTURES, faults=faults, secondary_status=status, retry_after=3) as server:
        sleeps = _Sleeps()
        assert _title(_client(server, sleep=sleeps)) == "An issue"
        assert sleeps == [3.0]


def test_secondary_limit_without_retry_after_waits_the_policy_time() -> None:
    with ReplayServer(FIXTURES, faults={1: "secondary"}, retry_after=None) as server:
        sleeps = _Sleeps()
        assert _title(_client(server, sleep=sleeps)) == "An issue"
        assert sleeps == [7.0]


def test_retry_after_longer_than_max_wait_is_refused() -> None:
    with ReplayServer(FIXTURES, faults={1: "secondary"}, retry_after=120) as server:
        sleeps = _Sleeps()
        with pytest.raises(RateLimitWaitTooLong, match="Retry-After asks for 120s"):
            _title(_client(server, sleep=sleeps))
        assert sleeps == []


def test_primary_limit_waits_until_the_reset_with_one_token() -> None:
    with ReplayServer(FIXTURES, faults={1: "rate_limit"}, reset_after=2) as server:
        sleeps = _Sleeps()
        assert _title(_client(server, sleep=sleeps)) == "An issue"
        assert len(sleeps) == 1 and 1.0 < sleeps[0] <= 4.0  # until X-RateLimit-Reset, + 1 s
        assert [r.status for r in server.requests] == [403, 200]


def test_primary_limit_rotates_to_the_next_token_without_waiting() -> None:
    with ReplayServer(FIXTURES, rate_limit=2, rate_limit_window=3600) as server:
        sleeps = _Sleeps()
        client = _client(server, tokens=("token-a", "token-b"), sleep=sleeps)
        for _ in range(4):
            assert _title(client) == "An issue"
        assert sleeps == []
        assert server.authorizations == ["token token-a"] * 3 + ["token token-b"] * 2
        assert [r.status for r in server.requests] == [200, 200, 403, 200, 200]
        assert client.token_count == 2


def test_all_tokens_spent_for_longer_than_max_wait_raises() -> None:
    with ReplayServer(FIXTURES, rate_limit=1, rate_limit_window=3600) as server:
        client = _client(server, tokens=("token-a", "token-b"), sleep=_Sleeps())
        _title(client)
        _title(client)
        with pytest.raises(RateLimitWaitTooLong, match="every token is rate limited"):
            _title(client)


def test_graphql_goes_through_the_same_policy() -> None:
    query = "query { repository(owner: $owner, name: $name) { pullRequest(number: $number) "
    query += "{ closingIssuesReferences(first: 5) { nodes { number } } } } }"
    variables = {"owner": "octo-org", "name": "octo-repo", "number": 2}
    with ReplayServer(FIXTURES, faults={1: "drop"}) as server:
        client = _client(server, sleep=_Sleeps())
        data = client.call("graphql", lambda gh: gh.requester.graphql_query(query, variables)[1])
        assert data["data"]["repository"]["pullRequest"]["closingIssuesReferences"]["nodes"] == []
        assert client.calls == {"graphql": 2} and client.retries == {"graphql": 1}


@pytest.mark.slow
def test_tokens_never_printed_logged_or_in_repr(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    secret = "ghp_neverprintme0123456789"
    caplog.set_level(logging.DEBUG)
    faults = {1: "rate_limit", 2: "bad_gateway", 3: "secondary", 4: "drop"}
    with ReplayServer(FIXTURES, faults=faults, reset_after=1) as server:
        client = _client(server, tokens=(secret,), policy=RetryPolicy(backoff_base_s=0.01))
        assert _title(client) == "An issue"
        with pytest.raises(UnknownObjectException) as caught:
            client.call("issues", lambda gh: gh.get_repo(REPO).get_issue(99).raw_data)
        assert server.authorizations[-1] == f"token {secret}"  # it was really used
    captured = capsys.readouterr()
    texts = [captured.out, captured.err, caplog.text, repr(client), client.summary()]
    texts += [str(caught.value), repr(caught.value)]
    assert all(secret not in text for text in texts)
    assert "1 tokens" not in repr(client) and "tokens=1" in repr(client)


def test_anonymous_client_sends_no_authorization() -> None:
    with ReplayServer(FIXTURES) as server:
        client = GitHubClient(server.url, [], FAST)
        assert not client.authenticated
        assert _title(client) == "An issue"
        assert server.authorizations == [None]
        assert isinstance(client._slots[0].github, Github)
