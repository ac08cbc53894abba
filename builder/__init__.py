"""swt-builder: build SWT-Bench-style test-generation benchmarks from real issues and fixes."""

__version__ = "0.1.0"
