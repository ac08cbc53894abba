"""A project without [build-system]: its setup_requires installed first, dated, and the project
built in the environment (as pip of its era did), not fetched by easy_install at build time."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from validation.environments.environment import (
    EnvironmentSpec,
    Interpreters,
    LocalEnvironments,
    install_steps,
)
from validation.environments.resolution import resolve
from validation.environments.setup_requires import legacy_setup_requires
from validation.environments.specs import RepoSpec, Settings

# the shape of a compiled scientific project of 2018: a computed numpy minimum, the Cython and
# Jinja2 needed only from a git checkout appended, and setup.py importing the package (which
# imports numpy) before setup() is reached
SETUP_PY = """
import os
from setuptools import setup
import pkg
min_numpy_version = 'numpy>=' + pkg.__minimum_numpy_version__
setup_requires = [min_numpy_version]
if not os.path.exists('PKG-INFO'):
    setup_requires.extend(['cython>=0.21', 'jinja2>=2.7'])
setup(name='pkg', version='1.0', setup_requires=setup_requires, install_requires=['six'])
"""


def test_setup_requires_of_a_project_without_build_system(git_repo):
    commit = git_repo.commit({"setup.py": SETUP_PY})
    assert legacy_setup_requires(git_repo.path, commit) == ("numpy", "cython>=0.21", "jinja2>=2.7")
    cfg = "[metadata]\nname = pkg\n[options]\nsetup_requires = numpy>=1.16\n    pbr\n"
    commit = git_repo.commit({"setup.cfg": cfg})
    assert legacy_setup_requires(git_repo.path, commit) == (
        "numpy>=1.16", "pbr", "numpy", "cython>=0.21", "jinja2>=2.7",
    )  # fmt: skip
    # a pyproject.toml without [build-system] (tool settings only) changes nothing
    commit = git_repo.commit({"pyproject.toml": "[tool.black]\nline-length = 100\n"})
    assert legacy_setup_requires(git_repo.path, commit)[:2] == ("numpy>=1.16", "pbr")
    # a [build-system] names the build's requirements itself, and the build is isolated
    build_system = '[build-system]\nrequires = ["setuptools", "numpy"]\n'
    commit = git_repo.commit({"pyproject.toml": build_system})
    assert legacy_setup_requires(git_repo.path, commit) == ()
    no_setup_py = git_repo.commit({"pyproject.toml": None, "setup.py": None})
    assert legacy_setup_requires(git_repo.path, no_setup_py) == ()


def test_the_project_is_built_in_the_environment_after_its_setup_requires():
    spec = EnvironmentSpec(
        python="3.7",
        packages=("pytest",),
        project=Path("/mirror.git"),
        project_commit="a" * 40,
        extras=("test",),
        exclude_newer="2019-10-27T21:54:31Z",
        setup_requires=("numpy>=1.16", "cython>=0.29.13"),
    )
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src")
    assert [s.label for s in steps] == ["venv", "dependencies", "project"]
    first, second = steps[1].argv, steps[2].argv
    assert "/src[test]" not in first and second[-1] == "/src[test]"
    assert {"numpy>=1.16", "cython>=0.29.13", "wheel", "pytest"} <= set(first)
    assert "--no-build-isolation" in second and "--no-build-isolation" not in first
    # both dated alike, and what the first installed is asked for again (kept, not replaced)
    assert first[first.index("--exclude-newer") + 1] == second[second.index("--exclude-newer") + 1]
    assert set(first) <= set(second)
    # an environment of a project with none keeps its key and its one step
    plain = dataclasses.replace(spec, setup_requires=())
    assert plain.key() != spec.key()
    labels = [s.label for s in install_steps(plain, base_python="p", venv="/e", project_dir="/src")]
    assert labels == ["venv", "dependencies"]
    # an install command of the spec's own builds the project its way
    own = dataclasses.replace(spec, install_command="pip install .")
    labels = [s.label for s in install_steps(own, base_python="p", venv="/e", project_dir="/src")]
    assert labels == ["venv", "dependencies", "install command"]


def test_resolution_reads_them_at_the_environment_commit_unless_the_spec_installs(git_repo):
    commit = git_repo.commit({"setup.py": SETUP_PY})
    available = ["3.9", "3.10", "3.11"]
    spec = resolve(RepoSpec(repo="acme/pkg"), mirror=git_repo.path, base_commit=commit,
                   available_pythons=available).spec  # fmt: skip
    assert spec.setup_requires == ("numpy", "cython>=0.21", "jinja2>=2.7")
    own = RepoSpec(repo="acme/pkg", defaults=Settings(install_command="pip install ."))
    spec = resolve(own, mirror=git_repo.path, base_commit=commit, available_pythons=available).spec
    assert spec.setup_requires == ()


@pytest.mark.slow
def test_a_legacy_project_importing_its_setup_requires_builds(tmp_path, git_repo):
    """setup.py imports what only setup_requires names before setup() runs: an isolated build
    (setuptools and wheel only) fails at that import, and setuptools cannot even ask for it."""
    setup_py = (
        "from setuptools import setup\nimport six  # a build-time helper\n"
        "setup(name='legacy', version='0.1', py_modules=['legacy'], setup_requires=['six'])\n"
    )
    commit = git_repo.commit({"setup.py": setup_py, "legacy.py": "VALUE = 1\n"})
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    spec = EnvironmentSpec(
        python=here,
        project=git_repo.path,
        project_commit=commit,
        setup_requires=legacy_setup_requires(git_repo.path, commit),
    )
    interpreters = Interpreters([sys.executable], use_uv=False)
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    out = subprocess.run(
        [str(python), "-c", "import legacy, six; print(legacy.VALUE)"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    ).stdout  # fmt: skip
    assert out.strip() == "1"
