"""Collect benchmark candidates from GitHub pull requests with PyGithub."""
