"""Version detection at a commit (metadata, version file, git tags) and environment commits."""

import datetime as dt

import pytest

from validation.environments.versioning import (
    VersionRule,
    commit_date,
    detect_version,
    git_version,
    git_versioning,
    package_name,
    package_version,
    tag_version,
    truncate,
    version_tag_commit,
)


def test_truncate():
    assert truncate("0.8.1.dev3", 2) == "0.8"
    assert truncate("v3.0.0rc6", 2) == "3.0"
    assert truncate("3", 2) == "3.0"
    assert truncate("1.2.3", 3) == "1.2.3"
    assert truncate("unknown", 2) is None


def test_package_version_from_each_metadata_file(tmp_path, git_repo):
    pyproject = git_repo.commit({"pyproject.toml": '[project]\nname = "p"\nversion = "1.4.2"\n'})
    assert package_version(git_repo.path, pyproject) == "1.4.2"
    cfg = git_repo.commit(
        {
            "pyproject.toml": None,
            "setup.cfg": "[metadata]\nname = p\nversion = attr: pkg.__version__\n",
            "src/pkg/__init__.py": '__version__ = "2.0.1"\n',
        }
    )
    assert package_version(git_repo.path, cfg) == "2.0.1"
    literal = git_repo.commit({"setup.cfg": None, "setup.py": "setup(name='p', version='0.3')\n"})
    assert package_version(git_repo.path, literal) == "0.3"
    module = git_repo.commit(
        {
            "setup.py": "setup(name='p', version=find_version('pkg/__init__.py'))\n",
            "pkg/__init__.py": '__version__ = "5.6.7"\n',
        }
    )
    assert package_version(git_repo.path, module) == "5.6.7"
    none = git_repo.commit(
        {
            "setup.py": "setup(use_scm_version=True)\n",
            "pkg/__init__.py": None,
            "src/pkg/__init__.py": None,
        }
    )
    assert package_version(git_repo.path, none) is None


def test_package_name_when_written_literally(git_repo):
    pyproject = git_repo.commit({"pyproject.toml": '[project]\nname = "p-q"\nversion = "1"\n'})
    assert package_name(git_repo.path, pyproject) == "p-q"
    poetry = git_repo.commit({"pyproject.toml": '[tool.poetry]\nname = "po"\n'})
    assert package_name(git_repo.path, poetry) == "po"
    cfg = git_repo.commit({"pyproject.toml": None, "setup.cfg": "[metadata]\nname = cfg_name\n"})
    assert package_name(git_repo.path, cfg) == "cfg_name"
    literal = git_repo.commit({"setup.cfg": None, "setup.py": "setup(\n    name='lit',\n)\n"})
    assert package_name(git_repo.path, literal) == "lit"
    named = git_repo.commit({"setup.py": "DISTNAME = 'pvlib'\nsetup(name=DISTNAME,\n)\n"})
    assert package_name(git_repo.path, named) == "pvlib"
    computed = git_repo.commit({"setup.py": "setup(name=NAME)\n"})
    assert package_name(git_repo.path, computed) is None


SCM_PYPROJECT = '[build-system]\nrequires = ["setuptools_scm>=6.2"]\n[tool.setuptools_scm]\n'
VERSIONEER_SETUP = "import versioneer\nsetup(version=versioneer.get_version())\n"


@pytest.mark.parametrize(
    ("files", "on_tag", "past_tag"),
    [
        ({"pyproject.toml": SCM_PYPROJECT}, "0.9.5", "0.9.6.dev2+g{node}"),
        ({"setup.py": VERSIONEER_SETUP}, "0.9.5", "0.9.5+2.g{node}"),
    ],
)
def test_git_version_as_the_projects_build_computes_it(git_repo, files, on_tag, past_tag):
    """setuptools_scm's default: next patch release, dev distance, node; versioneer's pep440:
    tag + distance + node. A pre-release tag is not a release."""
    tagged = git_repo.commit(files)
    assert git_version(git_repo.path, tagged) is None  # no release tag yet
    git_repo.git("tag", "v0.9.5")
    assert git_version(git_repo.path, tagged) == on_tag
    git_repo.commit({"a.txt": "1"})
    git_repo.git("tag", "v0.10.0rc1")
    past = git_repo.commit({"a.txt": "2"})
    node = git_repo.git("rev-parse", "--short", past).strip()
    assert git_version(git_repo.path, past) == past_tag.format(node=node)


def test_git_version_only_for_projects_that_version_from_git(git_repo):
    plain = git_repo.commit({"setup.py": "setup(name='x', version=get())\n"})
    git_repo.git("tag", "1.0")
    assert git_versioning(git_repo.path, plain) is None
    assert git_version(git_repo.path, plain) is None


def test_tag_version_is_the_nearest_release_tag(git_repo):
    first = git_repo.commit({"a.txt": "1"})
    git_repo.git("tag", "v0.8.0")
    git_repo.commit({"a.txt": "2"})
    git_repo.git("tag", "v0.8.1")
    git_repo.commit({"a.txt": "3"})
    git_repo.git("tag", "v0.9.0-alpha.1")  # a pre-release tag does not make the version
    head = git_repo.commit({"a.txt": "4"})
    assert tag_version(git_repo.path, head) == "0.8.1"
    assert tag_version(git_repo.path, first) == "0.8.0"
    assert version_tag_commit(git_repo.path, head, "0.8") == first


def test_rules_apply_in_order_and_truncate(git_repo):
    head = git_repo.commit(
        {
            "setup.py": "setup(name='p', use_scm_version=True)\n",
            "src/p/config.ini": "[sqlfluff]\nstable_version = 1.3.2\n",
        }
    )
    git_repo.git("tag", "v1.2.0")
    rules = [
        VersionRule(kind="metadata"),
        VersionRule(kind="file", path="src/p/config.ini", pattern=r"stable_version\s*=\s*(\S+)"),
        VersionRule(kind="git-tag"),
    ]
    assert detect_version(git_repo.path, head, rules) == ("1.3", "file")
    assert detect_version(git_repo.path, head, rules[2:], digits=3) == ("1.2.0", "git-tag")
    missing = [VersionRule(kind="file", path="nope.txt", pattern="(.*)")]
    assert detect_version(git_repo.path, head, missing) is None


def test_commit_date_is_the_committer_date(git_repo):
    head = git_repo.commit({"a.txt": "1"})
    assert commit_date(git_repo.path, head) == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
