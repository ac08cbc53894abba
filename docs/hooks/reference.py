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

from builder.core.config import Config
from recipes.recipe import Recipe
from validation.environments.specs import RepoSpec

ROOTS: dict[str, tuple[type[BaseModel], str]] = {
    "config": (Config, "swt-builder.toml (or [tool.swt-builder] in pyproject.toml)"),
    "spec": (RepoSpec, "recipes/environments/OWNER__NAME.toml"),
    "recipe": (Recipe, "recipes/repos/OWNER__NAME.toml"),
}
"""Marker name → the model of that file and the file it describes."""

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
            text = field.description or ""
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
                _description(field),
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


def _description(field: FieldInfo) -> str:
    parts = [field.description] if field.description else []
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
