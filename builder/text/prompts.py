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
ISSUE_CHARS = 200_000
"""A problem statement longer than this is cut to it, with a note (``shown_issue``): far over
any budget already, and a text of a million characters is more than the tokenizer takes."""
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
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # a template is code: sandboxed, it reaches no attribute that leads out of its values
    # (``__class__``, ``__globals__``, …) and changes none of them
    environment = ImmutableSandboxedEnvironment(
        keep_trailing_newline=True, autoescape=False, undefined=jinja2.StrictUndefined
    )
    environment.filters["code_text"] = code_text
    try:
        return environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise TextError(f"prompt template, line {error.lineno}: {error.message}") from error


def shown_issue(statement: str) -> str:
    """The problem statement as prompts show it: whole, or its first ISSUE_CHARS characters
    and a note saying how much was cut."""
    if len(statement) <= ISSUE_CHARS:
        return statement
    return (
        f"{statement[:ISSUE_CHARS]}\n\n[the problem statement is cut here: its first "
        f"{ISSUE_CHARS} of {len(statement)} characters are shown]\n"
    )


def render(
    source: str, issue: str, readmes: Sequence[SourceFile], files: Sequence[SourceFile]
) -> str:
    """The prompt of one instance: template ``source`` given ``issue`` (the problem
    statement as it is), ``readmes`` and ``files`` (each with ``path`` and ``text``, in the
    order shown); the filter ``code_text`` renders files as SWE-bench does."""
    import jinja2

    try:
        return _compiled(source).render(issue=issue, readmes=list(readmes), files=list(files))
    except jinja2.TemplateError as error:  # a SecurityError of the sandbox too
        raise TextError(f"prompt template: {error}") from error
