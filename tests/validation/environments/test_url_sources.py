"""validation/environments/url_sources.py: a package the project installs from a git URL,
fetched on this machine at the environment's date and built from its tree; refused or
unreachable URLs leave the index's release standing in, with the reason."""

from __future__ import annotations

import dataclasses
import ensurepip
import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.core.config import ValidationConfig
from builder.core.faults import InfrastructureError
from builder.core.pipeline import Outcome
from tests.support.git import GIT_ENV, GitRepo
from tests.support.instances import make_instance
from tests.support.net import closed_port_url
from tests.support.records import candidate
from tests.support.wheels import write_wheel
from validation.environments.dockerfile import url_source_lines
from validation.environments.environment import (
    URL_SOURCES,
    EnvironmentSpec,
    LocalEnvironments,
    install_steps,
)
from validation.environments.interpreters import Interpreters, find_uv
from validation.environments.url_sources import (
    GitUrl,
    Unreachable,
    UrlSources,
    extract,
    parse,
)
from validation.stage import ValidateStage, index_stand_ins, url_sources_told

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "swt-fixture-data"
version = "1.0"

[tool.setuptools]
packages = ["swt_fixture_data"]
"""


def _commit_at(repo: GitRepo, files: dict[str, str], date: str) -> str:
    repo.write(files)
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for args in (["add", "-A"], ["commit", "-q", "-m", f"at {date}"]):
        subprocess.run(["git", *args], cwd=repo.path, env=env, check=True, capture_output=True)
    return repo.git("rev-parse", "HEAD").strip()


@pytest.fixture
def data_repo(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """A data package's repository: ``CONTENT`` is "first" in 2020, "second" in 2021 (tagged
    v1 on the first), and a ``sub/`` folder holding the package once more."""
    repo = GitRepo(tmp_path / "pydata-src")
    module = "swt_fixture_data/__init__.py"
    first = _commit_at(
        repo,
        {"pyproject.toml": PYPROJECT, module: 'CONTENT = "first"\n',
         "sub/pyproject.toml": PYPROJECT, f"sub/{module}": 'CONTENT = "sub"\n'},
        "2020-01-01T00:00:00+00:00",
    )  # fmt: skip
    repo.git("tag", "v1")
    second = _commit_at(repo, {module: 'CONTENT = "second"\n'}, "2021-01-01T00:00:00+00:00")
    return repo, {"first": first, "second": second}


@pytest.fixture
def served(data_repo, tmp_path: Path) -> Iterator[str]:
    """The data repository served over git's dumb HTTP protocol on the loopback: its URL."""
    repo, _ = data_repo
    root = tmp_path / "www"
    root.mkdir()
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(root / "data.git")], check=True
    )
    subprocess.run(["git", "--git-dir", str(root / "data.git"), "update-server-info"], check=True)
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/data.git"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_a_requirement_s_git_url_is_read_as_pip_reads_it():
    assert parse("git+https://github.com/pydicom/pydicom-data") == GitUrl(
        "https://github.com/pydicom/pydicom-data"
    )
    assert parse("data @ git+https://h.example/o/d.git@v1.2#egg=data&subdirectory=py/") == GitUrl(
        "https://h.example/o/d.git", "v1.2", "py"
    )
    assert parse("data@git+https://h.example/o/d@main") == GitUrl("https://h.example/o/d", "main")
    assert parse("git+ssh://git@h.example/o/d.git@v2").ref == "v2"  # user@ is no ref
    for word in (
        "hg+https://h.example/o/d",  # not git
        "plotter @ https://example.org/plotter-1.0.tar.gz",  # an archive
        "git+https://h.example/o/d#subdirectory=../../etc",
        "git+https://h.example/o/d@--upload-pack=touch",  # an option, not a ref
    ):
        with pytest.raises(Unreachable):
            parse(word)


def test_the_commit_is_the_one_of_the_environment_s_date_unless_the_url_names_one(
    served, data_repo, tmp_path
):
    """The default branch (or a branch the URL names) as of the date; a tag or commit as
    given, whatever the date. One clone serves every record."""
    _, commits = data_repo
    sources = UrlSources(tmp_path / "cache", schemes=["http"])
    word = f"git+{served}"
    assert sources.source("swt-fixture-data", word, "2020-06-01").commit == commits["first"]
    assert sources.source("swt-fixture-data", word, "2022-06-01").commit == commits["second"]
    assert sources.source("swt-fixture-data", word, "").commit == commits["second"]
    assert sources.source("d", f"{word}@main", "2020-06-01").commit == commits["first"]
    assert sources.source("d", f"{word}@v1", "2022-06-01").commit == commits["first"]
    assert (
        sources.source("d", f"{word}@{commits['second']}", "2020-06-01").commit
        == (commits["second"])
    )
    assert len(list((tmp_path / "cache").glob("*.git"))) == 1
    with pytest.raises(Unreachable, match="no commit of HEAD before 2019-01-01"):
        sources.source("d", word, "2019-01-01")
    with pytest.raises(Unreachable, match="no ref or commit nope"):
        sources.source("d", f"{word}@nope", "2020-06-01")
    with pytest.raises(Unreachable, match="has no absent/"):
        sources.source("d", f"{word}#subdirectory=absent", "2020-06-01")
    tree = extract(sources.source("d", f"{word}#subdirectory=sub", ""), tmp_path / "tree")
    assert (tree / "swt_fixture_data" / "__init__.py").read_text() == 'CONTENT = "sub"\n'
    assert (tree / "pyproject.toml").is_file() and not (tree / "sub").exists()


