"""The Pythons a project's CI files and classifiers name at a commit, and which one is picked."""

import datetime as dt

from validation.environments.project_pythons import ProjectPython, project_python, project_pythons

WORKFLOW = """
name: tests
on: [push]
jobs:
  test:
    strategy:
      matrix:
        python-version: ["3.8", "3.9", "3.10", "pypy-3.8", "3.12-dev"]
        include:
          - python-version: "3.11"
            os: ubuntu-latest
    steps:
      - uses: actions/setup-python@v4
        with:
          python-version: ${{ matrix.python-version }}
"""

APPVEYOR = 'environment:\n  matrix:\n    - PYTHON: "C:\\\\Python37-x64"\n'
AZURE = "jobs:\n- job: t\n  strategy:\n    matrix:\n      py36:\n        python.version: '3.6'\n"
TRAVIS = "language: python\npython:\n  - 3.5\n  - '3.6'\n  - nightly\n"


def by_source(pythons):
    grouped = {}
    for python in pythons:
        grouped.setdefault(python.source, []).append(python.version)
    return grouped


def test_every_ci_file_and_the_classifiers(git_repo):
    commit = git_repo.commit(
        {
            "tox.ini": "[tox]\nenvlist = py{36,37}-django{2,3}, py3{8,9}\n  lint,pypy3\n",
            ".github/workflows/test.yml": WORKFLOW,
            ".github/workflows/docs.yaml": "jobs: {docs: {steps: [{with: {python: '3.7'}}]}}",
            ".travis.yml": TRAVIS,
            "azure-pipelines.yml": AZURE,
            "appveyor.yml": APPVEYOR,
            "setup.py": "classifiers=['Programming Language :: Python :: 3.4',\n"
            "'Programming Language :: Python :: 3 :: Only']\n",
        }
    )
    assert by_source(project_pythons(git_repo.path, commit)) == {
        "tox envlist": ["3.6", "3.7", "3.8", "3.9"],
        "github actions": ["3.7", "3.8", "3.9", "3.10", "3.11"],  # no pypy, no -dev
        "travis": ["3.5", "3.6"],  # numbers and strings; no nightly
        "azure pipelines": ["3.6"],
        "appveyor": ["3.7"],
        "classifiers": ["3.4"],
    }


def test_setup_cfg_tox_section_and_broken_files_name_nothing(git_repo):
    commit = git_repo.commit(
        {
            "setup.cfg": "[tox:tox]\nenvlist = py310,py311\n",
            ".travis.yml": "python: [\n",
            "pyproject.toml": '"Programming Language :: Python :: 3.12",\n',
        }
    )
    assert project_pythons(git_repo.path, commit) == [
        ProjectPython("3.10", "tox envlist"),
        ProjectPython("3.11", "tox envlist"),
        ProjectPython("3.12", "classifiers"),
    ]
    bare = git_repo.commit({"setup.cfg": None, ".travis.yml": None, "pyproject.toml": None})
    assert project_pythons(git_repo.path, bare) == []


def test_the_newest_tested_available_released_allowed_one_wins():
    pythons = [
        ProjectPython("3.9", "tox envlist"),
        ProjectPython("3.11", "github actions"),
        ProjectPython("3.11", "tox envlist"),
        ProjectPython("3.12", "github actions"),  # a pre-release at the date
        ProjectPython("3.13", "classifiers"),
    ]
    available = ["3.8", "3.9", "3.11", "3.12", "3.13"]
    date = dt.date(2023, 6, 1)
    assert project_python(pythons, available, date=date, choice="newest") == ProjectPython(
        "3.11", "tox envlist"
    )
    assert project_python(pythons, ["3.9"], date=date, choice="newest") == ProjectPython(
        "3.9", "tox envlist"
    )
    limited = project_python(
        pythons, available, date=date, requires_python="<3.10", choice="newest"
    )
    assert limited == ProjectPython("3.9", "tox envlist")
    later = project_python(pythons, available, date=dt.date(2025, 1, 1), choice="newest")
    assert later == ProjectPython("3.12", "github actions")  # tested beats classifiers' 3.13
    supported = project_python(pythons[-1:], available, date=dt.date(2025, 1, 1), choice="newest")
    assert supported == ProjectPython("3.13", "classifiers")
    assert project_python(pythons, ["3.7"], date=date, choice="newest") is None


def test_the_choice_takes_the_median_or_the_oldest_of_the_usable_tested_ones():
    pythons = [
        ProjectPython("3.7", "tox envlist"),
        ProjectPython("3.8", "github actions"),
        ProjectPython("3.9", "github actions"),
        ProjectPython("3.10", "tox envlist"),
        ProjectPython("3.12", "github actions"),  # not released at the date: never counted
        ProjectPython("3.6", "classifiers"),  # only supported: tested ones come first
    ]
    available = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.12"]
    date = dt.date(2022, 6, 1)

    def chosen(choice, **kwargs):
        named = project_python(
            pythons, kwargs.pop("available", available), date=date, choice=choice, **kwargs
        )
        return named.version if named else None

    assert chosen("newest") == "3.10"
    # four usable (3.7-3.10): the newer of the two middle ones
    assert chosen("median") == "3.9"
    assert chosen("oldest") == "3.7"
    # three usable once 3.10 is not available here: the middle one
    assert chosen("median", available=["3.7", "3.8", "3.9"]) == "3.8"
    # requires_python narrows before the choice
    assert chosen("median", requires_python=">=3.8") == "3.9"
    assert chosen("oldest", requires_python=">=3.8") == "3.8"
    # a bound on a patch release admits its minor (astroid's >=3.7.2, pydicom's >=3.6.1)
    assert chosen("oldest", requires_python=">=3.7.2") == "3.7"
    assert chosen("median", requires_python=">=3.7.2") == "3.9"
    assert chosen("oldest", requires_python=">=3.7.2,!=3.7.*") == "3.8"
    only_supported = project_python(pythons[-1:], available, date=date, choice="median")
    assert only_supported == ProjectPython("3.6", "classifiers")


def test_a_minor_is_allowed_when_one_of_its_releases_is():
    from packaging.specifiers import SpecifierSet

    from validation.environments.interpreters import minor_allowed

    assert minor_allowed(SpecifierSet(">=3.6.1"), "3.6")
    assert not minor_allowed(SpecifierSet(">=3.7"), "3.6")
    assert not minor_allowed(SpecifierSet("<3.6.0"), "3.6")
    assert minor_allowed(SpecifierSet("~=3.6.2"), "3.6")
    assert minor_allowed(SpecifierSet(""), "3.13")
