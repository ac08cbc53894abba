"""Runs see the project's package metadata as of the base commit, not the environment commit's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from validation.environments.environment import EnvironmentSpec
from validation.environments.metadata import Identity, identity
from validation.runs.backends.local import LocalBackend

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


SCM_PYPROJECT = (
    PYPROJECT.replace('version = "{version}"', 'dynamic = ["version"]')
    + "\n[tool.setuptools_scm]\n"
)
"""The fixture project with its version computed from git by setuptools_scm."""


def test_identity_needs_the_name_written_literally_and_a_version(git_repo):
    declared = git_repo.commit({"pyproject.toml": PYPROJECT.format(version="2.0")})
    assert identity(git_repo.path, declared) == Identity("fixture-pkg", "2.0")
    scm = git_repo.commit({"pyproject.toml": SCM_PYPROJECT})
    assert identity(git_repo.path, scm) is None  # from git, but no release tag to count from
    git_repo.git("tag", "v2.1.0")
    assert identity(git_repo.path, scm) == Identity("fixture-pkg", "2.1.0")
    unnamed = git_repo.commit({"pyproject.toml": None, "setup.py": "setup(name=NAME)\n"})
    assert identity(git_repo.path, unnamed) is None


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    work = tmp_path_factory.mktemp("metadata")
    return LocalBackend(work / "work", env_dir=work / "envs", python_search_paths=[sys.executable])


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


def test_a_version_computed_from_git_is_the_one_the_build_gives_the_base_commit(local, tmp_path):
    """pvlib-1719: setuptools_scm at the base commit (0.9.6.dev7+g…), 0.10.3 installed from the
    environment commit; its tests check the version (``fail_on_pvlib_version("0.10")``)."""
    repo = GitRepo(tmp_path / "project")
    repo.commit({"pyproject.toml": PYPROJECT.format(version="0.9.5"), "pkg/__init__.py": "p = 1\n"})
    repo.git("tag", "v0.9.5")
    base = repo.commit({"pyproject.toml": SCM_PYPROJECT})
    environment_commit = repo.commit({"pyproject.toml": PYPROJECT.format(version="0.10.3")})
    spec = EnvironmentSpec(HERE, (), project=repo.path / ".git", project_commit=environment_commit)
    environment = local.prepare(spec)
    version = f"0.9.6.dev1+g{repo.git('rev-parse', '--short', base).strip()}"
    lines = probe(local, environment, repo, base, tmp_path / "run")
    assert lines[:2] == [
        f"swt: package metadata of fixture-pkg as of the base commit: version {version} "
        "(installed: 0.10.3)",
        version,
    ]
