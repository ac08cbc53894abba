"""swt-builder: build SWT-Bench-style test-generation benchmarks from real issues and fixes."""

from builder.core import __version__

__all__ = ["__version__"]
