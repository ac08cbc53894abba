"""Hostile test code and setup.py, on both backends: it may run, and fail, but it changes no file
outside its run, keeps no process, reaches no host address and sees no token."""

import socket
import time

import pytest

from tests.support.hostile import (
    KEPT,
    MARK,
    Listener,
    Project,
    hostile_tests,
    reason,
    token_holder,
)
from tests.support.stage_fixtures import CODE, TESTS

LIMITS = {"timeout_s": 8.0, "memory_mb": 512, "docker_memory": "256m"}
"""One setting for every run case (one stage per backend): an endless loop is cut at 8 s, and
a run may hold 512 MB of address space (local) or of memory (Docker)."""

WRITES = """
import pathlib


def test_writes_outside():
    for target in {targets!r}:
        try:
            path = pathlib.Path(target)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("written by the test")
        except OSError:
            pass
"""

ENVIRON = """
import glob
import os

import pytest


def _seen():
    found = {f"{k}={v}" for k, v in os.environ.items() if k in ("GITHUB_TOKEN", "HF_TOKEN")}
    for name in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        for item in data.split(b"\\0"):
            if item.split(b"=")[0] in (b"GITHUB_TOKEN", b"HF_TOKEN"):
                found.add(item.decode(errors="replace"))
    return sorted(found) or ["nothing"]


@pytest.mark.parametrize("seen", _seen())  # what it read becomes a test id: into the dataset
def test_environ(seen):
    pass
"""

NETWORK = """
import socket


def test_network():
    for host in {hosts!r}:
        try:
            socket.create_connection((host, {port}), timeout=2).close()
        except OSError:
            pass
"""

DAEMON = """
import subprocess
import sys


def test_daemon():
    for _ in range(2):
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)", "{mark}"],
            start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
"""

LOOP = """
def test_loop():
    while True:
        pass
"""

MEMORY = """
def test_memory():
    hoard = []
    try:
        while True:
            hoard.append(bytearray(64 * 2**20))
    except MemoryError:
        pass
"""

LINKS_ITS_FILE = """

def test_add():
    assert add(1, 2) == 3


def test_links_its_own_file():
    import os

    path = os.path.abspath(__file__)
    if not os.path.islink(path):
        os.remove(path)
        os.symlink({target!r}, path)
"""

SETUP_PRINTS = "import os, sys\nprint('setup.py ran:', dict(os.environ))\nsys.exit(7)\n"
SETUP_HANGS = "import time\ntime.sleep(60)\nraise SystemExit(1)\n"
SETUP_HOARDS = "hoard = []\nwhile True:\n    hoard.append(bytearray(64 * 2**20))\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("hostile-code") / "repo", repo="hostile/code")


@pytest.fixture
def case(project, validate):
    """Validate the candidate whose test patch adds ``code`` beside the golden test."""

    def run(name, code):
        candidate = project.candidate(name, project.diff(hostile_tests(code)))
        return validate([project], candidate, **LIMITS)

    return run


def _kept(outcome, *passing: str) -> None:
    assert reason(outcome) == "kept", outcome.verdict
    assert outcome.output.FAIL_TO_PASS == KEPT
    assert outcome.output.PASS_TO_PASS == tuple(f"tests/test_hostile.py::{t}" for t in passing)


def test_writes_outside_the_run(case, canary):
    targets = [canary.folder / "notes.txt", canary.folder / "planted.py",
               canary.home / ".bashrc", canary.home / ".swt-home-marker",
               canary.home / ".ssh" / "authorized_keys"]  # fmt: skip
    outcome = case("writes", WRITES.format(targets=[str(t) for t in targets]))
    _kept(outcome, "test_writes_outside")  # and the canary guard finds every file unchanged


def test_reads_every_process_environment(case):
    with token_holder():
        outcome = case("environ", ENVIRON)
    _kept(outcome, "test_environ[nothing]")


def test_connects_to_the_host(case):
    hosts = ["127.0.0.1", "172.17.0.1", socket.gethostname()]
    with Listener() as listener:
        outcome = case("network", NETWORK.format(hosts=hosts, port=listener.port))
    _kept(outcome, "test_network")
    assert listener.accepted == 0


