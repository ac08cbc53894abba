"""A run or build whose container the daemon loses (removed, or the daemon restarted) is tried
again in a new one, not taken as a result."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest
from docker.errors import APIError, NotFound

from builder.core.config import DockerConfig
from tests.support import docker as docker_support
from tests.support.git import GitRepo
from tests.support.metadata_project import PYPROJECT as PROJECT
from tests.support.stage_fixtures import ADD_TEST, FIXED, runs_of
from tests.support.tiers import DOCKER
from validation.environments.docker_engine import (
    KIND,
    SPEC_LABEL,
    DaemonInterrupted,
    label_filter,
)
from validation.environments.environment import EnvironmentSpec
from validation.runs.backends.docker import SESSION, DockerBackend

pytestmark = DOCKER

SLEEPER = "import time; print('started', flush=True); time.sleep(8); print('finished')"


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    docker_support.engine()
    docker_support.base_image()
    return DockerBackend(tmp_path_factory.mktemp("docker-retries"), DockerConfig())


@pytest.fixture
def session(backend, git_repo, tmp_path):
    environment = backend.prepare(EnvironmentSpec(docker_support.PYTHON, ()))
    base = git_repo.commit({"README": "r\n"})
    with backend.session(environment, git_repo.path / ".git", base, tmp_path / "run") as opened:
        yield opened


def _gone(error: APIError) -> bool:
    """Whether the daemon refused a call on a container because it ended since it was listed
    (a run of the other side, or one the toolkit removed, between the listing and the call):
    404, or 409 ("dead or marked for removal", "is not running")."""
    return isinstance(error, NotFound) or error.status_code == 409


def _logs(container) -> bytes:
    """What ``container`` printed so far; nothing when it ended since it was listed."""
    try:
        return container.logs()
    except APIError as error:
        if _gone(error):
            return b""
        raise


def _hit(container, hit: str) -> bool:
    """Kill or remove ``container`` (as ``docker kill`` / ``docker rm -f`` do); False when it
    ended since it was listed."""
    try:
        container.kill() if hit == "kill" else container.remove(force=True)
    except APIError as error:
        if _gone(error):
            return False
        raise
    return True


def _remove_running(
    backend, session, times: int, stop: threading.Event, hit: str = "remove"
) -> None:
    """Remove the session's running container (as ``docker rm -f`` does) ``times`` times; with
    ``hit="kill"``, kill it (as ``docker kill`` does) instead."""
    wanted = {**label_filter("run"), "status": "running"}
    wanted["label"] = [*wanted["label"], f"{SESSION}={session.session_id}"]
    removed: set[str] = set()
    while len(removed) < times and not stop.is_set():
        for container in backend.client.containers.list(filters=wanted):
            if container.id not in removed and b"started" in _logs(container):
                if _hit(container, hit):
                    removed.add(container.id)
        time.sleep(0.2)


def _run_hit(backend, session, tmp_path, hit: str, times: int = 1, code: str = SLEEPER):
    """``code`` run in ``session`` while its container is hit ``times`` times."""
    stop = threading.Event()
    args = (backend, session, times, stop, hit)
    hitter = threading.Thread(target=_remove_running, args=args)
    hitter.start()
    try:
        return session.run(["python", "-c", code], tmp_path / "run.log", 120)
    finally:
        stop.set()
        hitter.join()


def test_a_removed_container_is_run_again(backend, session, tmp_path, caplog):
    stop = threading.Event()
    remover = threading.Thread(target=_remove_running, args=(backend, session, 1, stop))
    remover.start()
    try:
        with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
            completed = session.run(["python", "-c", SLEEPER], tmp_path / "run.log", 120)
    finally:
        stop.set()
        remover.join()
    assert completed.exit_code == 0 and not completed.timed_out
    assert (tmp_path / "run.log").read_text().split() == ["started", "finished"]
    assert len(session.containers) == 2  # the removed one, then the one that finished
    assert completed.interruptions == 1  # what the run's record says
    warnings = [r.getMessage() for r in caplog.records]
    assert (
        len(warnings) == 1 and "test run run.log: interrupted by the Docker daemon" in warnings[0]
    )


def test_a_run_interrupted_every_time_ends_with_the_reason(backend, session, tmp_path):
    stop = threading.Event()
    remover = threading.Thread(target=_remove_running, args=(backend, session, 3, stop))
    remover.start()
    try:
        with pytest.raises(DaemonInterrupted, match="test run run.log: .* 3 times"):
            session.run(["python", "-c", SLEEPER], tmp_path / "run.log", 120)
    finally:
        stop.set()
        remover.join()
    assert len(session.containers) == 3


def test_a_container_killed_from_outside_is_run_again(backend, session, tmp_path, caplog):
    """``docker kill`` while the daemon stays up: the 137 is the kill's, not the tests'."""
    with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
        completed = _run_hit(backend, session, tmp_path, "kill")
    assert completed.exit_code == 0 and not completed.timed_out
    assert (tmp_path / "run.log").read_text().split() == ["started", "finished"]
    assert len(session.containers) == 2 and completed.interruptions == 1
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "stopped from outside (docker kill SIGKILL; exit code 137)" in warning, warning


def test_a_run_killed_from_outside_every_time_ends_with_the_reason(backend, session, tmp_path):
    with pytest.raises(DaemonInterrupted, match=r"3 times; last: .* stopped from outside"):
        _run_hit(backend, session, tmp_path, "kill", times=3)
    assert len(session.containers) == 3


KILLS_ITSELF = "import os; print('started', flush=True); os.kill(os.getpid(), 9)"
HOARDS = "h = []\nwhile True:\n    h.append(bytearray(16 * 2**20))\n"


def test_a_run_killed_by_its_own_code_or_its_memory_limit_is_a_result(backend, git_repo, tmp_path):
    """A kill no one sent through the daemon ends the work itself: the tests' result."""
    small = DockerBackend(backend.work_dir, DockerConfig(memory="128m"))  # the same image
    environment = small.prepare(EnvironmentSpec(docker_support.PYTHON, ()))
    base = git_repo.commit({"README": "r\n"})
    with small.session(environment, git_repo.path / ".git", base, tmp_path / "run") as opened:
        for code in (KILLS_ITSELF, HOARDS):
            completed = opened.run(["python", "-c", code], tmp_path / "run.log", 120)
            assert completed.exit_code == 137 and not completed.timed_out, code
            assert completed.interruptions == 0, code
    assert len(opened.containers) == 2  # one each: neither was run again


