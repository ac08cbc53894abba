"""Texts for every instance of a release: retrieval, budget and prompts per instance, each
result kept in the store (a rerun reuses it), one repository snapshot reused across instances
of the same repository and commit."""

from __future__ import annotations

import dataclasses
import enum
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from unidiff.errors import UnidiffParseError

from builder.core.gitutil import GitError
from builder.core.repos import RepoCache, RepoUnavailable
from builder.core.store import ResultStore, result_key
from builder.text import context, named, prompts, retrieval
from builder.text.construction import CONSTRUCTIONS, Construction, is_root_readme
from builder.text.errors import TextError
from builder.text.files import SourceFile, Tree, read_tree
from builder.text.named import NameIndex, fused_hits, issue_first
from builder.text.tokens import token_counter

STAGE = "text"
SNAPSHOTS_KEPT = 2
"""Repository snapshots (files, index, token counts) held in memory at once."""


class TextOutcome(str, enum.Enum):
    """Why an instance has no text."""

    REPO_UNAVAILABLE = "repo_unavailable"  # no mirror, or the base commit is not in it
    UNREADABLE_PATCH = "unreadable_patch"  # an oracle needs the golden patch's files


@dataclasses.dataclass(frozen=True)
class TextSettings:
    """One retrieval at one budget, counted in one tokenizer, in some prompt styles, made
    the way of one construction (``construction.CONSTRUCTIONS``)."""

    retrieval: str
    budget: int
    prompts: tuple[str, ...]
    tokenizer: str
    style: str = "swe-bench"
    include_tests: bool = True
    templates: Path | None = None
    """A directory of replacement templates (``zsb.jinja``, ``zsp.jinja``); None: bundled."""

    @property
    def construction(self) -> Construction:
        if self.style not in CONSTRUCTIONS:
            raise TextError(f"text style {self.style!r} is not one of {', '.join(CONSTRUCTIONS)}")
        return CONSTRUCTIONS[self.style].with_tests(self.include_tests)

    def config_name(self, prompt: str) -> str:
        """``bm25_27k_zsp``: retrieval (``+`` as ``_``; ``_notests`` when test files are
        left out), budget (in k when whole), prompt style; ``all_text_`` in front for the
        all-text style."""
        budget = f"{self.budget // 1000}k" if self.budget % 1000 == 0 else str(self.budget)
        retrieval = self.retrieval.replace("+", "_") + ("" if self.include_tests else "_notests")
        prefix = "" if self.style == "swe-bench" else self.style.replace("-", "_") + "_"
        return f"{prefix}{retrieval}_{budget}_{prompt}"

    def template(self, prompt: str) -> str:
        return prompts.template_source(prompt, self.templates)

    def key(self) -> dict[str, Any]:
        templates = {prompt: self.template(prompt) for prompt in sorted(self.prompts)}
        key = {"retrieval": self.retrieval, "budget": self.budget,
               "prompts": sorted(self.prompts), "tokenizer": self.tokenizer,
               "construction": dataclasses.asdict(self.construction),
               "templates": templates}  # fmt: skip
        if self.retrieval == "issue+bm25":  # a stored text made by other rules is not reused
            key["issue_ranking"] = named.rules()
        return key


@dataclasses.dataclass
class TextRun:
    """Per instance id: the texts (prompt style → prompt), their tokens, the files a mirror
    could not produce; what was reused, and what failed."""

    texts: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    files: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    skipped: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    reused: int = 0
    failed: list[tuple[str, TextOutcome, str]] = dataclasses.field(default_factory=list)


class _Snapshot:
    """The indexable files of one repository at one commit (and those its mirror lacks),
    the corpus, BM25 index and name index of each construction (made at first use) and the
    token counts of its file blocks."""

    def __init__(self, tree: Tree) -> None:
        self.files = list(tree.files)
        self.missing = list(tree.missing)
        self.texts = {file.path: file.text for file in tree.files}
        self.readmes = [file for file in tree.files if is_root_readme(file.path)]
        self._indexes: dict[Construction, retrieval.Bm25Index] = {}
        self._names: dict[Construction, NameIndex] = {}
        self._tokens: dict[str, int] = {}

    def corpus(self, construction: Construction) -> dict[str, str]:
        return {path: text for path, text in self.texts.items() if construction.indexed(path)}

    def index(self, construction: Construction) -> retrieval.Bm25Index:
        if construction not in self._indexes:
            files = [f for f in self.files if construction.indexed(f.path)]
            self._indexes[construction] = retrieval.Bm25Index(files, construction)
        return self._indexes[construction]

    def names(self, construction: Construction) -> NameIndex:
        if construction not in self._names:
            files = [f for f in self.files if construction.indexed(f.path)]
            self._names[construction] = NameIndex(files)
        return self._names[construction]

    def counter(self, count: Callable[[str], int]) -> Callable[[str, str], int]:
        def tokens(path: str, block: str) -> int:
            if path not in self._tokens:
                self._tokens[path] = count(block)
            return self._tokens[path]

        return tokens


