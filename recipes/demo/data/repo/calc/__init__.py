"""Small, dependency-free helpers for arithmetic, parsing and statistics."""

__version__ = "0.1.0"
