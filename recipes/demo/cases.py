"""The demo's data files (recipes/demo/data): its repository history and its pull requests."""

from __future__ import annotations

import dataclasses
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import tomllib

__all__ = [
    "DATA",
    "DEMO_REPO",
    "HISTORY",
    "PULLS",
    "VERSION",
    "Commit",
    "Issue",
    "Pull",
    "copy_tree",
]

DEMO_REPO = "swt-demo/calc"
VERSION = "0.1"
DATA: Traversable = files("recipes.demo") / "data"
"""``repo/`` (the tree after the last commit), ``history.toml`` and ``pulls/NN.toml``."""


@dataclasses.dataclass(frozen=True)
class Commit:
    """One commit of the demo's linear ``main``: what it changed (empty for the first)."""

    message: str
    date: str
    diff: str = ""


@dataclasses.dataclass(frozen=True)
class Issue:
    """The issue a pull request is about; ``hints`` are its comments before the first commit."""

    number: int
    title: str
    body: str = ""
    hints: tuple[str, ...] = ()
    late_comment: str = ""  # a comment after the PR's first commit (not a hint)


@dataclasses.dataclass(frozen=True)
class Pull:
    """One demo pull request, and the SWE-bench-format record of it when ``record`` is set.

    ``fork`` and ``base`` index :data:`HISTORY`: the diffs are made at ``fork`` (the merge
    base) and the API reports ``base`` as ``base.sha``, the record's ``base_commit``; a
    ``fork`` older than ``base`` gives a PR that no longer applies where it is to be merged.
    ``expected`` is the outcome through the GitHub path, ``record`` the record's.
    """

    number: int
    title: str
    body: str
    created_at: str
    base: int
    expected: str
    fork: int | None = None
    record: str | None = None
    merged: bool = True
    commit_message: str = ""
    closing_issues: tuple[int, ...] = ()  # GitHub's own closing references (GraphQL)
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    patch: str = ""
    test_patch: str = ""
    issue: Issue | None = None

    @property
    def instance_id(self) -> str:
        return f"{DEMO_REPO.replace('/', '__')}-{self.number}"

    @property
    def fork_point(self) -> int:
        return self.base if self.fork is None else self.fork

    @property
    def problem_statement(self) -> str:
        return f"{self.issue.title}\n\n{self.issue.body}" if self.issue else ""


def _tuples(table: dict) -> dict:
    return {key: tuple(value) if isinstance(value, list) else value for key, value in table.items()}


def _pull(item: Traversable) -> Pull:
    """One ``pulls/NN.toml``; a key the dataclasses do not know is an error naming the file."""
    table = _tuples(tomllib.loads(item.read_text("utf-8")))
    issue = table.pop("issue", None)
    try:
        return Pull(**table, issue=Issue(**_tuples(issue)) if issue else None)
    except TypeError as error:
        raise ValueError(f"recipes/demo/data/pulls/{item.name}: {error}") from error


def copy_tree(source: Traversable, target: Path) -> None:
    """Copy a data directory (it may live in a wheel) to ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_dir():
            if item.name != "__pycache__":
                copy_tree(item, target / item.name)
        else:
            (target / item.name).write_bytes(item.read_bytes())


HISTORY: tuple[Commit, ...] = tuple(
    Commit(**table) for table in tomllib.loads((DATA / "history.toml").read_text("utf-8"))["commit"]
)
PULLS: tuple[Pull, ...] = tuple(
    sorted(
        (_pull(item) for item in (DATA / "pulls").iterdir() if item.name.endswith(".toml")),
        key=lambda pull: pull.number,
    )
)
