"""Hostile test code against the local backend's sandbox: it reads no planted secret (the home,
``/root``, another work dir's store), a symlinked ``~/.ssh`` does not break it, a fork bomb or
a memory hog of many processes is held by the process limit when the builder is root (in a test
and in a ``setup.py``), and 200 MB of output leave a bounded log."""

import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from builder.core.capped_log import HEAD_BYTES, TAIL_BYTES
from tests.support.hostile import KEPT, Project, hostile_tests, reason
from tests.support.stage_fixtures import CODE, TESTS, runs_of

pytestmark = pytest.mark.parametrize("backend", ["local"])  # the sandbox is the local backend's

PROCESSES = 30
LIMITS = {"timeout_s": 60.0, "memory_mb": 2048, "processes": PROCESSES}
"""A run may hold 2 GB of address space per process and PROCESSES processes."""
SECRET = f"swt-planted-{uuid.uuid4().hex}"

READS = """
import pytest


def _read():
    found = []
    for path in {paths!r}:
        try:
            with open(path) as handle:
                found.append(handle.read().strip())
        except OSError:
            pass
    return found or ["nothing"]


@pytest.mark.parametrize("seen", _read())  # what it read becomes a test id: into the dataset
def test_reads(seen):
    pass
"""

FORKS = """
import os
import time


def test_fork_bomb():
    children = []
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    assert len(children) < {limit}, len(children)
"""

HOARDS = """
import os
import time


def test_memory_hog():
    children = []
    for _ in range(60):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                hoard = bytearray(48 * 2**20)  # touched: resident, not just reserved
                time.sleep(3)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    assert len(children) < {limit}, len(children)  # at most PROCESSES x memory_mb in all
"""


SETUP_FORKS = """
import os
import sys
import time

from setuptools import setup

children = []
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
environment = os.getcwd()[: -len(".project")]  # its checkout is <environment>.project
with open(os.path.join(environment, "forked.txt"), "a") as handle:
    handle.write(f"{{len(children)}}\\n")  # the test reads it there
if len(children) >= {limit}:
    sys.exit("the process limit did not hold")
setup(name="pkg", version="1.0", packages=["pkg"])
"""
BUILD_PROCESSES = 80
"""The processes a build may have: room for uv's threads, not for 300 children."""

PRINTS = """
def test_prints(capsys):
    line = "x" * 1023 + "\\n"
    with capsys.disabled():  # straight to the run's output, which the log holds
        for _ in range(200 * 1024):
            print(line, end="")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("hostile-sandbox") / "repo", repo="hostile/sandbox")


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


@contextlib.contextmanager
def planted(*paths: Path):
    """``SECRET`` in each of ``paths`` for the block (gone afterwards: the canary guard sees the
    home as it was)."""
    made = []
    try:
        for path in paths:
            top = next((p for p in reversed(path.parents) if not p.exists()), path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SECRET + "\n")
            made.append(top)
        yield
    finally:
        for top in made:
            if top.is_dir():
                shutil.rmtree(top)
            else:
                top.unlink(missing_ok=True)


def test_reads_no_planted_secret(case, canary):
    """In the home, in ``/root`` (the builder is root), in another work dir's store."""
    store = canary.home / "other-build" / ".swt-work" / "store"
    paths = [canary.home / "notes" / "secret.txt", store / "validate" / "entry.json"]
    if os.geteuid() == 0:
        paths.append(Path("/root") / f".swt-hostile-{uuid.uuid4().hex}")
    with planted(*paths):
        outcome = case("planted", READS.format(paths=[str(path) for path in paths]))
    _kept(outcome, "test_reads[nothing]")


@pytest.fixture
def linked_home(monkeypatch):
    """A home whose ``.ssh`` links to a directory (as dotfile managers make), outside the host's
    ``/tmp`` (which an older sandbox replaced, hiding any home there), as HOME."""
    home = Path(tempfile.mkdtemp(prefix="swt-hostile-home-", dir="/var/tmp"))
    keys = home / "dotfiles" / "ssh"
    keys.mkdir(parents=True)
    (keys / "id_ed25519").write_text(SECRET + "\n")
    (home / ".ssh").symlink_to("dotfiles/ssh")
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home)


def test_a_symlinked_ssh_dir_in_the_home(case, linked_home):
    """Nothing of the home is mounted, so the sandbox does not trip over the link."""
    outcome = case("ssh-link", READS.format(paths=[str(linked_home / ".ssh" / "id_ed25519")]))
    _kept(outcome, "test_reads[nothing]")


def test_a_fork_bomb(case):
    outcome = case("forks", FORKS.format(limit=PROCESSES))
    _kept(outcome, "test_fork_bomb")


def test_a_memory_hog_of_many_processes(case):
    outcome = case("hoards", HOARDS.format(limit=PROCESSES))
    _kept(outcome, "test_memory_hog")


@pytest.mark.slow
def test_a_fork_bomb_in_setup_py(tmp_path, validate, env_dir):
    """An environment build runs as an unprivileged uid too (not uid 0 of a user namespace,
    which the kernel exempts from the limit): the build's processes stop at ``processes``."""
    base = {"setup.py": SETUP_FORKS.format(limit=BUILD_PROCESSES), "pkg/__init__.py": CODE,
            "tests/test_pkg.py": TESTS}  # fmt: skip
    project = Project(tmp_path / "repo", base=base, repo=f"hostile/setup-forks-{tmp_path.name}")
    candidate = project.candidate("setup-forks", project.diff(hostile_tests("")))
    outcome = validate([project], candidate, **{**LIMITS, "processes": BUILD_PROCESSES})
    assert reason(outcome) == "kept", outcome.verdict
    counts = [int(n) for path in env_dir.glob("*/forked.txt") for n in path.read_text().split()]
    assert counts and max(counts) < BUILD_PROCESSES, counts  # setup.py ran, and was held


def test_200_mb_of_output(case):
    """The log is bounded (its head and tail, the cut said); the results come from the report."""
    outcome = case("prints", PRINTS)
    _kept(outcome, "test_prints")
    for run in runs_of(outcome):
        log = Path(run.log_path)
        assert log.stat().st_size < HEAD_BYTES + TAIL_BYTES + 4096, (log, log.stat().st_size)
        assert b"bytes of output cut here" in log.read_bytes()