class TextInput(Protocol):
    """What a text is made from: an Instance, or a record read without a build."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str


_INPUT_FIELDS = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch")
"""What an instance's text depends on (with the settings)."""


def _input(instance: TextInput) -> dict[str, str]:
    return {field: getattr(instance, field) for field in _INPUT_FIELDS}


def _ranked(instance: TextInput, snapshot: _Snapshot, settings: TextSettings) -> list[str]:
    construction, issue = settings.construction, prompts.shown_issue(instance.problem_statement)
    if settings.retrieval == "bm25":
        return snapshot.index(construction).rank(issue)
    if settings.retrieval == "issue+bm25":
        files_named = snapshot.names(construction).named(issue)
        hits = fused_hits(snapshot.index(construction).hits, issue)
        return issue_first(files_named, hits, snapshot.texts)
    with_tests = settings.retrieval == "oracle+tests"
    return retrieval.oracle(instance.patch, instance.test_patch, with_tests)


def make_texts(
    instances: Sequence[TextInput],
    settings: TextSettings,
    repos: RepoCache,
    store: ResultStore,
    progress: Any = None,
    snapshots: OrderedDict[tuple[str, str], _Snapshot] | None = None,
) -> TextRun:
    """The prompts of ``instances`` (in each style of ``settings``), reused from ``store``
    when present; instances of one repository and commit share one snapshot. An instance
    whose repository or commit cannot be had, or whose patch an oracle cannot read, is in
    ``failed`` with its outcome (and is not stored: a rerun tries it again). ``snapshots``
    (an empty OrderedDict to start) carries them from one call to the next. A file of the
    corpus whose blob the mirror lacks is left out and named in ``skipped``."""
    count = token_counter(settings.tokenizer)
    run = TextRun()
    snapshots = OrderedDict() if snapshots is None else snapshots
    ordered = sorted(instances, key=lambda i: (i.repo, i.base_commit, i.instance_id))
    if progress is not None:
        progress.reset(len(ordered))
    for instance in ordered:
        key = result_key(STAGE, settings.key(), _input(instance))
        result = store.get(STAGE, key)
        if result is not None:
            run.reused += 1
        else:
            result = _compute(instance, settings, repos, snapshots, count, run)
            if result is not None:
                store.put(STAGE, key, result)
        if result is not None:
            run.texts[instance.instance_id] = result["texts"]
            run.tokens[instance.instance_id] = result["tokens"]
            run.files[instance.instance_id] = result["files"]
            if result["skipped"]:
                run.skipped[instance.instance_id] = result["skipped"]
        if progress is not None:
            progress.update(1)
    return run


def _compute(instance, settings, repos, snapshots, count, run) -> dict[str, Any] | None:
    where = (instance.repo, instance.base_commit)
    snapshot = snapshots.get(where)
    if snapshot is None:
        try:
            mirror = repos.mirror(instance.repo, instance.base_commit)
            snapshot = _Snapshot(read_tree(mirror, instance.base_commit))
        except (RepoUnavailable, GitError) as error:
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            run.failed.append((instance.instance_id, TextOutcome.REPO_UNAVAILABLE, detail))
            return None
        snapshots[where] = snapshot
        while len(snapshots) > SNAPSHOTS_KEPT:
            snapshots.popitem(last=False)
    snapshots.move_to_end(where)
    try:
        ranked = _ranked(instance, snapshot, settings)
    except UnidiffParseError as error:
        run.failed.append((instance.instance_id, TextOutcome.UNREADABLE_PATCH, str(error)))
        return None
    construction = settings.construction
    oracle = settings.retrieval.startswith("oracle")
    texts = snapshot.texts if oracle else snapshot.corpus(construction)
    result: dict[str, Any] = {"files": {}, "tokens": {}, "texts": {}}
    for prompt in settings.prompts:
        paths, text = _prompt(instance, settings, prompt, snapshot, ranked, texts, count)
        result["files"][prompt], result["texts"][prompt] = paths, text
        result["tokens"][prompt] = count(text)
    wanted = (lambda path: path in ranked) if oracle else construction.indexed
    result["skipped"] = [path for path in snapshot.missing if wanted(path)]
    return result


def _prompt(instance, settings, prompt, snapshot, ranked, texts, count) -> tuple[list[str], str]:
    """The files shown and the prompt: files chosen by rank within what the budget leaves
    (after the prompt without files, when it bounds the whole prompt), shown in the
    construction's order; the lowest-ranked file left out while the prompt is over budget."""
    construction, template = settings.construction, settings.template(prompt)
    issue = prompts.shown_issue(instance.problem_statement)
    readmes = snapshot.readmes if construction.readmes else []
    budget = settings.budget
    if construction.budget_scope == "prompt":
        budget -= count(prompts.render(template, issue, readmes, []))
    chosen = list(context.select(ranked, texts, budget, snapshot.counter(count)).paths)
    while True:
        shown = sorted(chosen) if construction.order == "path" else chosen
        files = [SourceFile(path, texts[path]) for path in shown]
        text = prompts.render(template, issue, readmes, files)
        if construction.budget_scope != "prompt" or not chosen or count(text) <= settings.budget:
            return shown, text
        chosen.pop()
