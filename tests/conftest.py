"""Fixtures for every test: a small real git repository."""

from __future__ import annotations

import pytest

from tests.support.git import GitRepo


@pytest.fixture
def git_repo(tmp_path):
    return GitRepo(tmp_path / "repo")
