"""EnvironmentSpec keys, interpreters, local builds (install steps: test_install_steps.py)."""

import dataclasses
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.faults import InfrastructureError
from validation.environments.environment import (
    COMPLETE,
    EnvironmentBuildError,
    EnvironmentSpec,
    LocalEnvironments,
)
from validation.environments.interpreters import Interpreters, era_python, find_uv
from validation.environments.sandbox_user import BUILD_GID, FIRST_UID, SLOTS

BASE = EnvironmentSpec(
    python="3.9",
    packages=("pytest==8.3.5", "hypothesis"),
    project=Path("/somewhere/mirror.git"),
    project_commit="a" * 40,
    exclude_newer="2021-05-02T21:31:55Z",
)
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize(
    "change",
    [
        {"python": "3.10"},
        {"packages": ("pytest==8.3.4", "hypothesis")},
        {"project_commit": "b" * 40},
        {"project": None},
        {"requirements": ("requirements-dev.txt",)},
        {"extras": ("test",)},
        {"install": "none"},
        {"install_command": "python setup.py develop"},
        {"pre_install": ("make prepare",)},
        {"system_packages": ("libgl1",)},
        {"exclude_newer": "2022-01-01T00:00:00Z"},
        {"env": (("A", "1"),)},
        {"python_tested": True},
    ],
)
def test_key_changes_with_everything_that_defines_the_environment(change):
    assert dataclasses.replace(BASE, **change).key() != BASE.key()


def test_key_ignores_where_things_live_the_label_and_how_tests_start():
    moved = dataclasses.replace(BASE, project=Path("/elsewhere/mirror.git"), label="x/y@1.0")
    assert moved.key() == BASE.key()
    started = dataclasses.replace(BASE, runner="unittest", test_command=("python", "-m", "x"))
    assert started.key() == BASE.key()
    assert len(BASE.key()) == 24


def test_era_python():
    available = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11"]
    assert era_python(dt.date(2021, 6, 1), available) == "3.8"
    assert era_python(dt.date(2021, 6, 1), available, lag_days=180) == "3.9"
    assert era_python(dt.date(2021, 6, 1), available, requires_python=">=3.9") == "3.9"
    assert era_python(dt.date(2030, 1, 1), available, requires_python="<3.8") == "3.7"
    assert era_python(dt.date(2030, 1, 1), []) is None


def test_interpreters_from_search_paths(tmp_path):
    link = tmp_path / "versions" / "here" / "bin"
    link.mkdir(parents=True)
    (link / "python").symlink_to(sys.executable)
    (tmp_path / "versions" / "broken" / "bin").mkdir(parents=True)
    (tmp_path / "versions" / "broken" / "bin" / "python").write_text("not a program")
    found = Interpreters([str(tmp_path / "versions" / "*" / "bin" / "python")], use_uv=False)
    assert found.available() == {HERE: os.path.realpath(sys.executable)}
    assert found.find(HERE) == os.path.realpath(sys.executable)
    assert found.find("3.1") is None


def test_local_build_once_per_key_with_hardlinked_packages(tmp_path):
    interpreters = Interpreters([sys.executable], use_uv=False)
    environments = LocalEnvironments(tmp_path / "envs", interpreters)
    first = EnvironmentSpec(python=HERE, packages=("iniconfig==2.0.0",))
    second = dataclasses.replace(first, env=(("OTHER", "1"),))
    python = environments.python(first)
    assert python.is_file() and (python.parent.parent / COMPLETE).is_file()
    marker = (python.parent.parent / COMPLETE).stat().st_mtime_ns
    assert environments.python(first) == python  # reused, not rebuilt
    assert (python.parent.parent / COMPLETE).stat().st_mtime_ns == marker
    other = environments.python(second)
    assert other != python
    files = sorted(python.parent.parent.glob("lib/python*/site-packages/iniconfig/__init__.py"))
    twins = sorted(other.parent.parent.glob("lib/python*/site-packages/iniconfig/__init__.py"))
    assert files[0].stat().st_ino == twins[0].stat().st_ino  # one file, hardlinked twice


@pytest.mark.skipif(os.geteuid() != 0, reason="a build gets a uid of its own for a root builder")
def test_a_root_builder_builds_as_an_unprivileged_uid_sharing_the_cache(tmp_path, monkeypatch):
    """The build runs as a sandbox uid in the builds' group (so ``processes`` holds for its
    setup.py); uv's cache, filled first by root's own uv (entries only root may write), is
    shared with that group; the environment is root's afterwards, its files still the cache's."""
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    envs = tmp_path / "envs"
    cache = envs / ".uv-cache"
    old = os.umask(0o022)  # root's own uv as a user runs it
    try:
        subprocess.run(
            [find_uv(), "pip", "install", "--quiet", "--target", str(tmp_path / "t"),
             "iniconfig==2.0.0"],
            env={**os.environ, "UV_CACHE_DIR": str(cache)}, check=True,
        )  # fmt: skip
    finally:
        os.umask(old)
    assert cache.stat().st_gid != BUILD_GID
    environments = LocalEnvironments(envs, Interpreters([sys.executable], use_uv=False))
    spec = EnvironmentSpec(python=HERE, packages=("iniconfig==2.0.0", "six==1.16.0"))
    venv = environments.python(spec).parent.parent
    entries = [cache, *cache.rglob("*")]
    owners = {path.lstat().st_uid for path in entries}
    assert owners - {0} and all(FIRST_UID <= uid < FIRST_UID + SLOTS for uid in owners - {0})
    assert {path.lstat().st_gid for path in entries} == {BUILD_GID}
    assert all(path.lstat().st_uid == 0 for path in [venv, *venv.rglob("*")])
    six = next(venv.glob("lib/python*/site-packages/six.py"))
    assert six.stat().st_nlink > 1  # a hardlink of the cache's file


