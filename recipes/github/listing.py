"""List a repository's closed pull requests within a recipe's range, incrementally."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

from github import Github

from builder.core.files import atomic_write_text
from builder.core.records import Record
from recipes.github.client import GitHubClient
from recipes.recipe import Recipe

__all__ = ["Listing", "PullRecord", "RepoState", "list_pulls", "parse_time"]

PER_PAGE = 100
STATE_VERSION = 1


class PullRecord(Record):
    """A pull request as the pulls list gives it: the input of the collect stage."""

    instance_id: str
    repo: str
    number: int
    title: str
    body: str
    state: str
    created_at: str
    updated_at: str
    merged_at: str | None
    base_ref: str
    base_sha: str
    head_sha: str

    def stable_fields(self) -> dict[str, Any]:
        """Everything but ``updated_at`` (comments after the merge do not change a result)."""
        return self.model_dump(mode="json", exclude={"updated_at"})


def parse_time(text: str) -> dt.datetime:
    """Parse GitHub's ``2024-01-02T03:04:05Z`` into an aware datetime."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _iso(moment: dt.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pull_record(repo: str, pull: Any) -> PullRecord:
    """Read only attributes the list already holds (others would cost a request each)."""
    return PullRecord(
        instance_id=f"{repo.replace('/', '__')}-{pull.number}",
        repo=repo,
        number=pull.number,
        title=pull.title or "",
        body=pull.body or "",
        state=pull.state,
        created_at=_iso(pull.created_at),
        updated_at=_iso(pull.updated_at),
        merged_at=_iso(pull.merged_at),
        base_ref=pull.base.ref,
        base_sha=pull.base.sha,
        head_sha=pull.head.sha,
    )


@dataclasses.dataclass
class RepoState:
    """What earlier runs listed: every closed PR seen, and down to where listing was complete.

    ``complete_down_to`` is an ``updated_at`` bound such that every PR closed and updated at
    or after it had been listed by then ("" means the whole history); ``high_water`` is the
    newest ``updated_at`` seen.  A PR changed since has a newer ``updated_at``, so listing
    newest-updated first may stop at ``high_water``.
    """

    repo: str
    base_url: str
    high_water: str | None = None
    complete_down_to: str | None = None
    pulls: dict[int, PullRecord] = dataclasses.field(default_factory=dict)
    known: bool = False

    @staticmethod
    def path(state_dir: Path, repo: str) -> Path:
        return Path(state_dir) / f"{repo.replace('/', '__')}.json"

    @classmethod
    def load(cls, state_dir: Path, repo: str, base_url: str) -> RepoState:
        path = cls.path(state_dir, repo)
        if not path.is_file():
            return cls(repo, base_url)
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != STATE_VERSION or data.get("base_url") != base_url:
            return cls(repo, base_url)
        pulls = {p["number"]: PullRecord.model_validate(p) for p in data["pulls"]}
        return cls(repo, base_url, data["high_water"], data["complete_down_to"], pulls, True)

    def save(self, state_dir: Path) -> None:
        data = {
            "version": STATE_VERSION,
            "repo": self.repo,
            "base_url": self.base_url,
            "high_water": self.high_water,
            "complete_down_to": self.complete_down_to,
            "pulls": [self.pulls[n].model_dump(mode="json") for n in sorted(self.pulls)],
        }
        text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        atomic_write_text(self.path(state_dir, self.repo), text)

    def covers(self, since: dt.datetime | None) -> bool:
        """Whether earlier listing was complete down to ``since`` (None: the whole history)."""
        if not self.known or self.high_water is None:
            return False
        if self.complete_down_to == "":
            return True
        return since is not None and parse_time(self.complete_down_to) <= since


@dataclasses.dataclass(frozen=True)
class Listing:
    """The PRs to judge (newest created first) and the state to save after judging them."""

    pulls: list[PullRecord]
    state: RepoState
    pages: int
    incremental: bool


