"""The collect stage: judge each listed PR into a Candidate or a named drop; run recipes."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from builder.core.config import SizesConfig
from builder.core.executor import Executor
from builder.core.faults import InfrastructureError
from builder.core.gitutil import GitError
from builder.core.pipeline import Outcome, RejectedLog, Stage, StageStats, run_stage
from builder.core.records import Candidate, DropReason
from builder.core.repos import CommitNotFound, RepoCache, RepoUnavailable
from builder.core.sizes import oversized
from builder.core.store import ResultStore, result_key
from recipes.github.client import GitHubClient, web_hosts_for
from recipes.github.fields import (
    IssueFacts,
    closing_issue_numbers,
    closing_issue_numbers_batch,
    fetch_issue,
    hints_before,
    pull_commits,
)
from recipes.github.listing import Listing, PullRecord, RepoState, list_pulls
from recipes.linking import closing_references
from recipes.patch_split import SplitPatch, UnparsableDiff, split_patch
from recipes.recipe import Recipe

__all__ = ["STAGE", "SOURCE_NAME", "CollectRun", "CollectStage", "collect", "github_instance"]

STAGE = "collect"
SOURCE_NAME = "github"


def github_instance(base_url: str) -> str:
    """Which GitHub an API URL serves: ``github.com``, or the Enterprise server's host name."""
    host = (urlsplit(base_url).hostname or "").lower()
    return "github.com" if host in ("", "api.github.com", "github.com") else host


