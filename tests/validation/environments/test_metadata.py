"""Runs see the project's package metadata as of the base commit, not the environment commit's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.config import ValidationConfig
from tests.support.git import GitRepo
from tests.support.metadata_project import PYPROJECT, probe, project
from tests.support.runtime import copied
from validation.environments import metadata, metadata_shim
from validation.environments.environment import EnvironmentSpec
from validation.environments.interpreters import Interpreters
from validation.environments.metadata import SHIM, Identity, identity
from validation.environments.runtime import OLDEST_PYTHON
from validation.runs.backends.local import LocalBackend
from validation.stage import ValidateStage

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
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


def test_identity_is_found_once_per_commit_while_the_tags_stay(git_repo, monkeypatch):
    """Every checkout of a validation asks for it: found once, and again when a tag comes (a
    git-computed version counts from the nearest one)."""
    git_repo.commit({"pyproject.toml": SCM_PYPROJECT})
    git_repo.git("tag", "v1.0.0")
    scm = git_repo.commit({"README": "x\n"})
    calls = []
    found = metadata._identity
    monkeypatch.setattr(metadata, "_identity", lambda *a: calls.append(a) or found(*a))
    first = identity(git_repo.path, scm)
    assert first == identity(git_repo.path, scm) and first.version.startswith("1.0.1.dev1+g")
    assert len(calls) == 1
    git_repo.git("tag", "v1.1.0", scm)  # a nearer tag
    assert identity(git_repo.path, scm) == Identity("fixture-pkg", "1.1.0")
    assert len(calls) == 2


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    work = tmp_path_factory.mktemp("metadata")
    return LocalBackend(work / "work", env_dir=work / "envs", python_search_paths=[sys.executable])


@pytest.mark.slow
def test_local_runs_see_the_base_commits_version_and_the_installed_entry_points(local, tmp_path):
    repo, base, environment_commit = project(tmp_path, installed="1.4.2", base="1.4.1")
    spec = EnvironmentSpec(HERE, (), project=repo.path / ".git", project_commit=environment_commit)
    environment = local.prepare(spec)
    lines = probe(local, environment, repo, base, tmp_path / "run")
    assert lines[0] == "swt: package metadata of fixture-pkg as of the base commit: version " \
        "1.4.1 (installed: 1.4.2)"  # fmt: skip
    assert lines[1:3] == ["1.4.1", "['pkg:plugin']"]  # the version shadowed, plugins kept
    assert lines[3].startswith("/testbed/")  # and the code is the checkout's (sandboxed)
    # the environment itself is untouched: outside a run it still says what was installed
    installed = subprocess.run(
        [str(environment), "-c", "import importlib.metadata as m; print(m.version('fixture-pkg'))"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()  # fmt: skip
    assert installed == "1.4.2"


@pytest.mark.slow
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------
# The shim itself (validation/environments/metadata_shim.py), imported here and run by path.


def _dist_info(site: Path, url: str | None = "file:///src/project") -> Path:
    found = site / "fixture_pkg-1.4.2.dist-info"
    found.mkdir(parents=True)
    (found / "METADATA").write_text("Metadata-Version: 2.1\nName: fixture-pkg\nVersion: 1.4.2\n")
    (found / "entry_points.txt").write_text("[fixture.plugins]\ncore = pkg:plugin\n")
    if url is not None:
        (found / "direct_url.json").write_text(f'{{"url": "{url}", "dir_info": {{}}}}')
    return found


def test_the_shim_shadows_a_local_install_with_the_given_version(tmp_path):
    found = _dist_info(tmp_path / "site")
    roots = [str(tmp_path / "absent"), str(tmp_path / "site")]
    assert metadata_shim.installed("Fixture.Pkg", roots) == str(found)  # names compare normalized
    assert metadata_shim.installed("other-pkg", roots) is None
    assert metadata_shim.local_install(str(found))
    dest = tmp_path / "shadow"
    assert metadata_shim.shadow(str(found), "fixture-pkg", "1.4.1", str(dest)) == "1.4.2"
    assert [path.name for path in dest.iterdir()] == ["fixture_pkg-1.4.1.dist-info"]  # no part
    shadowed = dest / "fixture_pkg-1.4.1.dist-info"
    assert (shadowed / "METADATA").read_text().splitlines()[2] == "Version: 1.4.1"
    assert (shadowed / "entry_points.txt").read_text() == "[fixture.plugins]\ncore = pkg:plugin\n"
    assert not (shadowed / "top_level.txt").exists()  # copied only when installed
    # the same version: nothing to shadow, nothing written
    assert metadata_shim.shadow(str(found), "fixture-pkg", "1.4.2", str(tmp_path / "n")) is None
    assert not (tmp_path / "n").exists()


@pytest.mark.parametrize("url", ["https://example.invalid/fixture.whl", None, "{broken"])
def test_the_shim_leaves_other_installs_alone(tmp_path, url):
    found = _dist_info(tmp_path / "site", url)
    if url == "{broken":
        (found / "direct_url.json").write_text("{broken")
    assert not metadata_shim.local_install(str(found))


def test_the_command_runs_the_shim_by_path_in_the_runs_folder():
    command = Identity("fixture-pkg", "1.4.1").shim("/swt/tools/0123", "/swt/metadata", ["pytest"])
    assert command == ["python", "/swt/tools/0123/_swt_metadata_shim.py", "fixture-pkg", "1.4.1",
                       "/swt/metadata", "pytest"]  # fmt: skip


def test_the_shim_runs_on_the_oldest_python_and_execs_the_command(tmp_path):
    python = Interpreters().find(OLDEST_PYTHON)
    if python is None:
        pytest.skip(f"no Python {OLDEST_PYTHON} interpreter on this machine")
    script = SHIM.place(tmp_path / "tools") / SHIM.script
    done = subprocess.run(
        [python, str(script), "not-installed-pkg", "1.0", str(tmp_path / "m"),
         python, "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tuple(int(p) for p in OLDEST_PYTHON.split(".")))


def test_result_keys_follow_the_shims_content(tmp_path, monkeypatch):
    stage = ValidateStage(ValidationConfig(backend="local"), tmp_path / "work", {})
    before = stage.fingerprint()
    monkeypatch.setattr(metadata, "SHIM", copied(SHIM, tmp_path, monkeypatch))
    assert stage.fingerprint() == before  # the same bytes elsewhere: the same keys
    monkeypatch.setattr(metadata, "SHIM", copied(SHIM, tmp_path, monkeypatch, append="#\n"))
    assert stage.fingerprint() != before
