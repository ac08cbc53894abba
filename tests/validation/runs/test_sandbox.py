"""Hostile test runs and environment builds, through real bubblewrap: nothing reaches the host."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from builder.cli import EXIT_USAGE, main
from builder.core.errors import SwtError
from tests.support.processes import alive
from tests.support.stage_fixtures import ADD_TEST, FIXED, runs_of
from validation.environments import sandbox
from validation.environments.environment import (
    COMPLETE,
    EnvironmentBuildError,
    EnvironmentSpec,
    LocalEnvironments,
)
from validation.environments.interpreters import Interpreters
from validation.runs.backends.local import Limits, LocalBackend, LocalSession

TOKENS = {"GITHUB_TOKEN": "swt-dummy-github-token", "HF_TOKEN": "swt-dummy-hf-token"}
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def tokens(monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    return TOKENS


@pytest.fixture
def canary():
    """A directory outside every run and build dir that sandboxed code can see (read-only)."""
    folder = Path(tempfile.mkdtemp(prefix=".swt-canary-", dir=Path.home()))
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def run(tmp_path):
    """A session on a checkout holding ``marker.txt``; ``run(code, sandbox=...)`` runs Python."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "marker.txt").write_text("the checkout\n")
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))  # what the sandbox shows: not a
    # venv of this machine's /tmp (a fresh clone's), which the sandbox hides

    def execute(code, *args, sandbox_kind="bwrap", timeout_s=60.0):
        session = LocalSession(
            tree, tmp_path / "run", python, limits=Limits(), bwrap=sandbox.require(sandbox_kind)
        )
        log = tmp_path / "run.log"
        completed = session.run([str(python), "-c", code, *args], log, timeout_s)
        return completed, log.read_text(), session

    return execute


def _with_marker(marker: str) -> list[int]:
    """Host pids of processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


def _gone(marker: str, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while _with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _with_marker(marker)


WRITE = textwrap.dedent(
    """
    import sys
    for folder in sys.argv[1:]:
        try:
            with open(folder + "/swt-hostile-write", "w") as handle:
                handle.write("written from the sandbox")
            print("wrote", folder)
        except OSError as error:
            print("refused", folder, error.strerror)
    """
)


def test_a_run_writes_nothing_on_the_host(run, canary, tmp_path):
    home, scratch = Path.home(), tmp_path / "outside"
    scratch.mkdir()
    targets = [home, Path("/root"), Path("/tmp"), canary, scratch, tmp_path / "env"]
    completed, log, _ = run(WRITE, *map(str, targets))
    assert completed.exit_code == 0, log
    assert "refused " + str(canary) in log and "refused /root" in log, log
    assert "wrote /tmp" in log  # its own /tmp, gone with the sandbox
    for folder in targets:
        assert not (folder / "swt-hostile-write").exists(), folder


def test_nothing_of_the_home_is_there(run, canary, monkeypatch):
    """Neither credential files nor anything else of the builder's home: it is not mounted."""
    monkeypatch.setenv("HOME", str(canary))  # the builder's home, as Path.home() finds it
    (canary / ".netrc").write_text("machine github.com password swt-dummy-netrc\n")
    (canary / ".ssh").mkdir()
    (canary / ".ssh" / "id_ed25519").write_text("swt-dummy-key\n")
    (canary / "notes.txt").write_text("readable\n")
    probe = textwrap.dedent(
        """
        import os, sys
        home = sys.argv[1]
        for name in (".netrc", ".ssh/id_ed25519", "notes.txt", ""):
            print(name or "home", os.path.exists(os.path.join(home, name)))
        """
    )
    completed, log, _ = run(probe, str(canary))
    assert completed.exit_code == 0, log
    expected = [".netrc False", ".ssh/id_ed25519 False", "notes.txt False", "home False"]
    assert log.splitlines() == expected, log


