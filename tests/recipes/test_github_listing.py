"""Tests for recipes/github/listing.py: range, order, max_prs and incremental listing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from recipes.demo.github_replay import ReplayServer, make_fixtures, make_pull
from recipes.github.client import GitHubClient, RetryPolicy
from recipes.github.listing import RepoState, list_pulls
from recipes.recipe import Recipe

REPO = "octo-org/octo-repo"
START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def _stamp(hours: float) -> str:
    return (START + dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pull(number: int, merged: bool = True, updated: float | None = None) -> dict[str, Any]:
    """PR ``number`` is created at hour ``number`` and closed (merged) an hour later."""
    closed = _stamp(number + 1)
    return make_pull(
        REPO,
        number,
        title=f"PR {number}",
        created_at=_stamp(number),
        closed_at=closed,
        merged_at=closed if merged else None,
        updated_at=_stamp(updated) if updated is not None else closed,
    )


def _fixtures(pulls: list[dict[str, Any]]) -> dict[str, Any]:
    return make_fixtures(REPO, pulls=pulls)


def _list(server: ReplayServer, recipe: Recipe, state: RepoState | None = None):
    client = GitHubClient(server.url, ["t"], RetryPolicy())
    listing = list_pulls(client, recipe, state or RepoState(REPO, client.base_url))
    return listing, client.total_calls


def _numbers(listing) -> list[int]:
    return [p.number for p in listing.pulls]


def test_newest_created_first_and_unmerged_kept_for_the_funnel() -> None:
    pulls = [_pull(n, merged=n % 5 != 0) for n in range(1, 31)]
    pulls += [make_pull(REPO, 31, title="open", created_at=_stamp(31))]  # open: not listed
    with ReplayServer(_fixtures(pulls)) as server:
        listing, calls = _list(server, Recipe(repo=REPO))
        assert _numbers(listing) == list(range(30, 0, -1))
        assert calls == 1 and listing.pages == 1
        query = server.calls[0].query
        expected = {"state": "closed", "sort": "updated", "direction": "desc", "per_page": "100"}
        assert query == expected
        assert not listing.incremental and listing.state.complete_down_to == ""


def test_since_and_until_are_exact_and_listing_stops_at_since() -> None:
    pulls = [_pull(n) for n in range(1, 251)]
    since, until = START + dt.timedelta(hours=200), START + dt.timedelta(hours=220)
    with ReplayServer(_fixtures(pulls)) as server:
        listing, calls = _list(server, Recipe(repo=REPO, since=since, until=until))
        assert _numbers(listing) == list(range(220, 199, -1))
        assert calls == 1  # PR 200..250 are on the first page; PR 199 stops the listing
        assert listing.state.complete_down_to == "2024-01-09T08:00:00Z"


def test_since_deep_in_history_pages_until_it() -> None:
    pulls = [_pull(n) for n in range(1, 251)]
    with ReplayServer(_fixtures(pulls)) as server:
        recipe = Recipe(repo=REPO, since=START + dt.timedelta(hours=20))
        listing, calls = _list(server, recipe)
        assert _numbers(listing) == list(range(250, 19, -1))
        assert calls == 3
        assert [c.query.get("page") for c in server.calls] == [None, "2", "3"]


def test_a_pr_created_before_since_but_updated_after_is_not_written() -> None:
    pulls = [_pull(n) for n in range(10, 20)] + [_pull(3, updated=30)]
    with ReplayServer(_fixtures(pulls)) as server:
        listing, _ = _list(server, Recipe(repo=REPO, since=START + dt.timedelta(hours=10)))
        assert _numbers(listing) == list(range(19, 9, -1))


def test_max_prs_counts_merged_prs_and_stops_listing_early() -> None:
    pulls = [_pull(n, merged=n % 4 != 0) for n in range(1, 401)]
    with ReplayServer(_fixtures(pulls)) as server:
        listing, calls = _list(server, Recipe(repo=REPO, max_prs=30))
        merged = [p.number for p in listing.pulls if p.merged_at]
        assert merged == [n for n in range(400, 0, -1) if n % 4][:30]
        assert _numbers(listing) == list(range(400, 360, -1))  # with the unmerged in between
        assert calls == 1


def test_incremental_rerun_asks_only_for_newer_prs(tmp_path: Path) -> None:
    recipe = Recipe(repo=REPO, since=START)
    old = [_pull(n) for n in range(1, 301)]
    with ReplayServer(_fixtures(old)) as server:
        first, calls = _list(server, recipe)
        assert calls == 4 and len(first.pulls) == 300
        first.state.save(tmp_path)
    new = old + [_pull(n) for n in range(301, 321)]
    with ReplayServer(_fixtures(new)) as server:
        state = RepoState.load(tmp_path, REPO, server.url)
        assert not state.known  # another base_url: the state does not apply
        state = RepoState.load(tmp_path, REPO, first.state.base_url)
        state.base_url = server.url
        second, calls = _list(server, recipe, state)
        assert second.incremental and calls == 1
        assert _numbers(second) == list(range(320, 0, -1))
        assert second.state.high_water == _stamp(321)


def test_incremental_picks_up_an_old_pr_merged_since(tmp_path: Path) -> None:
    recipe = Recipe(repo=REPO)
    before = [_pull(n, merged=n != 5) for n in range(1, 11)]
    with ReplayServer(_fixtures(before)) as server:
        first, _ = _list(server, recipe)
        assert [p.number for p in first.pulls if not p.merged_at] == [5]
        state = first.state
    after = [_pull(n, merged=True, updated=40 if n == 5 else None) for n in range(1, 11)]
    with ReplayServer(_fixtures(after)) as server:
        state.base_url = server.url
        second, calls = _list(server, recipe, state)
        assert calls == 1 and second.incremental
        assert all(p.merged_at for p in second.pulls)
        assert len(second.pulls) == 10


@pytest.mark.parametrize(
    ("first_since", "second_since", "incremental"),
    [(None, 50, True), (50, 60, True), (50, None, False), (60, 50, False)],
)
def test_state_is_used_only_when_it_covers_the_range(
    first_since: int | None, second_since: int | None, incremental: bool
) -> None:
    def since(hours: int | None) -> dt.datetime | None:
        return None if hours is None else START + dt.timedelta(hours=hours)

    pulls = [_pull(n) for n in range(1, 101)]
    with ReplayServer(_fixtures(pulls)) as server:
        first, _ = _list(server, Recipe(repo=REPO, since=since(first_since)))
        second, _ = _list(server, Recipe(repo=REPO, since=since(second_since)), first.state)
        assert second.incremental is incremental
        low = second_since or 0
        assert _numbers(second) == list(range(100, max(low, 1) - 1, -1))


def test_state_round_trips_and_holds_no_secret(tmp_path: Path) -> None:
    with ReplayServer(_fixtures([_pull(n) for n in range(1, 6)])) as server:
        client = GitHubClient(server.url, ["ghp_statesecret"], RetryPolicy())
        listing = list_pulls(client, Recipe(repo=REPO), RepoState(REPO, client.base_url))
        listing.state.save(tmp_path)
        loaded = RepoState.load(tmp_path, REPO, client.base_url)
    assert loaded.pulls == listing.state.pulls and loaded.known
    assert loaded.high_water == listing.state.high_water
    text = RepoState.path(tmp_path, REPO).read_text()
    assert "ghp_statesecret" not in text