class CollectStage(Stage):
    """PR → Candidate: diff and commits from the mirror, linked issues and hints from the API.

    Cheap checks (merged, diff, test/code split, limits) come first so that PRs that cannot
    become candidates cost no API call; a PR that passes them costs its share of a batched
    GraphQL call (:meth:`prefetch`, 50 PRs per call, when enabled and authenticated), one
    call per referenced number and one per linked issue that has comments.
    """

    name = STAGE
    output_model = Candidate

    def __init__(
        self,
        recipe: Recipe,
        client: GitHubClient,
        repos: RepoCache,
        sizes: SizesConfig | None = None,
    ) -> None:
        self.recipe = recipe
        self.sizes = sizes or SizesConfig()
        self.client = client
        self.repos = repos
        self.rules = recipe.path_rules
        self.web_hosts = web_hosts_for(client.base_url)
        self.use_graphql = recipe.linking.graphql and client.authenticated
        self.closing: dict[int, list[int]] = {}

    def prefetch(self, pulls: Sequence[PullRecord], store: ResultStore) -> None:
        """Ask GitHub's closing references of the merged PRs not yet judged, in batches."""
        if not self.use_graphql:
            return
        pending = [
            p.number for p in pulls if p.merged_at and store.get(self.name, self.key(p)) is None
        ]
        self.closing.update(closing_issue_numbers_batch(self.client, self.recipe.repo, pending))

    def fingerprint(self) -> Any:
        """The recipe, which GitHub the pull requests are on, and whether GraphQL is asked.

        A PR is identified by its repository and number on one GitHub, so the API URL counts
        only by its host: ``github.com`` for https://api.github.com, an Enterprise server by
        its host name. Scheme, port and path are how it was reached, not what it holds (the
        demo's loopback server gets a new port on every run).
        """
        fingerprint = {
            "recipe": self.recipe.fingerprint(),
            "github": github_instance(self.client.base_url),
            "graphql": self.use_graphql,
        }
        if self.sizes != SizesConfig():  # the defaults leave the keys stored before them
            fingerprint["sizes"] = self.sizes.model_dump()
        return fingerprint

    def key(self, record: PullRecord) -> str:  # type: ignore[override]
        return result_key(self.name, self.fingerprint(), record.stable_fields())

    def process(self, record: PullRecord) -> Outcome:  # type: ignore[override]
        drop = _Dropper(record)
        if not record.merged_at:
            return drop(DropReason.NOT_MERGED, state=record.state)
        try:
            mirror = self.repos.mirror(record.repo, record.head_sha)
            self.repos.mirror(record.repo, record.base_sha)
            commits = pull_commits(mirror, record.base_sha, record.head_sha)
        except CommitNotFound as error:  # the repository answered: it has no such commit
            return drop(DropReason.COMMITS_UNAVAILABLE, error=str(error))
        except RepoUnavailable as error:  # no way to the repository: tried again next run
            return drop(DropReason.INFRA_ERROR, **error.evidence())
        except GitError as error:  # a mirror git cannot read (an object missing, say)
            fault = InfrastructureError(f"{record.repo}: {error}", fault="repository")
            return drop(DropReason.INFRA_ERROR, **fault.evidence())
        try:
            split = split_patch(commits.diff, self.rules)
        except UnparsableDiff as error:
            return drop(DropReason.DIFF_UNPARSABLE, error=str(error))
        problem = self._check_split(split, drop)
        if problem is not None:
            return problem
        numbers, linked_by = self._references(record, commits.messages)
        if not numbers:
            return drop(DropReason.NO_LINKED_ISSUE, searched=linked_by)
        facts = [fetch_issue(self.client, record.repo, n) for n in numbers]
        issues = [fact for fact in facts if fact.kind == "issue"]
        if not issues:
            found = ", ".join(f"#{fact.number} ({fact.kind.replace('_', ' ')})" for fact in facts)
            return drop(DropReason.NO_LINKED_ISSUE, references=found)
        if not any(issue.body.strip() for issue in issues):
            numbers_text = ", ".join(f"#{issue.number}" for issue in issues)
            return drop(DropReason.EMPTY_PROBLEM_STATEMENT, issues=numbers_text)
        candidate = self._candidate(record, split, issues, commits.first_commit_at)
        over = oversized(candidate, self.sizes)
        if over:
            return drop(DropReason.OVERSIZED_RECORD, **over)
        return Outcome.keep(
            STAGE,
            candidate,
            pull=str(record.number),
            issues=",".join(str(issue.number) for issue in issues),
        )

    def _check_split(self, split: SplitPatch, drop: _Dropper) -> Outcome | None:
        if not split.test_files:
            return drop(DropReason.NO_TEST_CHANGE, files=_listed(split.code_files))
        if not split.code_files:
            return drop(DropReason.NO_CODE_CHANGE, files=_listed(split.test_files))
        if split.binary_code_files:
            return drop(DropReason.BINARY_CODE_CHANGE, files=_listed(split.binary_code_files))
        paths = self.recipe.paths
        python = [f for f in split.code_files if _matches(f, paths.python_code)]
        if paths.require_python_code and not python:
            return drop(DropReason.NO_PYTHON_CODE_CHANGE, files=_listed(split.code_files))
        changed = len(split.code_files) + len(split.test_files)
        if changed > self.recipe.limits.max_files:
            return drop(
                DropReason.TOO_MANY_FILES,
                files=str(changed),
                limit=str(self.recipe.limits.max_files),
            )
        bad = [path for path, text in _sections(split) if _has_surrogates(text)]
        if bad:
            return drop(DropReason.DIFF_NOT_UTF8, files=_listed(bad))
        return None

    def _references(self, record: PullRecord, messages: Sequence[str]) -> tuple[list[int], str]:
        """Issue numbers the PR closes, by its text and by GitHub; and what was searched."""
        texts = [record.title, record.body]
        searched = ["title", "body"]
        if self.recipe.linking.commit_messages:
            texts += list(messages)
            searched.append(f"{len(messages)} commit message(s)")
        found: list[int] = []
        for text in texts:
            found += closing_references(text, record.repo, self.web_hosts)
        if self.use_graphql:
            closing = self.closing.get(record.number)
            if closing is None:
                closing = closing_issue_numbers(self.client, record.repo, record.number)
            found += closing
            searched.append("closingIssuesReferences")
        numbers = sorted({n for n in found if n != record.number})
        return numbers, ", ".join(searched)

    def _candidate(
        self,
        record: PullRecord,
        split: SplitPatch,
        issues: list[IssueFacts],
        first_commit_at: Any,
    ) -> Candidate:
        hints: list[str] = []
        for issue in issues:
            hints += hints_before(self.client, record.repo, issue, first_commit_at)
        return Candidate(
            instance_id=record.instance_id,
            repo=record.repo,
            base_commit=record.base_sha,
            patch=split.patch,
            test_patch=split.test_patch,
            problem_statement="".join(f"{i.title}\n{i.body}\n" for i in issues),
            hints_text="\n".join(hints),
            created_at=record.created_at,
            version=self.recipe.version,
            pull_number=record.number,
            issue_numbers=tuple(issue.number for issue in issues),
            issue_created_at=tuple(issue.created_at for issue in issues),
            merged_at=record.merged_at,
            source=SOURCE_NAME,
        )


