"""The base of the toolkit's own exceptions, so callers can tell a known failure from a bug."""

from __future__ import annotations


class SwtError(Exception):
    """The base of every error the toolkit raises on purpose; a bug raises something else.

    Each subclass also keeps the builtin base it had before (``ValueError``,
    ``RuntimeError``), so ``except ValueError`` sites keep catching it."""