def test_a_run_finds_no_token_in_any_process_environment(run, tokens, tmp_path):
    """The builder (a process started with the tokens) and every process the run can see."""
    builder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, **tokens}
    )
    try:
        probe = textwrap.dedent(
            """
            import glob, os, sys
            seen = []
            for path in [f"/proc/{sys.argv[1]}/environ", f"/proc/{sys.argv[2]}/environ",
                         *glob.glob("/proc/*/environ")]:
                try:
                    seen.append(open(path, "rb").read().decode(errors="replace"))
                except OSError as error:
                    print("unreadable", path, error.strerror)
            seen.append(repr(dict(os.environ)))
            print("read", len(seen), "environments")
            print("\\n".join(seen))
            """
        )
        for kind in ("bwrap", "none"):
            completed, log, _ = run(probe, str(builder.pid), str(os.getpid()), sandbox_kind=kind)
            assert completed.exit_code == 0, log
            leaked = [value for value in tokens.values() if value in log]
            if kind == "bwrap":
                assert leaked == [], log
                assert f"unreadable /proc/{builder.pid}/environ" in log
            else:  # the control: without the sandbox the builder's environment is readable
                assert TOKENS["GITHUB_TOKEN"] in leaked
    finally:
        builder.kill()
        builder.wait()


def test_a_run_cannot_reach_a_listener_on_the_host(run):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(5)
    port = server.getsockname()[1]
    probe = textwrap.dedent(
        """
        import socket, sys
        try:
            socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
            print("connected")
        except OSError as error:
            print("no connection:", error.strerror)
        """
    )
    try:
        completed, log, _ = run(probe, str(port))
        assert completed.exit_code == 0, log
        assert log.startswith("no connection"), log
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()


@pytest.mark.parametrize("directory", ["/run", "/var/run"])
def test_a_run_cannot_reach_the_hosts_service_sockets(run, directory):
    """The Docker daemon's socket lives in /run: a read-only mount would not stop a connection,
    and a connection to it is the host's root. The sandbox's /run is its own, empty."""
    path = f"/run/swt-test-{os.getpid()}.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    server.settimeout(5)
    probe = textwrap.dedent(
        """
        import socket, sys
        try:
            socket.socket(socket.AF_UNIX).connect(sys.argv[1])
            print("connected")
        except OSError as error:
            print("no connection:", error.strerror)
        """
    )
    try:
        completed, log, _ = run(probe, path.replace("/run", directory, 1))
        assert completed.exit_code == 0, log
        assert log.startswith("no connection"), log
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
        os.unlink(path)


DAEMON = textwrap.dedent(
    """
    import os, subprocess, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]])
            open(sys.argv[2], "w").write("started")
            time.sleep(600)
        os._exit(0)
    os.wait()
    deadline = time.time() + 30
    while not os.path.exists(sys.argv[2]) and time.time() < deadline:
        time.sleep(0.05)
    """
)


def test_a_double_forked_setsid_daemon_ends_with_the_run(run):
    marker = f"swt-daemon-{uuid.uuid4().hex}"
    completed, log, session = run(DAEMON, marker, session_scratch := "/swt/scratch/started")
    assert completed.exit_code == 0, log
    assert session.read_scratch("started") == b"started"  # the daemon did start
    assert session_scratch.startswith(sandbox.RUN_ROOT)
    assert _gone(marker, within_s=5), _with_marker(marker)


@pytest.mark.slow
def test_without_the_sandbox_the_daemon_survives(run, tmp_path):
    """The control of the test above: a group kill alone does not reach a setsid daemon."""
    marker = f"swt-daemon-{uuid.uuid4().hex}"
    started = tmp_path / "run" / "scratch" / "started"
    started.parent.mkdir(parents=True)
    completed, log, _ = run(DAEMON, marker, str(started), sandbox_kind="none")
    assert completed.exit_code == 0, log
    survivors = _with_marker(marker)
    try:
        assert survivors
    finally:
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        for pid in _with_marker(f"{started}"):
            os.kill(pid, signal.SIGKILL)


