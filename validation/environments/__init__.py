"""Environments: specs, their inference from a project's files, interpreters, venvs and images."""
