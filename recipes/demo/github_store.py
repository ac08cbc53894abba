"""GitHub fixtures indexed for serving (pulls, issues, comments by number) and GitHub's errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipes.demo.github_objects import make_repo, split_repo
from recipes.demo.loopback import Response

__all__ = ["RepoData", "github_error", "index_fixtures", "invalid", "not_found"]

_DOCS = "https://docs.github.com/rest"


@dataclass
class RepoData:
    """One repository's fixtures, indexed by number."""

    full_name: str
    repo: dict[str, Any]
    pulls: dict[int, dict[str, Any]]
    issues: dict[int, dict[str, Any]]
    comments: dict[int, list[dict[str, Any]]]
    closing_issues: dict[int, list[int | dict[str, Any]]]


def index_fixtures(fixtures: Mapping[str, Any]) -> dict[str, RepoData]:
    """Index fixtures by lower-cased ``owner/name`` (GitHub paths are case-insensitive)."""
    store: dict[str, RepoData] = {}
    for full_name, entry in fixtures.items():
        split_repo(full_name)
        store[full_name.lower()] = RepoData(
            full_name=full_name,
            repo=dict(entry.get("repo") or make_repo(full_name)),
            pulls={int(p["number"]): p for p in entry.get("pulls", ())},
            issues={int(i["number"]): i for i in entry.get("issues", ())},
            comments=_by_number(entry.get("comments")),
            closing_issues=_by_number(entry.get("closing_issues")),
        )
    return store


def _by_number(mapping: Mapping[Any, list[Any]] | None) -> dict[int, list[Any]]:
    """Turn a mapping keyed by numbers (or their JSON strings) into one keyed by ints."""
    return {int(key): list(value) for key, value in (mapping or {}).items()}


def github_error(code: int, message: str, **extra: Any) -> Response:
    """A GitHub-style JSON error answer."""
    return Response(code, {"message": message, "documentation_url": _DOCS, **extra})


def not_found() -> Response:
    return github_error(404, "Not Found", status="404")


def invalid(field_name: str) -> Response:
    """GitHub's 422 for a query parameter it does not accept."""
    error = {"field": field_name, "code": "invalid"}
    return github_error(422, "Validation Failed", errors=[error], status="422")