class _Dropper:
    """Builds drop outcomes that all carry the PR's number."""

    def __init__(self, record: PullRecord) -> None:
        self.pull = str(record.number)

    def __call__(self, reason: DropReason, **evidence: str) -> Outcome:
        return Outcome.drop(STAGE, reason, pull=self.pull, **evidence)


def _listed(paths: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" (+{len(paths) - limit} more)" if len(paths) > limit else "")


def _matches(path: str, patterns: Sequence[str]) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _sections(split: SplitPatch) -> list[tuple[str, str]]:
    """(path, text) of each file section, to name the files that are not UTF-8."""
    out = []
    for text in (split.patch, split.test_patch):
        for chunk in re.split(r"(?m)^(?=diff --git )", text):
            if chunk:
                out.append((chunk.split("\n", 1)[0].rsplit(" b/", 1)[-1], chunk))
    return out


@dataclasses.dataclass
class CollectRun:
    """What one collect run made: candidates in order, per-recipe listings and the client."""

    candidates: list[Candidate]
    listings: dict[str, Listing]
    client: GitHubClient
    stats: StageStats


def collect(
    recipes: Sequence[Recipe],
    client: GitHubClient,
    *,
    work_dir: Path,
    state_dir: Path,
    repos: dict[str, str],
    store: ResultStore,
    rejected: RejectedLog,
    echo: Callable[[str], None] = print,
    progress: Any = None,
    sizes: SizesConfig | None = None,
) -> CollectRun:
    """List each recipe's PRs, judge them (stored per PR, so a crashed run resumes), save state.

    The repository state is saved only once every listed PR has a stored result.
    """
    stats = StageStats(STAGE)
    cache = RepoCache(Path(work_dir) / "repos", repos)
    candidates: list[Candidate] = []
    listings: dict[str, Listing] = {}
    seen: set[str] = set()
    for recipe in recipes:
        before = client.total_calls
        # the listing state, like the results, belongs to the GitHub, not to the URL's port
        state = RepoState.load(state_dir, recipe.repo, github_instance(client.base_url))
        listing = list_pulls(client, recipe, state)
        listings[recipe.repo] = listing
        stage = CollectStage(recipe, client, cache, sizes)
        if recipe.linking.graphql and not stage.use_graphql:
            echo(f"collect {recipe.repo}: no token, so GitHub's closing references are not asked")
        stage.prefetch(listing.pulls, store)
        recipe_stats = StageStats(STAGE)
        kept = run_stage(
            stage,
            listing.pulls,
            store=store,
            executor=Executor("threads", 1),
            rejected=rejected,
            stats=recipe_stats,
            progress=progress,
        )
        for candidate in kept:
            if candidate.instance_id not in seen:
                seen.add(candidate.instance_id)
                candidates.append(candidate)
        listing.state.save(state_dir)
        stats = stats + recipe_stats
        mode = "incremental" if listing.incremental else "full"
        echo(
            f"collect {recipe.repo}: {recipe_stats.seen} PRs in range "
            f"({listing.pages} list page(s), {mode} listing), {recipe_stats.kept} candidates, "
            f"{recipe_stats.cached} already in the store, "
            f"{client.total_calls - before} API calls"
        )
    return CollectRun(candidates, listings, client, stats)


def collect_for_config(
    config: Any,
    store: ResultStore,
    rejected: RejectedLog,
    *,
    echo: Callable[[str], None] = print,
    progress: Any = None,
    tokens: list[str] | None = None,
) -> CollectRun:
    """Run ``config.source.recipes`` against ``config.source.base_url`` (tokens from the env)."""
    from recipes.github.client import RetryPolicy, tokens_from_environment
    from recipes.recipe import RecipeError, load_recipe

    source = config.source
    if not source.recipes:
        raise RecipeError("source.kind = 'github' needs source.recipes (recipe TOML files)")
    recipes = [load_recipe(path) for path in source.recipes]
    client = GitHubClient(
        source.base_url,
        tokens_from_environment() if tokens is None else tokens,
        RetryPolicy(max_wait_s=source.max_wait_s),
    )
    state_dir = Path(source.state_dir) if source.state_dir else config.work_dir / "github-state"
    run = collect(
        recipes,
        client,
        work_dir=config.work_dir,
        state_dir=state_dir,
        repos=dict(config.repos),
        store=store,
        rejected=rejected,
        echo=echo,
        progress=progress,
        sizes=config.sizes,
    )
    echo(f"collect: {len(run.candidates)} candidates; GitHub API: {client.summary()}")
    return run