def test_an_endless_run_is_killed_at_its_timeout(run):
    marker = f"swt-loop-{uuid.uuid4().hex}"
    started = time.monotonic()
    completed, _, _ = run("while True: pass", marker, timeout_s=2.0)
    assert completed.timed_out and completed.exit_code is None
    assert time.monotonic() - started < 15
    assert _gone(marker), _with_marker(marker)


def test_site_packages_take_a_runs_files_for_that_run_alone(run, tmp_path):
    """coverage's subprocess patch writes a .pth file there; the shared environment keeps none."""
    site_packages = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "installed.py").write_text("VALUE = 1\n")
    probe = textwrap.dedent(
        """
        import os, sys
        folder = sys.argv[1]
        existed = os.path.exists(os.path.join(folder, "subcover.pth"))
        open(os.path.join(folder, "subcover.pth"), "w").write("")
        print(existed, open(os.path.join(folder, "installed.py")).read().strip())
        try:
            open(os.path.join(folder, "installed.py"), "w").write("VALUE = 2")
        except OSError as error:
            print("refused", error.strerror)
        """
    )
    for _ in range(2):  # the second run does not see the first one's file
        completed, log, _ = run(probe, str(site_packages))
        assert completed.exit_code == 0, log
        assert log.split("\n")[:2] == ["False VALUE = 1", "refused Read-only file system"], log
    assert sorted(path.name for path in site_packages.iterdir()) == ["installed.py"]
    assert (site_packages / "installed.py").read_text() == "VALUE = 1\n"


def test_multiprocessing_works_in_the_sandbox(run):
    """Workers and their semaphores (/dev/shm) work as on the host, also as the unprivileged
    uid a root builder's sandbox runs code as: pylint's -j2 tests failed with PermissionError
    when /dev/shm was root's."""
    probe = textwrap.dedent(
        """
        import multiprocessing
        with multiprocessing.Pool(2) as pool:
            print(sum(pool.map(abs, [-1, -2, 3])), multiprocessing.Lock() is not None)
        """
    )
    completed, log, _ = run(probe)
    assert completed.exit_code == 0, log
    assert log.strip().splitlines()[-1] == "6 True"


def test_the_checkout_is_at_testbed(run):
    probe = "import os; print(os.getcwd(), open('/testbed/marker.txt').read().strip())"
    completed, log, _ = run(probe)
    assert completed.exit_code == 0, log
    assert log.strip().split(maxsplit=1) == ["/testbed", "the checkout"]


def test_the_sandbox_is_required_unless_opted_out(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable) as error:
        LocalBackend(tmp_path / "work")
    assert isinstance(error.value, SwtError)
    assert "apt-get install bubblewrap" in str(error.value)
    assert 'validation.sandbox = "none"' in str(error.value)
    with pytest.raises(sandbox.SandboxUnavailable):
        LocalEnvironments(tmp_path / "envs").python(EnvironmentSpec(python=HERE))
    assert LocalBackend(tmp_path / "work", sandbox="none").fingerprint()["sandbox"] == "none"
    source = tmp_path / "source.jsonl"
    source.write_text("not a record\n")
    argv = ["build", "--source", str(source), "--work-dir", str(tmp_path / "w")]
    argv += ["--output-dir", str(tmp_path / "o"), "--no-progress"]
    argv += ["--set", "validation.backend=local"]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "apt-get install bubblewrap" in err, err


# Environment builds: a project whose setup.py is hostile, installed into a sandboxed build.


def _project(git_repo, setup: str) -> EnvironmentSpec:
    commit = git_repo.commit(
        {
            "setup.py": setup,
            "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
            'build-backend = "setuptools.build_meta:__legacy__"\n',
        }
    )
    return EnvironmentSpec(
        python=HERE, packages=("setuptools",), project=git_repo.path, project_commit=commit
    )