SLOW_FIX = FIXED.replace(
    "    return a + b\n",
    "    import time\n"
    "    with open('/proc/1/fd/1', 'w') as log:  # the container's log, past pytest's capture\n"
    "        log.write('swt-fixed-code-running\\n')\n"
    "    time.sleep(6)\n"
    "    return a + b\n",
)


def _restart_when_running(
    client, done: list[float], stop: threading.Event, kind: str = "run", says: bytes = b""
) -> None:
    """Restart the daemon once a container of ``kind`` says ``says`` (by default: that the
    fixed code runs, in the middle of a test)."""
    while not stop.is_set():
        for container in client.containers.list(
            filters={**label_filter(kind), "status": "running"}
        ):
            if (says or b"swt-fixed-code-running") in _logs(container):
                done.append(docker_support.restart_daemon())
                return
        time.sleep(0.2)


@pytest.mark.parametrize("backend", ["docker"])
def test_a_daemon_restarted_mid_validation_is_a_retry_not_a_test_failure(make_case, caplog):
    client = docker_support.engine()  # started here when none answers
    docker_support.base_image()
    if not docker_support.local_daemon():
        pytest.skip("the daemon is not a dockerd of this machine: it cannot be restarted here")
    stop, done = threading.Event(), []
    restarter = threading.Thread(target=_restart_when_running, args=(client, done, stop))
    restarter.start()
    try:
        with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
            outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": SLOW_FIX})
    finally:
        stop.set()
        restarter.join()
    assert done, "the fixed code never ran in a container"
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert outcome.output.PASS_TO_PASS == ("tests/test_pkg.py::test_double",)
    warnings = [r.getMessage() for r in caplog.records]
    retries = {w.split(":")[0]: w for w in warnings if "interrupted by the Docker daemon" in w}
    assert "test run golden-after-0.log" in retries, warnings  # the run the restart hit...
    assert retries.keys() <= {"test run golden-before-0.log", "test run golden-after-0.log"}
    assert all("trying again (2 of 3)" in w for w in retries.values()), warnings  # ...and the
    # other side's run, when it was still in its container (the sides run at the same time)
    assert all(run.exit_code in (0, 1) for run in runs_of(outcome))  # none is the stop's 143
    left = [w.split()[1] for w in warnings if w.startswith("container ") and "not removed" in w]
    for short_id in left:  # the daemon was away: the toolkit's labels mark it for prune
        container = client.containers.get(short_id)
        assert container.labels[KIND] == "run", container.labels
        container.remove(force=True)