def _pulls_page(client: GitHubClient, repo: str, page: int) -> list[PullRecord]:
    def fetch(github: Github) -> list[PullRecord]:
        listing = github.get_repo(repo).get_pulls(state="closed", sort="updated", direction="desc")
        return [_pull_record(repo, pull) for pull in listing.get_page(page)]

    return client.call("pulls", fetch)


def _newest_merged(pulls: dict[int, PullRecord], recipe: Recipe) -> list[PullRecord]:
    """Merged PRs in range, newest created first."""
    merged = [
        p for p in pulls.values() if p.merged_at and recipe.in_range(parse_time(p.created_at))
    ]
    return sorted(merged, key=lambda p: (p.created_at, p.number), reverse=True)


def _select(pulls: dict[int, PullRecord], recipe: Recipe) -> list[PullRecord]:
    """In-range PRs newest created first, cut after the ``max_prs``-th merged one."""
    in_range = [p for p in pulls.values() if recipe.in_range(parse_time(p.created_at))]
    in_range.sort(key=lambda p: (p.created_at, p.number), reverse=True)
    if recipe.max_prs is None:
        return in_range
    merged = _newest_merged(pulls, recipe)
    if len(merged) < recipe.max_prs:
        return in_range
    oldest = merged[recipe.max_prs - 1]
    cut = (oldest.created_at, oldest.number)
    return [p for p in in_range if (p.created_at, p.number) >= cut]


def list_pulls(client: GitHubClient, recipe: Recipe, state: RepoState) -> Listing:
    """List closed PRs newest-updated first, stopping as soon as no unseen PR can be in range.

    Listing stops at the first PR updated before ``since`` (it and all after it were created
    before ``since`` too), at the previous run's ``high_water`` when that run's listing
    covers the range (PRs changed since then come first), or, with ``max_prs``, once the
    newest ``max_prs`` merged PRs are known (a PR updated before the oldest of them was
    created before it too).  One API call per page of 100 PRs.
    """
    since = recipe.since_utc
    incremental = state.covers(since)
    high_water = parse_time(state.high_water) if incremental else None
    pulls = dict(state.pulls) if incremental else {}
    page, stop_bound, exhausted = 0, None, False
    while True:
        items = _pulls_page(client, recipe.repo, page)
        page += 1
        threshold = _max_prs_threshold(pulls, recipe)
        for item in items:
            updated = parse_time(item.updated_at)
            if high_water is not None and updated < high_water:
                stop_bound = "high_water"
                break
            if since is not None and updated < since:
                stop_bound = _iso(since)
                break
            if threshold is not None and updated < threshold:
                stop_bound = _iso(threshold)
                break
            pulls[item.number] = item
        threshold = _max_prs_threshold(pulls, recipe)
        if stop_bound is None and threshold is not None and items:
            if parse_time(items[-1].updated_at) < threshold:
                stop_bound = _iso(threshold)
        if stop_bound is not None:
            break
        if len(items) < PER_PAGE:
            exhausted = True
            break
    if stop_bound == "high_water":
        complete = state.complete_down_to
    elif exhausted:
        complete = ""
    else:
        complete = stop_bound
    stamps = [p.updated_at for p in pulls.values()]
    new_state = RepoState(
        recipe.repo,
        state.base_url,
        high_water=max(stamps) if stamps else state.high_water,
        complete_down_to=complete,
        pulls=pulls,
        known=True,
    )
    return Listing(_select(pulls, recipe), new_state, page, incremental)


def _max_prs_threshold(pulls: dict[int, PullRecord], recipe: Recipe) -> dt.datetime | None:
    """Creation time of the ``max_prs``-th newest merged PR in range, once there are that many."""
    if recipe.max_prs is None:
        return None
    merged = _newest_merged(pulls, recipe)
    if len(merged) < recipe.max_prs:
        return None
    return parse_time(merged[recipe.max_prs - 1].created_at)