@pytest.fixture(scope="module")
def env_root(tmp_path_factory):
    """One environment root for the build tests: its uv cache is warm after the first."""
    return tmp_path_factory.mktemp("envs")


def _environments(root: Path, timeout_s: float = 600.0) -> LocalEnvironments:
    return LocalEnvironments(
        root, Interpreters([sys.executable], use_uv=False), timeout_s=timeout_s
    )


@pytest.mark.slow
def test_a_build_sees_no_token(git_repo, env_root, tokens):
    setup = "import os, sys\nprint('BUILD-ENV', dict(os.environ))\nsys.exit(1)\n"
    with pytest.raises(EnvironmentBuildError) as error:
        _environments(env_root).python(_project(git_repo, setup))
    log = error.value.log_path.read_text()
    assert "BUILD-ENV" in log and "UV_CACHE_DIR" in log, log  # setup.py ran and printed
    assert not [value for value in tokens.values() if value in log], log


NETWORK_PROBE = textwrap.dedent(
    """
    import os, socket, sys
    def connect(host, port):
        try:
            socket.create_connection((host, port), timeout=5).close()
            return "connected"
        except OSError as error:
            return "no connection"
    def through_proxy(host):
        proxy = socket.create_connection(("127.0.0.1", 3128), timeout=20)
        crlf = chr(13) + chr(10)  # setuptools turns the escapes in setup.py into newlines
        request = "CONNECT %s:443 HTTP/1.1" % host + crlf + "Host: %s:443" % host + crlf * 2
        proxy.sendall(request.encode())
        return proxy.recv(64).decode().split(crlf)[0]
    print("HOST-LISTENER", connect("127.0.0.1", int(os.environ["SWT_TEST_PORT"])))
    print("DIRECT-INDEX", connect("pypi.org", 443))
    print("PROXY-INDEX", through_proxy("pypi.org"))
    print("PROXY-OTHER", through_proxy("example.com"))
    print("PROXY-SETTING", os.environ.get("HTTPS_PROXY"))
    sys.exit(1)
    """
)


@pytest.mark.slow
def test_a_build_reaches_the_package_index_and_nothing_else(git_repo, env_root):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    spec = _project(git_repo, NETWORK_PROBE)
    spec = dataclasses.replace(spec, env=(("SWT_TEST_PORT", str(port)),))
    try:
        with pytest.raises(EnvironmentBuildError) as error:
            _environments(env_root).python(spec)
    finally:
        server.close()
    log = error.value.log_path.read_text()
    assert "HOST-LISTENER no connection" in log, log  # its own network namespace
    assert "DIRECT-INDEX no connection" in log, log  # only through the proxy
    assert "PROXY-INDEX HTTP/1.1 200 Connection Established" in log, log
    assert "PROXY-OTHER HTTP/1.1 403 Forbidden" in log, log
    assert "PROXY-SETTING http://127.0.0.1:3128" in log, log
    assert "network: example.com refused" in log, log


@pytest.mark.slow
def test_a_hanging_build_is_killed_at_build_timeout_s(git_repo, env_root):
    marker = f"swt-hang-{uuid.uuid4().hex}"
    setup = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}],"
        " start_new_session=True)\n"
        "time.sleep(600)\n"
    )
    started = time.monotonic()
    with pytest.raises(EnvironmentBuildError) as error:
        _environments(env_root, timeout_s=20).python(_project(git_repo, setup))
    assert time.monotonic() - started < 60
    assert "validation.build_timeout_s = 20 s" in str(error.value)
    assert "timed out" in str(error.value)
    assert _gone(marker), _with_marker(marker)