def test_what_cannot_be_fetched_says_why_and_what_is_refused_is_never_tried(
    served, data_repo, tmp_path
):
    """The URL comes from the repository's own files: a scheme not allowed (http by default, a
    local path) is refused before any git runs; a host that does not answer is unreachable
    with git's reason, asked once per process."""
    repo, _ = data_repo
    sources = UrlSources(tmp_path / "cache")  # https only
    with pytest.raises(Unreachable, match=r"http URLs are not fetched \(allowed: https\)"):
        sources.source("d", f"git+{served}", "")
    with pytest.raises(Unreachable, match="file URLs are not fetched"):
        UrlSources(tmp_path / "c2", schemes=["http"]).source("d", f"git+file://{repo.path}", "")
    with pytest.raises(Unreachable, match="not a git URL with a host"):
        sources.source("d", "git+https:///no-host", "")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "c2").exists()
    closed = UrlSources(tmp_path / "c3", schemes=["http"], timeout_s=30)
    url = f"git+{closed_port_url()}/data.git"
    with pytest.raises(Unreachable, match="unable to access|Failed to connect|refused") as first:
        closed.source("d", url, "")
    with pytest.raises(Unreachable) as again:  # not asked twice
        closed.source("d", url, "")
    assert str(again.value) == str(first.value)
    assert not list((tmp_path / "c3").glob("*.git/HEAD"))


def test_a_fetched_package_is_installed_from_its_tree_in_place_of_its_name(tmp_path):
    """The optional step installs the tree (``sources_dir/NAME``) instead of the index's
    release; the environment's key holds what was fetched (not where it lives), and the keys
    of environments without one stay as they were."""
    source_a = _source(tmp_path, "a" * 40)
    base = EnvironmentSpec(python="3.11", optional_packages=("swt-fixture-data", "other"))
    spec = dataclasses.replace(base, url_sources=(source_a,))
    steps = install_steps(spec, base_python="p", venv="/e", project_dir=None, sources_dir="/s")
    assert steps[-2].label == "optional packages" or steps[-1].label == "optional packages"
    (optional,) = [s.argv for s in steps if s.label == "optional packages"]
    assert optional[7] == "/s/swt-fixture-data other"
    with pytest.raises(ValueError, match="url_sources need a sources_dir"):
        install_steps(spec, base_python="p", venv="/e", project_dir=None)
    assert spec.key() != base.key()
    assert spec.key() != dataclasses.replace(spec, url_sources=(_source(tmp_path, "b" * 40),)).key()
    moved = dataclasses.replace(source_a, git_dir=tmp_path / "elsewhere.git")
    assert spec.key() == dataclasses.replace(spec, url_sources=(moved,)).key()
    assert "url_sources" not in base.key_material()
    assert spec.describe()["url_sources"] == [
        ["swt-fixture-data", "git+https://h.example/d", "a" * 40, ""]
    ]
    lines = url_source_lines(spec)  # an exported task's build: cloned from its remote there
    assert (
        lines[0]
        == "git clone --quiet --bare https://h.example/d /swt/url-clones/swt-fixture-data.git"
    )
    assert lines[-1].endswith(f"archive {'a' * 40} | tar -x -C /swt/{URL_SOURCES}/swt-fixture-data")


def test_a_source_the_builder_s_clone_cannot_give_is_a_fault_of_the_machine(tmp_path):
    """The clone vanished between the fetch and the build: no verdict on the record, a fault
    (``infra_error``) naming it, tried again by the next build."""
    spec = EnvironmentSpec(
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        optional_packages=("swt-fixture-data",),
        url_sources=(_source(tmp_path, "a" * 40),),  # d.git was never made
    )
    environments = LocalEnvironments(tmp_path / "envs", Interpreters(), sandbox="none")
    with pytest.raises(InfrastructureError, match="git archive failed") as raised:
        environments.python(spec)
    assert raised.value.fault == "url_source"
    assert not (environments.path(spec) / "bin" / "python").exists()


def _source(tmp_path: Path, commit: str):
    from validation.environments.url_sources import UrlSource

    return UrlSource("swt-fixture-data", "git+https://h.example/d", commit, tmp_path / "d.git")


