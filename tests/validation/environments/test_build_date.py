"""setuptools' ``tag_date`` is off in the project's build copy: no day of the build in the
version (older setuptools made that no PEP 440 version at all, and uv refused the wheel)."""

import subprocess
import sys

import pytest

from validation.environments.build_date import without_build_date
from validation.environments.environment import EnvironmentSpec, LocalEnvironments
from validation.environments.interpreters import Interpreters

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
SPHINX_STYLE = (
    "[egg_info]\ntag_build = .dev\ntag_date = true\n\n[aliases]\nrelease = egg_info -Db ''\n"
)


def test_tag_date_is_turned_off_in_the_egg_info_section_only():
    assert without_build_date(SPHINX_STYLE) == SPHINX_STYLE.replace(
        "tag_date = true", "tag_date = 0"
    )
    crlf = "[metadata]\r\nname = x\r\n[egg_info]\r\ntag-date=1  # daily\r\n"
    assert (
        without_build_date(crlf)
        == "[metadata]\r\nname = x\r\n[egg_info]\r\ntag-date=0  # daily\r\n"
    )
    assert without_build_date("[egg_info]\ntag_build = .dev\ntag_date = 0\n") is None
    assert without_build_date("[other]\ntag_date = true\n") is None
    assert without_build_date("") is None


@pytest.mark.slow
def test_a_project_tagging_its_build_date_builds_with_its_plain_dev_version(tmp_path, git_repo):
    commit = git_repo.commit(
        {
            "setup.cfg": "[metadata]\nname = widget\nversion = 1.2.3\n\n" + SPHINX_STYLE,
            "setup.py": "from setuptools import setup\nsetup(packages=['widget'])\n",
            "widget/__init__.py": "VALUE = 1\n",
        }
    )
    interpreters = Interpreters([sys.executable], use_uv=False)
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    environments = LocalEnvironments(tmp_path / "envs", interpreters)
    python = environments.python(spec)
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('widget'))"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    ).stdout.strip()  # fmt: skip
    assert version == "1.2.3.dev0"  # not 1.2.3.dev<today>
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert "setup.cfg: [egg_info] tag_date off" in log
    # the repository itself is untouched
    shown = subprocess.run(["git", "show", f"{commit}:setup.cfg"], cwd=git_repo.path,
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "tag_date = true" in shown


def test_the_docker_builds_project_archive_has_tag_date_off(git_repo, tmp_path):
    import io
    import tarfile

    from validation.environments.docker_environments import project_archive

    commit = git_repo.commit(
        {"setup.cfg": SPHINX_STYLE, "setup.py": "", "sub/setup.cfg": SPHINX_STYLE}
    )
    spec = EnvironmentSpec(python=HERE, project=git_repo.path, project_commit=commit)
    with tarfile.open(fileobj=io.BytesIO(project_archive(spec, tmp_path / "log"))) as archive:
        top = archive.extractfile("swt/project/setup.cfg").read().decode()
        nested = archive.extractfile("swt/project/sub/setup.cfg").read().decode()
    assert top == without_build_date(SPHINX_STYLE)
    assert nested == SPHINX_STYLE  # only the project's own setup.cfg configures its build
