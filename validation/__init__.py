"""Validation: environments, test runs, result parsing and grading of candidates."""
