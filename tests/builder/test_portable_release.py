"""A release does not depend on where it was built: a project whose test ids hold a data file of
the environment, ``sys.prefix``, the checkout and the run's home, built with ``swt-builder
build`` in two work dirs and on both backends, gives the same bytes, with canonical ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.cli import main
from tests.support import docker as docker_support
from tests.support.git import GitRepo
from tests.support.records import swe_record, write_records
from tests.support.tiers import DOCKER, END_TO_END

pytestmark = END_TO_END

CODE = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = """import os
import sys
import sysconfig

import pytest

from pkg import add

DATA = os.path.join(sysconfig.get_paths()["purelib"], "pytest", "__init__.py")
PLACES = [DATA, sys.prefix, os.getcwd() + "/data.txt", os.environ["HOME"] + "/cfg"]


@pytest.mark.parametrize("where", PLACES)
def test_where(where):
    assert where


def test_plain():
    assert add(2, 2) != 5
"""
GOLDEN = (
    TESTS
    + """

@pytest.mark.parametrize("where", PLACES)
def test_add_knows_where(where):
    assert add(1, 2) == 3
"""
)
PLACEHOLDERS = ["<env>/lib/python3.11/site-packages/pytest/__init__.py", "<env>",
                "<testbed>/data.txt", "<home>/cfg"]  # fmt: skip
OUTPUTS = ("instances.jsonl", "data/full/test-00000-of-00001.parquet", "manifest.json",
           "README.md", "stats.json", "config.json")  # fmt: skip


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    """The configuration of the fixture's one record (its repository, a SWE-bench-format file)."""
    root = tmp_path_factory.mktemp("portable")
    repo = GitRepo(root / "repo")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    record = swe_record(
        "fixture/paths", 1, base, repo.diff({"pkg/__init__.py": FIXED}),
        repo.diff({"tests/test_pkg.py": GOLDEN}),
    )  # fmt: skip
    records = write_records(root / "records.jsonl", [record])
    path = root / "swt-builder.toml"
    path.write_text(
        f'name = "portable"\n[source]\nkind = "swe-bench"\npath = "{records}"\n'
        f'[repos]\n"fixture/paths" = "{repo.path}"\n[text]\nenabled = false\n'
        '[validation]\npython = "3.11"\npackages = ["pytest"]\nrepetitions = 1\n'
        "timeout_s = 60\n"
    )
    return path


def _build(config: Path, root: Path, backend: str) -> Path:
    argv = ["build", "--config", str(config), "--output-dir", str(root / "dist"),
            "--work-dir", str(root / "work-dir"), "--no-progress",
            "--set", f"validation.backend={backend}"]  # fmt: skip
    assert main(argv) == 0
    return root / "dist" / "portable"


def _same(first: Path, second: Path) -> None:
    for name in OUTPUTS:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def _lists(dataset: Path) -> dict:
    row = json.loads((dataset / "instances.jsonl").read_text().splitlines()[0])
    return {"FAIL_TO_PASS": row["FAIL_TO_PASS"], "PASS_TO_PASS": row["PASS_TO_PASS"]}


@pytest.fixture(scope="module")
def local_release(config, tmp_path_factory):
    return _build(config, tmp_path_factory.mktemp("first-work-place"), "local")


def test_ids_hold_placeholders_where_the_run_had_host_paths(local_release):
    assert _lists(local_release) == {
        "FAIL_TO_PASS": sorted(
            f"tests/test_pkg.py::test_add_knows_where[{p}]" for p in PLACEHOLDERS
        ),
        "PASS_TO_PASS": sorted(
            ["tests/test_pkg.py::test_plain"]
            + [f"tests/test_pkg.py::test_where[{p}]" for p in PLACEHOLDERS]
        ),
    }


def test_a_second_work_dir_gives_the_same_bytes(config, local_release, tmp_path):
    _same(local_release, _build(config, tmp_path / "another" / "deeper", "local"))


@pytest.mark.parametrize("backend", [pytest.param("docker", marks=DOCKER)])
def test_the_docker_backend_gives_the_same_lists(config, local_release, tmp_path, backend):
    """The lists and every row are the local build's but for the backend named in run_metadata
    (and the sandbox, which Docker has none of)."""
    docker_support.engine()
    docker_support.base_image()
    built = _build(config, tmp_path, backend)
    assert _lists(built) == _lists(local_release)
    local = json.loads((local_release / "instances.jsonl").read_text().splitlines()[0])
    other = json.loads((built / "instances.jsonl").read_text().splitlines()[0])
    differing = {key for key in local if local[key] != other[key]}
    assert differing <= {"run_metadata"}
    metadata = {
        k for k in local["run_metadata"] if local["run_metadata"][k] != other["run_metadata"].get(k)
    }
    assert metadata <= {"backend", "sandbox"}, metadata
