"""Deterministic offline demo: a tiny git repository plus SWE-bench-format candidates."""
