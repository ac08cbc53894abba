"""The README and the docs site say what the code does: the generated settings reference covers
every model field, the architecture page states tests/test_layers.py's rules, and the paths,
commands and make targets the pages name exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from builder.cli import COMMANDS
from builder.core.config import Config
from builder.core.records import DropReason
from recipes.recipe import Recipe
from tests.support.layers import LAYERS
from validation.environments.specs import Entry, RepoSpec, Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
TEXTS = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
         for path in [ROOT / "README.md", *PAGES]}  # fmt: skip


def _hook():
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = _hook()


@pytest.mark.parametrize("name", sorted(REFERENCE.ROOTS))
def test_every_model_field_is_in_the_generated_reference_with_its_description(name: str) -> None:
    text = REFERENCE.render(name)
    root, _ = REFERENCE.ROOTS[name]
    for _, model, keys, _ in REFERENCE.sections(root):
        for key in keys:
            field_name = key.rpartition(".")[2]
            field = model.model_fields[field_name]
            rows = [line for line in text.splitlines() if line.startswith(f"| `{key}` |")]
            row = rows[0] if rows else None
            assert row is not None, f"{model.__name__}.{field_name} ({key}) is not in the reference"
            description = field.description
            assert description, (
                f"{model.__name__}.{field_name} has no description: give the field one "
                "(Field(description=...))"
            )
            assert description.replace("|", "\\|") in row, f"{key}: description missing"


def test_the_reference_covers_the_config_sections_specs_and_recipes() -> None:
    rendered = {
        model for root, _ in REFERENCE.ROOTS.values() for _, model, _, _ in REFERENCE.sections(root)
    }
    config_sections = {
        field.annotation for field in Config.model_fields.values()
        if isinstance(field.annotation, type) and issubclass(field.annotation, Config.__base__)
    }  # fmt: skip
    assert {Config, RepoSpec, Settings, Entry, Recipe, *config_sections} <= rendered
    fields = sum(len(keys) for root, _ in REFERENCE.ROOTS.values()
                 for _, _, keys, _ in REFERENCE.sections(root))  # fmt: skip
    assert fields > 80


def test_the_reference_page_holds_every_marker() -> None:
    page = (DOCS / "reference.md").read_text(encoding="utf-8")
    for name in REFERENCE.ROOTS:
        assert REFERENCE.MARKER.format(name=name) in page


def test_the_command_line_page_shows_every_commands_help() -> None:
    assert REFERENCE.MARKER.format(name="cli") in (DOCS / "cli.md").read_text(encoding="utf-8")
    text = REFERENCE.render_cli()
    for name in COMMANDS:
        assert f"### `swt-builder {name}`" in text
        assert f"usage: swt-builder {name}" in text


def test_every_drop_reason_is_documented() -> None:
    pages = "\n".join(TEXTS.values())
    missing = [reason.value for reason in DropReason if f"`{reason.value}`" not in pages]
    assert not missing, f"drop reasons no page explains: {missing}"


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024


def test_the_architecture_page_states_the_layer_rules() -> None:
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        found = re.match(r"\|\s*`([\w.]+)`\s*\|\s*(.*?)\s*\|", line)
        if found:
            rows[found.group(1)] = tuple(re.findall(r"`([\w.]+)`", found.group(2)))
    assert rows == {layer: allowed for layer, allowed in LAYERS.items()}


_PATH = re.compile(r"`((?:builder|recipes|validation|tests|benchmarks|docs)/[\w./-]*?)`")


@pytest.mark.parametrize("page", sorted(TEXTS))
def test_the_module_paths_the_pages_name_exist(page: str) -> None:
    missing = [
        path for path in _PATH.findall(TEXTS[page])
        if "*" not in path and "OWNER" not in path and not (ROOT / path).exists()
    ]  # fmt: skip
    assert not missing, f"{page} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", sorted(TEXTS))
def test_the_commands_and_targets_the_pages_name_exist(page: str) -> None:
    text = TEXTS[page]
    commands = set(re.findall(r"(?:`|/bin/)swt-builder ([a-z][\w-]*)", text))
    assert commands <= set(COMMANDS), f"{page} names unknown commands: {commands - set(COMMANDS)}"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))
    named = set(re.findall(r"(?:^|`)make ([a-z][\w-]*)", text, re.MULTILINE))
    assert named <= targets, f"{page} names make targets that do not exist: {named - targets}"


@pytest.mark.parametrize("page", sorted(TEXTS))
def test_no_page_narrates_the_projects_history(page: str) -> None:
    history = re.findall(r"(?i)\bsession \d+|\(was \d|\bwas \d+\b|\bre-?measured\b", TEXTS[page])
    assert not history, f"{page}: {history}"
