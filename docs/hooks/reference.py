"""MkDocs hook: the settings reference, generated from the pydantic models at build time.

``reference.md`` holds a marker per file format; each is replaced by tables of that model's
keys (type, default, description), walked from the model itself so the page cannot drift.
``render(name)`` is what tests/test_docs.py checks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import enum
import json
import os
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from builder.core.config import (
    Config,
    DockerConfig,
    LiteConfig,
    PublishConfig,
    ReleaseConfig,
    RollingConfig,
    SourceConfig,
    ValidationConfig,
)
from recipes.recipe import Recipe
from validation.environments.specs import Entry, RepoSpec, Settings, VersionSection
from validation.environments.versioning import VersionRule

ROOTS: dict[str, tuple[type[BaseModel], str]] = {
    "config": (Config, "swt-builder.toml (or [tool.swt-builder] in pyproject.toml)"),
    "spec": (RepoSpec, "recipes/environments/OWNER__NAME.toml"),
    "recipe": (Recipe, "recipes/repos/OWNER__NAME.toml"),
}
"""Marker name → the model of that file and the file it describes."""

NOTES: dict[type[BaseModel], dict[str, str]] = {
    Config: {
        "name": "the dataset's name: its directory under output_dir",
        "output_dir": "where datasets are written; relative paths are relative to the file",
        "work_dir": "result store, environments, repository mirrors, logs",
        "executor": "where per-record tasks run (dask: on executor_scheduler)",
        "executor_scheduler": "address of a Dask scheduler, e.g. tcp://host:8786",
    },
    SourceConfig: {
        "kind": "swe-bench: SWE-bench-format records; github: collect by recipes",
        "split": "the split to read from a datasets dir or Hub dataset",
    },
    ValidationConfig: {"limits": "Resource limits of local test runs."},
    DockerConfig: {
        "build_timeout_s": "an environment image build past this is killed",
        "debian_mirror": "Debian mirror for `swt-builder images base` (debootstrap)",
        "pids_limit": "process limit of a test-run container",
    },
    LiteConfig: {
        "enabled": "write the lite config",
        "seed": "seed of the sample (random.Random(seed) over the sorted eligible ids)",
        "max_patch_files": "a golden patch touching more files is not Lite",
        "min_patch_hunks": "a golden patch with fewer hunks is not Lite",
        "max_patch_hunks": "a golden patch with more hunks is not Lite",
        "allow_added_or_deleted_files": "else a golden patch adding or deleting a file is not Lite",
        "problem_patterns": "name → regex; a problem statement matching one is not Lite",
        "test_patterns": "name → regex; golden tests adding a matching line are not Lite",
    },
    RollingConfig: {"monthly": "write one split per complete month"},
    ReleaseConfig: {
        "version": "MAJOR.MINOR.PATCH; higher than the previous release's, same MAJOR",
        "license": "the license in the dataset card",
    },
    PublishConfig: {
        "repo_id": "owner/name on the Hub (--repo-id and HF_REPO_ID win)",
        "private": "create a new repository as private",
        "endpoint": "Hub URL other than huggingface.co (HF_ENDPOINT wins)",
    },
    RepoSpec: {
        "schema_version": "the spec format's version",
        "repo": "owner/name",
        "note": "free text for maintainers",
        "version": "How an instance's version is read at its base commit (first rule that hits).",
        "defaults": "Settings of every entry; an entry's own fields win.",
        "environments": "Entries per version range (PEP 440); the first match wins.",
    },
    VersionSection: {
        "digits": "how many release numbers the version keeps: 1.4.2 → 1.4 with 2",
    },
    VersionRule: {
        "kind": "file: a regex over a file; metadata: the package metadata; git-tag: nearest tag",
        "path": "kind = file: the file; kind = metadata: the project dir (empty: the root)",
    },
    Entry: {"versions": "PEP 440 specifier of the versions this entry is for; empty: all"},
    Recipe: {"repo": "owner/name"},
    Settings: {
        "python": "X.Y; unset: the Python of the environment commit's era",
        "system_packages": "apt packages (Docker installs them; local checks they are there)",
        "pre_install": "shell commands run before installing",
        "extras": "the project's extras to install",
        "install": "project: install the project at the environment commit; none: deps only",
        "install_command": "a shell command run in the project checkout instead",
        "runner": "which runner and result parser run the tests",
        "env": "environment variables for builds and test runs",
    },
}
"""Descriptions for fields whose model gives none; a description in the model always wins."""

MARKER = "<!-- reference:{name} -->"
_LONG = 70
"""Defaults longer than this (as TOML text) are shown by their keys only."""


def sections(root: type[BaseModel]) -> list[tuple[str, type[BaseModel], list[str], str]]:
    """``(table header, model, its plain keys, intro)`` for ``root`` and every nested table."""
    found: list[tuple[str, type[BaseModel], list[str], str]] = []

    def walk(model: type[BaseModel], header: str, prefix: str, intro: str) -> None:
        plain, nested = [], []
        for name, field in model.model_fields.items():
            inner, many = _nested_model(field.annotation)
            if inner is None:
                plain.append(name)
            else:
                nested.append((name, field, inner, many))
        found.append((header, model, [prefix + name for name in plain], intro))
        for name, field, inner, many in nested:
            key = prefix + name
            text = field.description or note(model, name)
            default = _default(field)
            if many and default not in ("`[]`", "required"):
                text = " ".join(part for part in (text, f"Default: {default}.") if part)
            walk(inner, f"[[{key}]]" if many else f"[{key}]", key + ("[]." if many else "."), text)

    walk(root, "top level", "", "")
    return found


def render(name: str) -> str:
    """The Markdown reference of one file format (``config``, ``spec`` or ``recipe``)."""
    root, where = ROOTS[name]
    lines = [f"File: `{where}`. Unknown keys are errors.", ""]
    for header, model, keys, intro in sections(root):
        lines += [f"### `{header}`" if header != "top level" else "### Top level", ""]
        for text in (intro, _docstring(model)):
            if text:
                lines += [text, ""]
        if not keys:
            continue
        lines += ["| Key | Type | Default | Description |", "|---|---|---|---|"]
        for key in keys:
            field_name = key.rpartition(".")[2]
            field = model.model_fields[field_name]
            cells = [
                f"`{key}`",
                _type(field.annotation),
                _default(field),
                _description(model, field_name, field),
            ]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def render_cli() -> str:
    """Every command's ``--help``, as argparse prints it (subcommands of a command too)."""
    from builder.cli import parser

    lines: list[str] = []

    def add(title: str, command: argparse.ArgumentParser) -> None:
        lines.extend([f"### `{title}`", "", "```text", command.format_help().rstrip(), "```", ""])
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    add(f"{title} {name}", sub)

    os.environ.setdefault("COLUMNS", "100")
    top = parser()
    lines.extend(["```text", top.format_help().rstrip(), "```", ""])
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                add(f"swt-builder {name}", sub)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker by its generated text."""
    for name in ROOTS:
        markdown = markdown.replace(MARKER.format(name=name), render(name))
    return markdown.replace(MARKER.format(name="cli"), render_cli())


def _nested_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model a field holds (and whether it is a list of them), or None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, tuple) and args:
        inner, _ = _nested_model(args[0])
        return (inner, True) if inner is not None else (None, False)
    return None, False


def _docstring(model: type[BaseModel]) -> str:
    doc = model.__doc__ or ""
    if not doc or doc == BaseModel.__doc__:
        return ""
    return " ".join(doc.split())


def _type(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{json.dumps(arg)}`" for arg in args)
    if origin in (typing.Union, types.UnionType):
        present = [arg for arg in args if arg is not type(None)]
        text = " or ".join(_type(arg) for arg in present)
        return f"{text} (optional)" if len(present) < len(args) else text
    if origin in (list, tuple):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return f"table of {_type(args[0])} → {_type(args[1])}" if args else "table"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path",
             dt.date: "date", dt.datetime: "date-time"}  # fmt: skip
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default is PydanticUndefined else field.default
    if value is None:
        return "unset"
    if isinstance(value, BaseModel):
        return "see its table"
    text = _toml(value)
    if len(text) > _LONG and isinstance(value, dict):
        return "keys " + ", ".join(f"`{key}`" for key in value)
    if len(text) > _LONG and isinstance(value, (list, tuple)):
        return ", ".join(f"`{_toml(item)}`" for item in value)
    return f"`{text}`"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, Path):
        return json.dumps(str(value))
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json", exclude_defaults=True))
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return json.dumps(value)


def note(model: type[BaseModel], name: str) -> str:
    """The docs' description of a field the model leaves undescribed ("" when none)."""
    for klass in model.__mro__:
        if name in NOTES.get(klass, {}):
            return NOTES[klass][name]
    return ""


def _description(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    text = field.description or note(model, name)
    parts = [text] if text else []
    bounds = []
    for item in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if getattr(item, attr, None) is not None:
                bounds.append(f"{sign} {getattr(item, attr)}")
        if getattr(item, "pattern", None):
            bounds.append(f"matches `{item.pattern}`")
        if getattr(item, "min_length", None):
            bounds.append(f"at least {item.min_length} item(s)")
    if bounds:
        parts.append("(" + "; ".join(bounds) + ")")
    return " ".join(parts)
