"""Inferring an environment spec from a repository's own files at a commit."""

from validation.environments.inference import infer_spec, requires_python_at
from validation.environments.specs import load_spec, write_spec

SETUP_PY = """
from setuptools import setup
EXTRAS_REQUIRE = {
    "reco": ["python-dateutil", "simplejson"],
    "tests": ["pytest", "pytz"],
    "lint": ["flake8==3.7.4"],
}
EXTRAS_REQUIRE["dev"] = EXTRAS_REQUIRE["reco"] + EXTRAS_REQUIRE["tests"] + ["tox"]
setup(name="m", version="2.0", extras_require=EXTRAS_REQUIRE, python_requires=">=3.5")
"""


def test_setup_py_extras_and_python_requires(git_repo):
    commit = git_repo.commit({"setup.py": SETUP_PY})
    spec = infer_spec("acme/m", git_repo.path, commit)
    assert spec.defaults.packages == ["pytest", "pytz"]  # the tests extra, by name
    assert spec.defaults.install == "project" and spec.defaults.runner == "pytest"
    assert spec.defaults.python is None  # left to the era rule
    assert requires_python_at(git_repo.path, commit) == ">=3.5"
    assert "extra 'tests'" in spec.note


def test_tox_extras_win_over_the_default_extra(git_repo):
    commit = git_repo.commit(
        {"setup.py": SETUP_PY, "tox.ini": "[testenv]\nextras = tests,reco\ncommands = pytest\n"}
    )
    spec = infer_spec("acme/m", git_repo.path, commit)
    assert spec.defaults.packages == ["pytest", "python-dateutil", "pytz", "simplejson"]


def test_tox_extras_for_named_factors_only_are_left_out(git_repo):
    # tox's extras may be conditional on factors, as its deps are: "recdeps: reco" serves only
    # the envs that name that factor, not a plain test env (here no line is for every env, so
    # the default test extra is taken)
    tox = "[testenv]\nextras =\n    test: tests\n    recdeps: reco\ncommands = pytest\n"
    commit = git_repo.commit({"setup.py": SETUP_PY, "tox.ini": tox})
    spec = infer_spec("acme/m", git_repo.path, commit)
    assert spec.defaults.packages == ["pytest", "pytz"]
    assert "extra 'reco'" not in spec.note


def test_tox_extras_for_negated_factors_are_kept(git_repo):
    tox = "[testenv]\nextras =\n    !nodeps: reco\n    lintonly: lint\ncommands = pytest\n"
    commit = git_repo.commit({"setup.py": SETUP_PY, "tox.ini": tox})
    spec = infer_spec("acme/m", git_repo.path, commit)
    assert spec.defaults.packages == ["pytest", "python-dateutil", "simplejson"]


def test_setup_cfg_requirement_files_and_tools_left_out(git_repo):
    commit = git_repo.commit(
        {
            "setup.cfg": "[metadata]\nname = s\n[options]\npython_requires = >=3.7\n"
            "[options.extras_require]\ndev =\n    flake8\n    hypothesis\n",
            "requirements_dev.txt": "# test tools\n-e .\npytest-xdist  # parallel\n"
            "sphinx==4\ncoverage==6.2\n",
            "setup.py": "from setuptools import setup\nsetup()\n",
        }
    )
    spec = infer_spec("acme/s", git_repo.path, commit)
    assert spec.defaults.packages == ["coverage==6.2", "hypothesis", "pytest", "pytest-xdist"]
    assert requires_python_at(git_repo.path, commit) == ">=3.7"


def test_pyproject_without_pytest_is_unittest_and_bare_tree_installs_nothing(git_repo):
    commit = git_repo.commit(
        {"pyproject.toml": '[project]\nname = "p"\nrequires-python = ">=3.10"\n'}
    )
    spec = infer_spec("acme/p", git_repo.path, commit)
    assert spec.defaults.runner == "unittest" and spec.defaults.install == "project"
    assert requires_python_at(git_repo.path, commit) == ">=3.10"
    bare = git_repo.commit({"pyproject.toml": None, "mod.py": "x = 1\n"})
    spec = infer_spec("acme/p", git_repo.path, bare, extra_packages=["pytest"])
    assert spec.defaults.install == "none" and spec.defaults.packages == ["pytest"]


def test_written_spec_loads_back(tmp_path, git_repo):
    commit = git_repo.commit({"setup.py": SETUP_PY})
    spec = infer_spec("acme/m", git_repo.path, commit)
    path = write_spec(spec, tmp_path)
    assert path.name == "acme__m.toml" and load_spec(path) == spec
