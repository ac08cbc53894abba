"""setuptools' egg_info tags are off in the project's build copy: its own version, without the
day of the build (older setuptools made that no PEP 440 version, and uv refused the wheel)."""

import io
import subprocess
import sys
import tarfile

import pytest

from validation.environments.docker_environments import project_archive
from validation.environments.egg_info_tags import without_tags
from validation.environments.environment import EnvironmentSpec, LocalEnvironments
from validation.environments.interpreters import Interpreters

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
SPHINX_STYLE = (
    "[metadata]\nlicense_file = LICENSE\n\n[egg_info]\ntag_build = .dev\ntag_date = true\n\n"
    "[aliases]\nrelease = egg_info -Db ''\n"
)
OFF = SPHINX_STYLE.replace("tag_build = .dev", "tag_build =").replace(
    "tag_date = true", "tag_date = 0"
)


def test_the_tags_are_turned_off_in_the_egg_info_section_only():
    assert without_tags(SPHINX_STYLE) == OFF
    crlf = "[metadata]\r\nname = x\r\n[egg_info]\r\ntag-date=1  # daily\r\n"
    assert without_tags(crlf) == "[metadata]\r\nname = x\r\n[egg_info]\r\ntag-date= 0 # daily\r\n"
    assert without_tags(OFF) is None  # already off: nothing to change
    assert without_tags("[egg_info]\ntag_build =\ntag_date = false\n") is None
    assert without_tags("[other]\ntag_date = true\ntag_build = .dev\n") is None
    assert without_tags("") is None


@pytest.mark.slow
def test_a_project_tagging_its_builds_is_built_with_its_own_version(tmp_path, git_repo):
    commit = git_repo.commit(
        {
            "setup.cfg": SPHINX_STYLE.replace(
                "license_file = LICENSE", "name = widget\nversion = 1.2.3"
            ),
            "setup.py": "from setuptools import setup\nsetup(packages=['widget'])\n",
            "widget/__init__.py": "VALUE = 1\n",
        }
    )
    interpreters = Interpreters([sys.executable], use_uv=False)
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('widget'))"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    ).stdout.strip()  # fmt: skip
    assert version == "1.2.3"  # not 1.2.3.dev<today>
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert "setup.cfg: [egg_info] tag_build and tag_date off" in log
    shown = subprocess.run(["git", "show", f"{commit}:setup.cfg"], cwd=git_repo.path,
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "tag_date = true" in shown  # the repository itself is untouched


def test_the_docker_builds_project_archive_has_the_tags_off(git_repo, tmp_path):
    commit = git_repo.commit(
        {"setup.cfg": SPHINX_STYLE, "setup.py": "", "sub/setup.cfg": SPHINX_STYLE}
    )
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    with tarfile.open(fileobj=io.BytesIO(project_archive(spec, tmp_path / "log"))) as archive:
        top = archive.extractfile("swt/project/setup.cfg").read().decode()
        nested = archive.extractfile("swt/project/sub/setup.cfg").read().decode()
    assert top == OFF
    assert nested == SPHINX_STYLE  # only the project's own setup.cfg configures its build
