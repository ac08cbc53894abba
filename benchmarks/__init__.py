"""Benchmarks: scripts run with `.venv/bin/python -m benchmarks.<name>`, not tests."""
