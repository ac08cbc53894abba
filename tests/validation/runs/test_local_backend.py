"""The local backend: private HOME/TMP, resource limits, no network, group kill, both sandboxes."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests.support.processes import alive
from validation.environments import sandbox
from validation.environments.environment import EnvironmentSpec
from validation.environments.sandbox import require
from validation.runs.backends.local import Limits, LocalBackend, LocalSession, network_isolation

GRANDCHILD = textwrap.dedent(
    """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    open(sys.argv[1], "w").write(str(child.pid))
    time.sleep(600)
    """
)
SANDBOXES = ["bwrap", "none"]


@pytest.fixture
def session(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))  # what the sandbox shows: not a
    # venv of this machine's /tmp (a fresh clone's), which the sandbox hides
    spec = EnvironmentSpec(python="3.11", env=(("SPEC_VARIABLE", "from-spec"),))

    def make(limits=None, sandbox="bwrap"):
        return LocalSession(
            tree, tmp_path / "run", python, spec, limits or Limits(), bwrap=require(sandbox)
        )

    return make


def _run(session, code, timeout_s=60.0, *args):
    log = session.run_dir / "log.txt"
    completed = session.run([str(session.python), "-c", code, *args], log, timeout_s)
    return completed, log.read_text()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_private_home_tmp_no_secrets_and_spec_variables(session, monkeypatch, sandbox):
    monkeypatch.setenv("GITHUB_TOKEN", "secret-token")
    run = session(sandbox=sandbox)
    completed, log = _run(
        run,
        "import os, tempfile; print(os.environ['HOME'], tempfile.gettempdir(), "
        "os.environ.get('GITHUB_TOKEN'), os.environ['SPEC_VARIABLE'], os.getcwd())",
    )
    assert completed.exit_code == 0, log
    home, tmp, token, variable, cwd = log.split()
    root = "/swt" if sandbox == "bwrap" else str(run.run_dir)
    assert home == f"{root}/home" and tmp == f"{root}/tmp"
    assert cwd == ("/testbed" if sandbox == "bwrap" else str(run.tree))
    assert token == "None" and variable == "from-spec"


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_file_size_memory_and_cpu_limits(session, sandbox):
    run = session(Limits(cpu_s=1, memory_mb=1024, processes=512, file_size_mb=1), sandbox)
    completed, log = _run(
        run,
        "import resource\n"
        "print(resource.getrlimit(resource.RLIMIT_NPROC)[0])\n"
        "try:\n    bytearray(2 * 1024**3)\nexcept MemoryError:\n    print('memory-limited')\n"
        "try:\n    open('big', 'wb').write(b'x' * 2 * 1024 * 1024)\n"
        "except OSError as error:\n    print('file-limited', error.errno)\n",
    )
    assert completed.exit_code == 0, log
    assert log.split()[:3] == ["512", "memory-limited", "file-limited"]
    completed, log = _run(run, "while True: pass", 60.0)
    assert not completed.timed_out and completed.exit_code != 0  # SIGXCPU after 1 CPU second


def _serve_once(server):
    server.settimeout(30)
    try:
        connection, _ = server.accept()
        connection.close()
    except OSError:
        pass


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_network_where_the_os_allows_it(session, sandbox):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    threading.Thread(target=_serve_once, args=(server,), daemon=True).start()
    probe = textwrap.dedent(
        f"""
        import socket
        own = socket.socket(); own.bind(("127.0.0.1", 0)); own.listen()
        socket.create_connection(own.getsockname(), timeout=5).close()
        print("own-loopback-ok")
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
            print("host-reachable")
        except OSError:
            print("host-unreachable")
        """
    )
    isolation, reason = network_isolation()
    completed, log = _run(session(sandbox=sandbox), probe)
    assert completed.exit_code == 0, log
    _, allowed_log = _run(session(Limits(network=True), sandbox), probe)
    assert "host-reachable" in allowed_log
    if sandbox == "bwrap" or isolation is not None:
        assert log.split() == ["own-loopback-ok", "host-unreachable"], log
        assert "network namespace" in reason
    else:  # the OS does not allow it: the run is not isolated, and the backend says why
        assert "host-reachable" in log and reason
    server.close()


def test_fingerprint_states_sandbox_limits_and_isolation(tmp_path):
    backend = LocalBackend(tmp_path, limits=Limits(cpu_s=5))
    fingerprint = backend.fingerprint()
    assert '"RLIMIT_CPU": 5' in fingerprint["limits"]
    assert fingerprint["sandbox"] == "bwrap"
    assert fingerprint["sandbox_version"] == str(sandbox.SANDBOX_VERSION)
    assert fingerprint["network"] == "network namespace (bwrap)"
    unconfined = LocalBackend(tmp_path, sandbox="none").fingerprint()
    assert unconfined["sandbox"] == "none"
    assert unconfined["network"] == network_isolation()[1]
    assert LocalBackend(tmp_path, limits=Limits(network=True)).fingerprint()["network"] == (
        "allowed"
    )
    assert json.loads(fingerprint["limits"])["RLIMIT_CPU"] == 5


@pytest.mark.slow
def test_timeout_kills_the_group_without_a_sandbox(session, tmp_path):
    """``sandbox = "none"``: the process group is killed (what a PID namespace does more of)."""
    pid_file = tmp_path / "grandchild.pid"
    completed, _ = _run(session(sandbox="none"), GRANDCHILD, 3.0, str(pid_file))
    assert completed.timed_out and completed.exit_code is None
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_session_from_backend_uses_worktree_and_configured_env_dir(tmp_path, git_repo, sandbox):
    commit = git_repo.commit({"tests/test_a.py": "def test_a():\n    assert True\n"})
    backend = LocalBackend(
        tmp_path / "work", env_dir=tmp_path / "cache", python_search_paths=[sys.executable],
        sandbox=sandbox,
    )  # fmt: skip
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert backend.available_pythons() == [here]
    python = backend.prepare(EnvironmentSpec(python=here))
    assert python.is_relative_to(tmp_path / "cache")
    with backend.session(python, git_repo.path, commit, tmp_path / "run") as run:
        completed = run.run(
            ["python", "-c", "import os; print(os.path.exists('tests/test_a.py'))"],
            tmp_path / "log.txt", 30,
        )  # fmt: skip
        assert completed.exit_code == 0 and (tmp_path / "log.txt").read_text().strip() == "True"
    assert not (tmp_path / "run" / "repo").exists()
    subprocess.run(["git", "worktree", "list"], cwd=git_repo.path, check=True)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_runs_write_bytecode_only_in_a_session_that_asks_for_it(session, sandbox):
    """A patch applied within the second a run compiled a file, keeping its size, would run
    the old code from the cache: only a session whose sources no run follows writes it."""
    run = session(sandbox=sandbox)
    (run.tree / "module.py").write_text("VALUE = 1\n")
    completed, log = _run(run, "import module")
    assert completed.exit_code == 0, log
    assert not (run.tree / "__pycache__").exists()
    run.bytecode = True
    completed, log = _run(run, "import module")
    assert completed.exit_code == 0, log
    assert [p.name.split(".")[0] for p in (run.tree / "__pycache__").iterdir()] == ["module"]
