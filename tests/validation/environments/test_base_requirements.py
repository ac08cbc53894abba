"""The base commit's install requirements that the environment commit lacks join the
instance's environment (pytest 5.4's base commits need more_itertools, its 6.0 environment
commit does not)."""

import json

from builder.core.config import ValidationConfig
from tests.support.records import candidate
from validation.environments.base_requirements import unmet
from validation.environments.environment import EnvironmentSpec
from validation.environments.inference import install_requirements
from validation.environments.resolution import EnvironmentResolver

SETUP_PY = "from setuptools import setup\n{extra}setup(name='widget', install_requires={value})\n"


def test_install_requirements_from_pyproject_setup_cfg_or_a_literal_setup_py(git_repo):
    pyproject = git_repo.commit(
        {"pyproject.toml": '[project]\nname = "w"\ndependencies = ["attrs>=19", "py"]\n'}
    )
    assert install_requirements(git_repo.path, pyproject) == ["attrs>=19", "py"]
    cfg = git_repo.commit(
        {
            "pyproject.toml": "[build-system]\nrequires = ['setuptools']\n",
            "setup.cfg": "[options]\ninstall_requires =\n    six\n    toml>=0.7 # comment\n",
        }
    )
    assert install_requirements(git_repo.path, cfg) == ["six", "toml>=0.7"]
    named = git_repo.commit(
        {
            "setup.cfg": "[metadata]\nname = w\n",
            "setup.py": SETUP_PY.format(extra="DEPS = ['a'] + ['b<2']\n", value="DEPS"),
        }
    )
    assert install_requirements(git_repo.path, named) == ["a", "b<2"]
    computed = git_repo.commit({"setup.py": SETUP_PY.format(extra="", value="read()")})
    assert install_requirements(git_repo.path, computed) == []


def test_what_the_base_commit_requires_and_the_environment_commit_does_not(git_repo):
    environment = git_repo.commit(
        {
            "setup.py": SETUP_PY.format(
                extra="", value="['attrs', 'tomli; python_version < \"3.11\"']"
            )
        }
    )
    base = git_repo.commit(
        {
            "setup.py": SETUP_PY.format(
                extra="",
                value="['attrs>=17', 'more-itertools>=4.0.0', 'toml', 'pluggy', 'widget', "
                "'importlib-metadata>=0.12; python_version < \"3.8\"', "
                "'pywin32; sys_platform == \"win32\"']",
            )
        }
    )
    spec = EnvironmentSpec(
        python="3.9", packages=("pluggy<1",), project=git_repo.path, project_commit=environment
    )
    # attrs: the environment commit has it (whatever the bound); pluggy: the spec names it;
    # widget: the project itself; the markers do not hold for 3.9 on Linux
    assert unmet(spec, git_repo.path, base) == ("more-itertools>=4.0.0", "toml")
    assert unmet(spec, git_repo.path, environment) == ()  # the environment commit's own
    old = EnvironmentSpec(python="3.7", project=git_repo.path, project_commit=environment)
    assert "importlib-metadata>=0.12" in unmet(old, git_repo.path, base)
    none = EnvironmentSpec(python="3.9", project=git_repo.path, project_commit=environment,
                           install="none")  # fmt: skip
    assert unmet(none, git_repo.path, base) == ()  # the project is not installed at all


def test_the_resolver_adds_them_to_that_instances_environment_alone(tmp_path, git_repo):
    env_commit = git_repo.commit(
        {"setup.py": SETUP_PY.format(extra="", value="[]"), "tox.ini": "[tox]\nenvlist = py39\n"}
    )
    same = git_repo.commit({"widget.py": "x = 1\n"})
    needs = git_repo.commit(
        {"setup.py": SETUP_PY.format(extra="", value="['six>=1.10']"), "widget.py": "x = 2\n"}
    )
    resolver = EnvironmentResolver(
        ValidationConfig(bundled_specs=False, packages=["pytest"]),
        tmp_path / "inferred",
        lambda: ["3.9"],
    )
    plain = resolver.resolve(
        candidate(repo="acme/w", base_commit=same, environment_setup_commit=env_commit),
        git_repo.path,
    )
    added = resolver.resolve(
        candidate(repo="acme/w", base_commit=needs, environment_setup_commit=env_commit),
        git_repo.path,
    )
    assert added.spec.packages == (*plain.spec.packages, "six>=1.10")
    assert added.spec.key() != plain.spec.key()  # its own environment; the shared one as it was
    assert json.loads(added.metadata()["base_requirements"]) == ["six>=1.10"]
    assert "base_requirements" not in plain.metadata()