@pytest.mark.slow
def test_a_build_writes_nothing_outside_its_environment(git_repo, env_root, canary, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    other = env_root / "another-environment"  # a finished one: it has its marker
    other.mkdir(exist_ok=True)
    (other / COMPLETE).write_text("{}")
    targets = [Path.home(), Path("/root"), canary, outside, other]
    proof = "os.getcwd()[: -len('.project')] + '/proof.txt'"  # the environment being built
    setup = WRITE.replace("sys.argv[1:]", repr([str(path) for path in targets]))
    setup = setup.replace("import sys", f"import os, sys\nsys.stdout = open({proof}, 'w')")
    setup += "\nsys.stdout.close()\nfrom setuptools import setup\nsetup(name='hostile')\n"
    python = _environments(env_root).python(_project(git_repo, setup))
    assert python.is_file()
    report = (python.parent.parent / "proof.txt").read_text()
    assert report.count("refused") == len(targets), report  # setup.py ran, and wrote nothing
    for folder in targets:
        assert not (folder / "swt-hostile-write").exists(), folder


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_the_stage_records_the_sandbox_and_no_machine_path(make_case, tmp_path):
    where = "\n\ndef test_where():\n    import os\n    print('working in', os.getcwd())\n"
    outcome = make_case({"tests/test_pkg.py": ADD_TEST + where}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.run_metadata["sandbox"] == "bwrap"
    assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    logs = [Path(run.log_path).read_text() for run in runs_of(outcome)]
    # the run's own words (pytest's header, which named its rootdir, is left out: --no-header)
    assert logs and all("working in /testbed" in log for log in logs), logs
    assert not any(str(tmp_path) in log for log in logs)


@pytest.mark.parametrize("tool", ["prlimit", "python shim"])
def test_limits_are_set_by_prlimit_or_the_python_shim(monkeypatch, tool):
    if tool == "python shim":
        monkeypatch.setattr(sandbox, "_prlimit", lambda: None)
    elif sandbox._prlimit() is None:
        pytest.skip("no prlimit(1) here: the python shim sets the limits (the other case)")
    command = sandbox.limited(
        {"RLIMIT_NPROC": 77, "RLIMIT_FSIZE": 2**20, "RLIMIT_CPU": 0},
        [sys.executable, "-c", "import resource as r; print(r.getrlimit(r.RLIMIT_NPROC), "
         "r.getrlimit(r.RLIMIT_FSIZE), r.getrlimit(r.RLIMIT_CPU))"],
    )  # fmt: skip
    assert (Path(command[0]).name == "prlimit") == (tool == "prlimit")
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    cpu = resource.getrlimit(resource.RLIMIT_CPU)  # 0: left as the builder has it
    assert output.split(") (") == ["(77, 77", f"{2**20}, {2**20}", f"{cpu[0]}, {cpu[1]})\n"]


def test_a_sandboxed_run_dies_with_the_builder(tmp_path):
    """The builder killed (kill -9): setpriv's parent-death signal ends bubblewrap, whose own
    ends the sandbox, and the PID namespace everything in it."""
    marker = f"swt-orphan-{uuid.uuid4().hex}"
    (tmp_path / "tree").mkdir()
    builder_code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from validation.environments.sandbox import require
        from validation.runs.backends.local import LocalSession
        tmp = Path({str(tmp_path)!r})
        python, marker = Path(sys.executable), {marker[::-1]!r}[::-1]  # not in this cmdline
        session = LocalSession(tmp / "tree", tmp / "run", python, bwrap=require("bwrap"))
        session.run([sys.executable, "-c", "import time; time.sleep(600)", marker],
                    tmp / "log", 600)
        """
    )
    builder = subprocess.Popen([sys.executable, "-c", builder_code], cwd=os.getcwd())
    deadline = time.monotonic() + 30
    while not _sleeping(marker):  # the command itself, not bubblewrap setting the sandbox up
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    assert _gone(marker), _with_marker(marker)


def _sleeping(marker: str) -> bool:
    """A process holding ``marker`` that runs Python (the run's command) exists."""
    for pid in _with_marker(marker):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(sys.executable.encode()):
                return True
    return False