def test_leaves_daemons_behind(case):
    outcome = case("daemon", DAEMON.format(mark=MARK))
    _kept(outcome, "test_daemon")  # and the guard finds no process naming MARK


def test_loops_forever(case):
    outcome = case("loop", LOOP)
    assert reason(outcome) == "timeout", outcome.verdict
    assert outcome.verdict.evidence["side"] == "before"


def test_allocates_without_end(case, backend):
    outcome = case("memory", MEMORY)
    if backend == "local":  # the address space limit: MemoryError, which the test catches
        _kept(outcome, "test_memory")
    else:  # the container's memory limit: the kernel kills the runner, no report is left
        assert reason(outcome) == "runner_failed", outcome.verdict


def _setup_project(tmp_path, name: str, setup: str) -> Project:
    base = {"setup.py": setup, "pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS}
    return Project(tmp_path / "repo", base=base, repo=f"hostile/{name}-{tmp_path.name}")


def test_a_setup_py_printing_its_environment(tmp_path, validate):
    project = _setup_project(tmp_path, "setup-prints", SETUP_PRINTS)
    candidate = project.candidate("setup-prints", project.diff(hostile_tests("")))
    outcome = validate([project], candidate, **LIMITS)
    assert reason(outcome) == "environment_failed", outcome.verdict
    log = outcome.verdict.evidence["log"]
    with open(log, encoding="utf-8", errors="replace") as handle:
        assert "setup.py ran:" in handle.read()  # and the guard finds no token in it


@pytest.mark.slow
def test_a_hanging_setup_py(tmp_path, validate):
    project = _setup_project(tmp_path, "setup-hangs", SETUP_HANGS)
    candidate = project.candidate("setup-hangs", project.diff(hostile_tests("")))
    started = time.monotonic()
    outcome = validate([project], candidate, **LIMITS, build_timeout_s=20.0)
    assert reason(outcome) == "environment_failed", outcome.verdict
    assert time.monotonic() - started < 50, "the build was not cut short"


@pytest.mark.slow  # about 10 s on the local backend: 2 GiB written before the MemoryError
def test_a_setup_py_allocating_without_end(tmp_path, validate, backend):
    project = _setup_project(tmp_path, "setup-hoards", SETUP_HOARDS)
    candidate = project.candidate("setup-hoards", project.diff(hostile_tests("")))
    outcome = validate([project], candidate, **LIMITS)
    assert reason(outcome) == "environment_failed", outcome.verdict
    evidence = outcome.verdict.evidence
    if backend == "local":  # the build's address space limit (2 GiB): MemoryError in the log
        with open(evidence["log"], encoding="utf-8", errors="replace") as handle:
            assert "MemoryError" in handle.read()
    else:  # the container's memory limit, which builds share with runs: the kernel's kill
        assert "ran out of memory (limit 256m)" in evidence["error"], evidence


def test_turns_its_test_file_into_a_link_to_a_host_file(project, validate, canary, backend):
    """The host undoes the test patch after the golden runs, for the existing tests: a test
    file a run turned into a link to a host file is not written through (``unsafe_path``). A
    container's writes never reach the checkout: on Docker the file is undone, the instance
    kept."""
    changed = TESTS.replace("== 4", "== 4  # changed: the existing pass runs it")
    test_patch = project.diff(
        {
            "tests/test_pkg.py": changed
            + LINKS_ITS_FILE.format(target=str(canary.folder / "notes.txt"))
        }
    )
    outcome = validate([project], project.candidate("links-its-file", test_patch), **LIMITS)
    if backend == "local":
        assert reason(outcome) == "unsafe_path", outcome.verdict
        assert "tests/test_pkg.py" in outcome.verdict.evidence["paths"]
        assert "undone after its runs" in outcome.verdict.evidence["patch"]
    else:
        assert reason(outcome) == "kept", outcome.verdict
        assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    # and the canary guard finds notes.txt unchanged
