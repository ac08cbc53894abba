"""A synthetic repository with many pull requests (git fast-import) and its GitHub fixtures."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from builder.core.gitutil import git_env
from recipes.demo.github_objects import make_comment, make_fixtures, make_issue, make_pull

__all__ = ["KINDS", "SyntheticWorld", "build_world", "expected_outcome"]

_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
_MODULES = 10

KINDS: tuple[str, ...] = (
    *("good",) * 11,
    "graphql_only",
    "code_only",
    "code_only",
    "test_only",
    "no_link",
    "no_link",
    "not_merged",
    "links_a_pull",
    "good_uncommented",
)
"""PR kinds by ``index % 20``: 60 % become candidates, like a busy Python repository."""

_OUTCOMES = {
    "good": "kept",
    "good_uncommented": "kept",
    "graphql_only": "kept",
    "code_only": "no_test_change",
    "test_only": "no_code_change",
    "no_link": "no_linked_issue",
    "not_merged": "not_merged",
    "links_a_pull": "no_linked_issue",
}


def expected_outcome(index: int) -> str:
    """``kept`` or the drop reason value the ``index``-th PR is built to get."""
    return _OUTCOMES[KINDS[index % len(KINDS)]]


@dataclasses.dataclass(frozen=True)
class SyntheticWorld:
    """A bare repository with ``refs/pull/N/head`` and the matching API fixtures."""

    repo: str
    mirror: Path
    fixtures: dict[str, Any]
    pull_numbers: tuple[int, ...]  # index i has number 2 * i + 2; its issue is 2 * i + 1

    def instance_id(self, index: int) -> str:
        return f"{self.repo.replace('/', '__')}-{2 * index + 2}"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _data(text: str) -> str:
    return f"data {len(text.encode('utf-8'))}\n{text}\n"


def _module(k: int, extra: str = "") -> str:
    return f'"""Module {k}."""\n\n\ndef value_{k}():\n    return {k}\n' + extra


def _test(k: int, extra: str = "") -> str:
    header = f"from pkg.mod_{k} import value_{k}\n\n\n"
    return header + f"def test_value():\n    assert value_{k}() == {k}\n" + extra


def _stream(count: int) -> str:
    """A fast-import stream: ``main`` with the package, then one commit per PR head."""
    base_time = int(_EPOCH.timestamp())
    parts = [
        "commit refs/heads/main\nmark :1\n",
        f"author Base <base@example.invalid> {base_time} +0000\n",
        f"committer Base <base@example.invalid> {base_time} +0000\n",
        _data("Initial package"),
        "M 100644 inline README.md\n" + _data("# synthetic\n"),
    ]
    for k in range(_MODULES):
        parts.append(f"M 100644 inline pkg/mod_{k}.py\n" + _data(_module(k)))
        parts.append(f"M 100644 inline tests/test_mod_{k}.py\n" + _data(_test(k)))
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        number, issue, k = 2 * index + 2, 2 * index + 1, index % _MODULES
        when = base_time + 3600 * (index + 1) - 600
        message = f"Change {number}"
        parts += [
            f"commit refs/pull/{number}/head\nmark :{index + 2}\n",
            f"author Dev <dev@example.invalid> {when} +0000\n",
            f"committer Dev <dev@example.invalid> {when} +0000\n",
            _data(message + (f"\n\nFixes #{issue}" if kind == "good" and index % 3 == 0 else "")),
            "from :1\n",
        ]
        addition = f"\n\ndef helper_{number}():\n    return {number}\n"
        test_addition = f"\n\ndef test_helper_{number}():\n    assert True\n"
        if kind != "test_only":
            parts.append(f"M 100644 inline pkg/mod_{k}.py\n" + _data(_module(k, addition)))
        if kind != "code_only":
            test_file = _data(_test(k, test_addition))
            parts.append(f"M 100644 inline tests/test_mod_{k}.py\n" + test_file)
    return "".join(parts)


def _fixture_objects(repo: str, index: int, head: str, base: str) -> tuple[dict, list, dict]:
    kind = KINDS[index % len(KINDS)]
    number, issue = 2 * index + 2, 2 * index + 1
    created = _EPOCH + timedelta(hours=index + 1)
    merged = None if kind == "not_merged" else created + timedelta(minutes=30)
    body = {
        "good": f"Fixes #{issue}" if index % 3 else "See the commit.",
        "good_uncommented": f"closes: {repo}#{issue}",
        "graphql_only": "Linked in the sidebar.",
        "code_only": f"Fixes #{issue}",
        "test_only": f"Fixes #{issue}",
        "no_link": "A refactoring.",
        "not_merged": f"Fixes #{issue}",
        "links_a_pull": f"Fixes #{max(number - 2, 2)}",
    }[kind]
    pull = make_pull(
        repo,
        number,
        title=f"Change {number}",
        body=body,
        created_at=_stamp(created),
        closed_at=_stamp(created + timedelta(minutes=30)),
        merged_at=_stamp(merged) if merged else None,
        base_sha=base,
        head_sha=head,
    )
    commented = kind in ("good", "graphql_only") and index % 3 != 2
    comments = []
    if commented:
        comments = [
            make_comment(
                repo,
                issue,
                10 * number + j,
                body=f"Hint {j} for #{issue}",
                created_at=_stamp(created - timedelta(hours=2 - 2 * j)),
            )
            for j in range(2)  # the second one is after the first commit: not a hint
        ]
    issues = [
        make_issue(
            repo,
            issue,
            title=f"Problem {issue}",
            body=f"Something about module {index % _MODULES} is wrong ({issue}).",
            created_at=_stamp(created - timedelta(hours=3)),
            comments=len(comments),
        )
    ]
    return pull, issues, {issue: comments} if comments else {}


def build_world(root: Path, count: int, repo: str = "synth-org/synth") -> SyntheticWorld:
    """(Re)create ``root/mirror.git`` with ``count`` PR heads and return it with its fixtures.

    The first ``n`` PRs are the same for every ``count >= n``, so a bigger world is the
    smaller one plus newer PRs (an incremental collection's situation).
    """
    mirror = Path(root) / "mirror.git"
    if mirror.exists():
        shutil.rmtree(mirror)
    mirror.mkdir(parents=True)
    env = git_env()
    subprocess.run(["git", "init", "--quiet", "--bare", str(mirror)], check=True, env=env)
    marks = mirror / "marks"
    subprocess.run(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=mirror,
        input=_stream(count).encode("utf-8"),
        check=True,
        env=env,
    )
    shas = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    base = shas[":1"]
    pulls, issues, comments, closing = [], [], {}, {}
    for index in range(count):
        pull, issue_objects, comment_objects = _fixture_objects(
            repo, index, shas[f":{index + 2}"], base
        )
        pulls.append(pull)
        issues += issue_objects
        comments.update(comment_objects)
        if KINDS[index % len(KINDS)] == "graphql_only":
            closing[pull["number"]] = [2 * index + 1]
    fixtures = make_fixtures(
        repo, pulls=pulls, issues=issues, comments=comments, closing_issues=closing
    )
    numbers = tuple(2 * index + 2 for index in range(count))
    return SyntheticWorld(repo, mirror, fixtures, numbers)
