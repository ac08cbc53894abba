"""Configurable patterns over untrusted text, run by RE2: linear time in the text, any pattern."""

from __future__ import annotations

import functools

import re2

from builder.core.errors import SwtError

SYNTAX = "RE2 syntax (https://github.com/google/re2/wiki/Syntax): no lookaround, no backreferences"
"""What a configured pattern may be, said where one is refused."""


class PatternError(SwtError, ValueError):
    """A pattern RE2 cannot run (a lookaround, a backreference, a syntax error)."""


@functools.lru_cache(maxsize=256)
def linear(pattern: str):
    """``pattern`` compiled by RE2, whose matching time grows linearly with the text (Python's
    ``re`` backtracks: ``\\S+\\.png`` over a megabyte with no space takes most of an hour).
    Its word classes (``\\w``, ``\\b``) are ASCII; PatternError names what RE2 refuses."""
    options = re2.Options()
    options.log_errors = False  # the error is raised, not also printed
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(f"{pattern!r}: {reason} ({SYNTAX})") from error
