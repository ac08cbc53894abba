"""Runs see the project's package metadata as of the base commit, not the environment commit's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from validation.backends.local import LocalBackend
from validation.environment import EnvironmentSpec
from validation.metadata import Identity, identity

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
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


def test_identity_needs_name_and_version_written_literally(git_repo):
    declared = git_repo.commit({"pyproject.toml": PYPROJECT.format(version="2.0")})
    assert identity(git_repo.path, declared) == Identity("fixture-pkg", "2.0")
    scm = git_repo.commit({"pyproject.toml": None, "setup.py": "setup(use_scm_version=True)\n"})
    assert identity(git_repo.path, scm) is None


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    work = tmp_path_factory.mktemp("metadata")
    backend = LocalBackend(work / "work")
    backend.configure(env_dir=work / "envs", python_search_paths=[sys.executable])
    return backend


def test_local_runs_see_the_base_commits_version_and_the_installed_entry_points(local, tmp_path):
    repo, base, environment_commit = project(tmp_path, installed="1.4.2", base="1.4.1")
    spec = EnvironmentSpec(HERE, (), project=repo.path / ".git", project_commit=environment_commit)
    environment = local.prepare(spec)
    lines = probe(local, environment, repo, base, tmp_path / "run")
    assert lines[0] == "swt: package metadata of fixture-pkg as of the base commit: version " \
        "1.4.1 (installed: 1.4.2)"  # fmt: skip
    assert lines[1:3] == ["1.4.1", "['pkg:plugin']"]  # the version shadowed, plugins kept
    assert lines[3].startswith(str(tmp_path / "run" / "repo"))  # and the code is the checkout's
    # the environment itself is untouched: outside a run it still says what was installed
    installed = subprocess.run(
        [str(environment), "-c", "import importlib.metadata as m; print(m.version('fixture-pkg'))"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()  # fmt: skip
    assert installed == "1.4.2"


def test_no_shadow_when_versions_agree_or_the_base_commit_declares_none(local, tmp_path):
    repo, base, environment_commit = project(tmp_path, installed="3.0", base="3.0")
    spec = EnvironmentSpec(HERE, (), project=repo.path / ".git", project_commit=environment_commit)
    environment = local.prepare(spec)
    assert probe(local, environment, repo, base, tmp_path / "same")[0] == "3.0"
    assert not (tmp_path / "same" / "metadata").exists()
    dynamic = repo.commit(
        {"pyproject.toml": PYPROJECT.format(version="9.9").replace('version = "9.9"', "")}
    )
    assert probe(local, environment, repo, dynamic, tmp_path / "dynamic")[0] == "3.0"
