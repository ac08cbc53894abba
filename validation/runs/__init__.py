"""Test runs: execution backends, runners, result parsers, process control and patch application."""
