"""Text configs for a release dir: texts for every instance, written beside the plain configs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from builder.core.config import TextConfig
from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.progress import Progress
from builder.release.write import TextTable, write_text_configs
from builder.text.errors import TextError
from builder.text.release_dir import read_release
from builder.text.run import TextInput, TextRun, TextSettings, make_texts


def add_text_configs(
    dataset_dir: Path,
    settings: Sequence[TextSettings],
    repos: RepoCache,
    store: ResultStore,
    *,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> list[dict]:
    """Texts for every instance of the release in ``dataset_dir`` by each of ``settings``,
    written as text configs (card and manifest updated); returns the manifest's text entries.

    TextError (nothing written) when the dir is no release or an instance has no text
    (its repository or commit cannot be had, or an oracle cannot read its patch); the texts
    made are stored, so a rerun only does the rest."""
    instances = read_release(dataset_dir)
    tables = make_tables(instances, settings, repos, store, progress=progress, echo=echo)
    entries = write_text_configs(Path(dataset_dir), tables)
    written = sorted({entry["config"] for entry in entries if entry["name"] in
                      {table.name for table in tables}})  # fmt: skip
    echo(f"text configs written to {dataset_dir}: {', '.join(written)}")
    return entries


def make_tables(
    instances: Sequence[TextInput],
    settings: Sequence[TextSettings],
    repos: RepoCache,
    store: ResultStore,
    *,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> list[TextTable]:
    """The texts of ``instances`` by each of ``settings``, one table per config; TextError
    when an instance has no text (the texts made are stored for a rerun)."""
    tables = []
    for setting in settings:
        label = f"text {setting.retrieval} {setting.budget}"
        with Progress(label, "instance", enabled=progress, echo=echo) as bar:
            run = make_texts(instances, setting, repos, store, progress=bar)
        if run.failed:
            for instance_id, outcome, detail in run.failed:
                echo(f"  {instance_id}: {outcome.value}: {detail}")
            first = run.failed[0]
            raise TextError(
                f"{len(run.failed)} of {len(instances)} instances have no text "
                f"({setting.retrieval}), e.g. {first[0]}: {first[1].value}: {first[2]}; "
                "no text config written (the texts made are stored for a rerun)"
            )
        if run.reused:
            reused = f"{run.reused} of {len(instances)}"
            echo(f"text {setting.retrieval}: {reused} reused from the store")
        _report(run, setting, echo)
        construction = setting.construction
        for prompt in setting.prompts:
            texts = {instance_id: by_style[prompt] for instance_id, by_style in run.texts.items()}
            tables.append(
                TextTable(setting.config_name(prompt), setting.retrieval, setting.budget,
                          prompt, setting.tokenizer, texts, construction.name,
                          construction.swap_columns, run.skipped)
            )  # fmt: skip
    return tables


def _report(run: TextRun, setting: TextSettings, echo: Callable[[str], None]) -> None:
    """Prompt tokens (median, max) per prompt style, and the files mirrors lacked."""
    for prompt in setting.prompts:
        tokens = sorted(by_prompt[prompt] for by_prompt in run.tokens.values())
        if tokens:
            echo(
                f"text {setting.config_name(prompt)}: prompt tokens median "
                f"{tokens[len(tokens) // 2]}, max {tokens[-1]} "
                f"(budget {setting.budget}, {setting.tokenizer})"
            )
    for instance_id, paths in sorted(run.skipped.items()):
        echo(f"  {instance_id}: {len(paths)} file(s) missing from the mirror left out, "
             f"e.g. {paths[0]}")  # fmt: skip


def settings_of(text: TextConfig) -> list[TextSettings]:
    """One TextSettings per retrieval of the ``[text]`` settings."""
    return [
        TextSettings(retrieval, text.budget, tuple(text.prompts), text.tokenizer, text.style,
                     text.include_tests, text.templates)
        for retrieval in text.retrieval
    ]  # fmt: skip


__all__ = ["TextError", "add_text_configs", "make_tables", "settings_of"]
