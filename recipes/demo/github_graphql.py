"""GitHub GraphQL as the replay server answers it: ``closingIssuesReferences`` of pull requests."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from recipes.demo.github_objects import WEB_URL
from recipes.demo.github_store import RepoData, github_error
from recipes.demo.loopback import Request, Response

__all__ = ["answer_graphql"]


def answer_graphql(store: Mapping[str, RepoData], request: Request) -> Response:
    """Answer one ``POST /graphql``: one pull request's closing issues, or several (aliases)."""
    if not request.headers.get("Authorization"):
        return github_error(401, "This endpoint requires you to be authenticated.")
    try:
        payload = request.json()
    except ValueError:
        return github_error(400, "Problems parsing JSON")
    query = str(payload.get("query") or "")
    variables = payload.get("variables") or {}
    if "closingIssuesReferences" not in query:
        return Response(200, _graphql_error("replay server only answers closingIssuesReferences"))
    owner, name, number = _graphql_target(query, variables)
    aliases = _ALIASED_PULL.findall(query)
    if aliases and owner is not None and name is not None:
        return Response(200, _aliased_answer(store, owner, name, aliases))
    if owner is None or name is None or (number is None and not aliases):
        wanted = "owner/name" if aliases else "owner/name/number"
        return Response(200, _graphql_error(f"could not find repository {wanted}"))
    return Response(200, _closing_issues_answer(store, owner, name, number))


def _aliased_answer(
    store: Mapping[str, RepoData], owner: str, name: str, aliases: list[tuple[str, str]]
) -> dict[str, Any]:
    """Answer ``alias: pullRequest(number: N) {...}`` fields, several PRs in one query."""
    pulls: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for alias, number in aliases:
        answer = _closing_issues_answer(store, owner, name, int(number))
        if "errors" in answer:
            if answer["data"]["repository"] is None:
                return answer
            pulls[alias] = None
            errors.append(dict(answer["errors"][0], path=["repository", alias]))
        else:
            pulls[alias] = answer["data"]["repository"]["pullRequest"]
    result: dict[str, Any] = {"data": {"repository": pulls}}
    if errors:
        result["errors"] = errors
    return result


def _closing_issues_answer(
    store: Mapping[str, RepoData], owner: str, name: str, number: int
) -> dict[str, Any]:
    repo = store.get(f"{owner}/{name}".lower())
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


def _closing_node(repo: RepoData, ref: int | Mapping[str, Any]) -> dict[str, Any]:
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
        "url": f"{WEB_URL}/{full_name}/issues/{number}",
        "repository": {"nameWithOwner": full_name},
    }
