"""The prompts: Jinja2 templates per style — ZeroShot (``zsb``: a unified diff) and
ZeroShotPlus (``zsp``: the function-level format) — rendered with the issue, the root READMEs
and the files shown."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from builder.text.context import code_text
from builder.text.errors import TextError
from builder.text.files import SourceFile

STYLES = ("zsb", "zsp")
TEMPLATES = Path(__file__).with_name("templates")
"""The bundled templates, ``<style>.jinja``."""


def template_source(style: str, directory: Path | None = None) -> str:
    """The text of ``style``'s template: ``directory/<style>.jinja`` when a directory is
    given (a replacement), else the bundled one. TextError when there is none."""
    if style not in STYLES:
        raise TextError(f"prompt style {style!r} is not one of {', '.join(STYLES)}")
    path = Path(directory or TEMPLATES) / f"{style}.jinja"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise TextError(f"prompt template {path}: {error.strerror or error}") from error


@functools.lru_cache(maxsize=16)
def _compiled(source: str):
    import jinja2

    environment = jinja2.Environment(
        keep_trailing_newline=True, autoescape=False, undefined=jinja2.StrictUndefined
    )
    environment.filters["code_text"] = code_text
    try:
        return environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise TextError(f"prompt template, line {error.lineno}: {error.message}") from error


def render(
    source: str, issue: str, readmes: Sequence[SourceFile], files: Sequence[SourceFile]
) -> str:
    """The prompt of one instance: template ``source`` given ``issue`` (the problem
    statement as it is), ``readmes`` and ``files`` (each with ``path`` and ``text``, in the
    order shown); the filter ``code_text`` renders files as SWE-bench does."""
    import jinja2

    try:
        return _compiled(source).render(issue=issue, readmes=list(readmes), files=list(files))
    except jinja2.TemplateError as error:
        raise TextError(f"prompt template: {error}") from error
