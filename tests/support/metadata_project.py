"""A fixture project whose package metadata differs between its base and environment commits:
what a run sees of it shows whose metadata a backend serves (the local and Docker tests)."""

from __future__ import annotations

from pathlib import Path

from tests.support.git import GitRepo

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "fixture-pkg"
version = "{version}"

[project.entry-points."fixture.plugins"]
core = "pkg:plugin"

[tool.setuptools]
packages = ["pkg"]
"""
PROBE = """\
import importlib.metadata as md
print(md.version("fixture-pkg"))
print(sorted(ep.value for ep in md.entry_points(group="fixture.plugins")))
import pkg
print(pkg.__file__)
"""


def project(tmp_path: Path, installed: str, base: str) -> tuple[GitRepo, str, str]:
    """A project whose environment commit declares ``installed`` and base commit ``base``."""
    repo = GitRepo(tmp_path / "project")
    base_commit = repo.commit(
        {"pyproject.toml": PYPROJECT.format(version=base), "pkg/__init__.py": "plugin = 1\n"}
    )
    environment_commit = repo.commit(
        {"pyproject.toml": PYPROJECT.format(version=installed), "CHANGES": f"{installed}\n"}
    )
    return repo, base_commit, environment_commit


def probe(backend, environment, repo: GitRepo, commit: str, run_dir: Path) -> list[str]:
    with backend.session(environment, repo.path / ".git", commit, run_dir) as session:
        log = run_dir.parent / f"{run_dir.name}.log"
        completed = session.run(["python", "-c", PROBE], log, 60)
        assert completed.exit_code == 0, log.read_text()
        return log.read_text().splitlines()