DESCRIBED = """
import os
import subprocess
from setuptools import setup

# as setuptools-scm runs git: every GIT_* variable removed (its no_git_env)
described = subprocess.run(
    ["git", "describe", "--tags"], capture_output=True, text=True, check=True,
    env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
).stdout
setup(name="described", version=described.strip().lstrip("v"), py_modules=["described"])
"""


@pytest.mark.slow
def test_a_setup_py_reads_its_version_from_git(tmp_path, git_repo):
    """As versioneer does: git in the build, whatever uid the build runs as (a sandbox uid of
    its own for a root builder, whose checkout's repository root owns)."""
    commit = git_repo.commit({"setup.py": DESCRIBED, "described.py": "VALUE = 1\n"})
    git_repo.git("tag", "v4.5.6")
    interpreters = Interpreters([sys.executable], use_uv=False)
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('described'))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert version.strip() == "4.5.6"


def test_failed_build_raises_with_log_and_missing_python_is_named(tmp_path):
    interpreters = Interpreters([sys.executable], use_uv=False)
    environments = LocalEnvironments(tmp_path / "envs", interpreters)
    bad = EnvironmentSpec(python=HERE, packages=("this is not a requirement!!",))
    with pytest.raises(EnvironmentBuildError) as error:
        environments.python(bad)
    assert error.value.log_path.is_file() and "dependencies" in str(error.value)
    # what the machine lacks is its fault (infra_error), never a verdict on the instance
    with pytest.raises(InfrastructureError, match="no Python 3.1 interpreter") as lacking:
        environments.python(EnvironmentSpec(python="3.1"))
    assert lacking.value.fault == "interpreter" and Path(lacking.value.log).is_file()
    with pytest.raises(InfrastructureError, match="system packages not installed") as lacking:
        environments.python(EnvironmentSpec(python=HERE, system_packages=("no-such-package-swt",)))
    assert lacking.value.fault == "system_packages"
    assert "no-such-package-swt" in Path(lacking.value.log).read_text()


@pytest.mark.slow
def test_project_installed_from_the_environment_commit(tmp_path, git_repo):
    commit = git_repo.commit(
        {
            "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
            'build-backend = "setuptools.build_meta"\n'
            '[project]\nname = "widget"\nversion = "1.2.3"\n',
            "widget/__init__.py": "VALUE = 1\n",
        }
    )
    git_repo.commit({"widget/__init__.py": "VALUE = 2\n"})
    interpreters = Interpreters([sys.executable], use_uv=False)
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    import subprocess

    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, widget; "
         "print(m.version('widget'), widget.VALUE)"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    ).stdout  # fmt: skip
    assert out.split() == ["1.2.3", "1"]
    assert not (tmp_path / "envs" / f"{spec.key()}.project").exists()  # checkout removed


def test_build_environment_is_an_allow_list_without_credentials(tmp_path, monkeypatch):
    from validation.environments.environment import _build_env, is_credential

    for name, value in {
        "GITHUB_TOKEN": "t", "HF_TOKEN": "t", "HF_HOME": "/hf", "AWS_SECRET_ACCESS_KEY": "s",
        "PIP_INDEX_URL": "https://index.example/simple", "UV_EXTRA_INDEX_URL": "https://x",
        "SSL_CERT_FILE": "/etc/ca.pem", "LC_ALL": "C.UTF-8", "SOMETHING_ELSE": "x",
        "PYTHONPATH": "/untrusted",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    spec = EnvironmentSpec(python=HERE, env=(("SPEC_VARIABLE", "1"),))
    env = _build_env(spec, tmp_path / "venv", tmp_path / "home", tmp_path / "cache")
    assert {"PIP_INDEX_URL", "UV_EXTRA_INDEX_URL", "SSL_CERT_FILE", "LC_ALL"} <= set(env)
    assert not {"GITHUB_TOKEN", "HF_TOKEN", "HF_HOME", "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert "SOMETHING_ELSE" not in env and "PYTHONPATH" not in env
    assert env["SPEC_VARIABLE"] == "1" and env["HOME"] == env["TMPDIR"] == str(tmp_path / "home")
    assert env["UV_CACHE_DIR"] == str(tmp_path / "cache")
    assert env["PATH"].startswith(f"{tmp_path / 'venv'}/bin")
    assert is_credential("GITHUB_TOKENS") and is_credential("npm_config_authToken")
    assert not is_credential("UV_INDEX_URL")


def test_a_build_gets_the_runs_limits_with_room_for_its_threads():
    from validation.environments.environment import build_rlimits

    mib = 1024 * 1024
    small = build_rlimits({"RLIMIT_AS": 512 * mib, "RLIMIT_NPROC": 64})
    assert small == {"RLIMIT_AS": 2048 * mib, "RLIMIT_NPROC": 64}
    assert build_rlimits({"RLIMIT_AS": 4096 * mib}) == {"RLIMIT_AS": 4096 * mib}
    assert build_rlimits({"RLIMIT_AS": 0}) == {"RLIMIT_AS": 0}  # 0: not limited


def test_a_symlinked_environments_dir_builds_in_the_sandbox(tmp_path):
    """The sandbox binds real paths; an environments dir reached through a symlink (a work
    dir sharing another's environments) builds there as the real dir does."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    interpreters = Interpreters([sys.executable], use_uv=False)
    environments = LocalEnvironments(tmp_path / "link", interpreters, sandbox="bwrap")
    python = environments.python(EnvironmentSpec(python=HERE, packages=()))
    assert python.is_file() and python.parents[2] == (tmp_path / "real").resolve()