def _kill_when_running(
    client, says: bytes, killed: list[str], stop: threading.Event, kind: str = "run"
) -> None:
    """``docker kill`` the container of ``kind`` that says ``says``, once."""
    while not stop.is_set() and not killed:
        for container in client.containers.list(
            filters={**label_filter(kind), "status": "running"}
        ):
            if says in _logs(container) and _hit(container, "kill"):
                killed.append(container.id)
                return
        time.sleep(0.2)


@pytest.mark.parametrize("backend", ["docker"])
def test_a_run_killed_from_outside_is_counted_in_the_instance(make_case):
    client = docker_support.engine()
    marker = f"swt-fixed-code-running-{uuid.uuid4().hex[:12]}"  # this test's container alone
    fix = SLOW_FIX.replace("swt-fixed-code-running", marker)
    stop, killed = threading.Event(), []
    killer = threading.Thread(
        target=_kill_when_running, args=(client, marker.encode(), killed, stop)
    )
    killer.start()
    try:
        outcome = make_case({"tests/test_pkg.py": ADD_TEST}, {"pkg/__init__.py": fix})
    finally:
        stop.set()
        killer.join()
    assert killed, "the fixed code never ran in a container"
    assert outcome.verdict.kept, outcome.verdict
    assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert outcome.output.run_metadata["daemon_interruptions"] == "1"
    counted = {f"{run.side}-{run.daemon_interruptions}" for run in runs_of(outcome)}
    assert counted == {"before-0", "after-1"}  # the run the kill hit, in runs.jsonl too


def test_a_daemon_restarted_mid_build_builds_the_image_again(tmp_path, caplog):
    client = docker_support.engine()
    docker_support.base_image()
    if not docker_support.local_daemon():
        pytest.skip("the daemon is not a dockerd of this machine: it cannot be restarted here")
    marker = f"swt-build-running-{tmp_path.name}"
    spec = _slow_build_spec(GitRepo(tmp_path / "project"), marker, 6)
    stop, done = threading.Event(), []
    args = (client, done, stop, "build", marker.encode())
    restarter = threading.Thread(target=_restart_when_running, args=args)
    restarter.start()
    try:
        with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
            environment = DockerBackend(tmp_path / "work", DockerConfig()).prepare(spec)
    finally:
        stop.set()
        restarter.join()
    assert done, "the build never started"
    image = client.images.get(environment.tag)
    assert image.labels[KIND] == "environment" and image.id == environment.image_id
    retries = [r.getMessage() for r in caplog.records if "interrupted" in r.getMessage()]
    assert len(retries) == 1 and retries[0].startswith("environment image "), retries
    assert "trying again (2 of 3)" in retries[0]
    for container in client.containers.list(all=True, filters=label_filter("build")):
        if container.labels.get(SPEC_LABEL) == marker:  # the stopped build the daemon left
            container.remove(force=True)
    client.images.remove(image.id, force=True)


def test_a_build_killed_from_outside_builds_the_image_again(tmp_path, caplog):
    client = docker_support.engine()
    docker_support.base_image()
    marker = f"swt-build-running-{uuid.uuid4().hex[:12]}"
    spec = _slow_build_spec(GitRepo(tmp_path / "project"), marker, 4)
    stop, killed = threading.Event(), []
    args = (client, marker.encode(), killed, stop, "build")
    killer = threading.Thread(target=_kill_when_running, args=args)
    killer.start()
    try:
        with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
            environment = DockerBackend(tmp_path / "work", DockerConfig()).prepare(spec)
    finally:
        stop.set()
        killer.join()
    assert killed, "the build never started"
    image = client.images.get(environment.tag)
    assert image.labels[KIND] == "environment" and image.id == environment.image_id
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith("environment image ") and "trying again (2 of 3)" in warning
    assert "stopped from outside (docker kill SIGKILL" in warning, warning
    client.images.remove(image.id, force=True)


def _slow_build_spec(repo: GitRepo, marker: str, seconds: int) -> EnvironmentSpec:
    """A new image (its build really runs) whose build prints ``marker``, then sleeps."""
    return EnvironmentSpec(
        docker_support.PYTHON,
        (),
        project=repo.path / ".git",
        project_commit=repo.commit(
            {"pyproject.toml": PROJECT.format(version="0.1"), "pkg/__init__.py": ""}
        ),
        pre_install=(f"echo {marker}; sleep {seconds}",),
        label=marker,
    )