@pytest.mark.slow
def test_a_local_build_installs_the_commit_of_its_date_and_not_the_index_release(served, tmp_path):
    """A local index (no network) has ``swt-fixture-data`` 9.0, whose content differs; the
    environment of 2020-06-01 gets the URL's commit of that date, built in the sandbox."""
    if find_uv() is None:
        pytest.skip("uv is not installed")
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("setuptools-*.whl"))
    if not bundled:
        pytest.skip("this Python bundles no setuptools wheel for the local index")
    index = tmp_path / "envs" / "index"  # the sandbox sees the environments' root
    index.mkdir(parents=True)
    (index / bundled[0].name).write_bytes(bundled[0].read_bytes())
    write_wheel(index, "swt-fixture-data", "9.0", module="swt_fixture_data")
    offline = (("UV_NO_INDEX", "1"), ("UV_FIND_LINKS", str(index)))
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    source = UrlSources(tmp_path / "cache", schemes=["http"]).source(
        "swt-fixture-data", f"git+{served}", "2020-06-01"
    )
    spec = EnvironmentSpec(
        python=here,
        optional_packages=("swt-fixture-data",),
        pins_override=False,
        env=offline,
        url_sources=(source,),
    )
    environments = LocalEnvironments(tmp_path / "envs", Interpreters(), installer="uv")
    python = environments.python(spec)
    printed = subprocess.run(
        [str(python), "-c", "import swt_fixture_data as d; print(d.CONTENT)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert printed.stdout.strip() == "first"
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert f"# swt-fixture-data: git+{served} at {source.commit}" in log
    # the index's release stands in without the source
    plain = dataclasses.replace(spec, url_sources=())
    python = environments.python(plain)
    printed = subprocess.run(
        [str(python), "-c", "import swt_fixture_data as d; print(d.VERSION)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert printed.stdout.strip() == "9.0"


def test_the_stage_fetches_what_ci_installs_from_a_url_and_names_what_stood_in(
    served, data_repo, tmp_path, git_repo
):
    """validation/stage.py: of what the project's CI installs from URLs, the reachable one is
    fetched at the environment's date and installed from its tree (``run_metadata.url_sources``);
    the index's release stands in for the other, named with the reason
    (``index_stand_ins``, ``url_unreached``). ``url_packages = "index"`` fetches nothing, and
    the settings at their defaults leave every stored result's key as it was."""
    _, commits = data_repo
    workflow = (
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: pip install pytest git+{served} git+https://github.invalid/acme/CharPyLS\n"
        "      - run: pytest\n"
    )
    setup = "from setuptools import setup\nsetup(name='m', install_requires=[])\n"
    commit = git_repo.commit({"setup.py": setup, ".github/workflows/ci.yml": workflow})
    record = candidate(repo="acme/m", base_commit=commit)
    settings = ValidationConfig(
        bundled_specs=False, packages=["pytest"], url_schemes=["http", "https"]
    )
    stage = ValidateStage(settings, tmp_path / "w", {"acme/m": str(git_repo.path)})
    resolution = stage.environments.resolve(record, git_repo.path)
    assert dict(resolution.url_packages) == {
        "data": f"git+{served}",
        "charpyls": "git+https://github.invalid/acme/CharPyLS",
    }
    fetched, unreached = stage._url_sources(record, resolution, resolution.spec)
    assert [(s.name, s.commit) for s in fetched] == [("data", commits["second"])]  # 2024's
    assert list(unreached) == ["charpyls"] and "github.invalid" in unreached["charpyls"]
    spec = dataclasses.replace(resolution.spec, url_sources=tuple(fetched))
    assert index_stand_ins(resolution, spec, ()) == {
        "charpyls": "git+https://github.invalid/acme/CharPyLS"
    }
    assert url_sources_told(spec, ()) == {"data": f"git+{served} at {commits['second']}"}
    left_out = (f"/x/{URL_SOURCES}/data",)
    assert url_sources_told(spec, left_out)["data"].endswith("(left out: not installable)")
    index = ValidationConfig(**{**settings.model_dump(), "url_packages": "index"})
    by_name = ValidateStage(index, tmp_path / "w2", {"acme/m": str(git_repo.path)})
    assert by_name._url_sources(record, resolution, resolution.spec) == (
        [],
        {"data": "url_packages = index", "charpyls": "url_packages = index"},
    )
    default = ValidateStage(ValidationConfig(), tmp_path / "w3", {})
    assert "url_packages" not in default.fingerprint()["validation"]
    assert "url_schemes" not in default.fingerprint()["validation"]
    assert by_name.fingerprint()["validation"]["url_packages"] == "index"
    # a result stored while the URL could not be had holds until it can be
    stored = Outcome.keep(
        "validate",
        make_instance(
            run_metadata={
                "index_stand_ins": json.dumps({"data": f"git+{served}"}),
                "url_unreached": json.dumps({"data": "Could not resolve host"}),
            }
        ),
    )
    assert not stage.holds(record, stored)  # http allowed: the URL answers now
    https_only = ValidateStage(ValidationConfig(bundled_specs=False), tmp_path / "w4", {})
    assert https_only.holds(record, stored)  # still not fetched: the stand-in holds
    assert https_only.holds(record, Outcome.keep("validate", make_instance()))
