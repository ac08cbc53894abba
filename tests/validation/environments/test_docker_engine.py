"""The retry policy for daemon interruptions: what counts as one, how often, what is logged."""

import logging
import types

import pytest
import requests
from docker.errors import APIError, ImageNotFound, NotFound

from validation.environments.docker_engine import (
    DaemonInterrupted,
    interrupted,
    run_to_end,
    with_retries,
)


class _Flaky:
    """An operation failing with ``errors`` in turn, then returning ``"done"``."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def _api_error(status: int) -> APIError:
    response = requests.Response()
    response.status_code = status
    return APIError(f"status {status}", response=response)


def test_what_counts_as_an_interruption():
    assert interrupted(requests.exceptions.ConnectionError("reset by peer"))
    assert interrupted(NotFound("no such container"))
    assert interrupted(_api_error(500)) and interrupted(DaemonInterrupted("lost"))
    assert not interrupted(ImageNotFound("no such image"))
    assert not interrupted(_api_error(400)) and not interrupted(_api_error(409))
    assert not interrupted(ValueError("the work's own error"))


def test_an_interrupted_operation_is_tried_again_with_a_log_line(caplog):
    waits = []
    operation = _Flaky(requests.exceptions.ConnectionError("gone"), NotFound("removed"))
    with caplog.at_level(logging.WARNING, logger="validation.environments.docker_engine"):
        result = with_retries(operation, "test run x.log", wait=lambda: waits.append(1))
    assert (result, operation.calls, len(waits)) == ("done", 3, 2)
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "test run x.log: interrupted by the Docker daemon"
    ] * 2
    assert caplog.records[-1].getMessage().endswith("trying again (3 of 3)")


def test_the_tries_are_bounded_and_the_last_one_says_why():
    operation = _Flaky(*[NotFound(f"removed {n}") for n in range(5)])
    with pytest.raises(DaemonInterrupted, match="interrupted it 3 times; last: removed 2"):
        with_retries(operation, "test run y.log", wait=lambda: None)
    assert operation.calls == 3


def test_the_work_s_own_errors_are_not_retried():
    operation = _Flaky(_api_error(400))
    with pytest.raises(APIError):
        with_retries(operation, "build", wait=lambda: None)
    assert operation.calls == 1


class _Events:
    """The daemon's events API as run_to_end reads it: ``events`` of the container, then its
    end."""

    def __init__(self, happened: list[dict]) -> None:
        self.happened = happened

    def events(self, **_: object) -> list[dict]:
        return [*self.happened, {"Action": "die"}]


class _Container:
    """What run_to_end asks of a container, its wait failing as a lost connection does (or
    answering with ``status``); ``events``: what the daemon says happened to it."""

    id = "c0ffee"

    def __init__(
        self, error: Exception | None, status: dict | None = None, events: list[dict] = ()
    ) -> None:
        self.error, self.status = error, status
        self.killed = False
        self.attrs = {"Created": "2026-01-02T03:04:05.678Z", "State": {"OOMKilled": False}}
        self.client = types.SimpleNamespace(api=_Events(list(events)))

    def reload(self) -> None:
        pass

    def start(self) -> None:
        pass

    def wait(self, timeout: float) -> dict:
        if self.error is not None:
            raise self.error
        return self.status or {}

    def kill(self) -> None:
        self.killed = True


def test_a_connection_lost_before_the_timeout_is_no_timeout(tmp_path):
    lost = _Container(requests.exceptions.ConnectionError("connection reset"))
    with pytest.raises(DaemonInterrupted, match="connection to the Docker daemon lost"):
        run_to_end(lost, tmp_path / "run.log", timeout_s=60)
    assert not lost.killed


def test_an_end_answered_by_a_daemon_no_longer_listening_is_no_result(tmp_path, monkeypatch):
    """A daemon shutting down closes its socket first, then answers waits with the exit code
    of the stop it gave the container."""
    monkeypatch.setattr("validation.environments.docker_engine.daemon_answers", lambda: False)
    stopped = _Container(None, {"StatusCode": 143})
    with pytest.raises(DaemonInterrupted, match=r"ended \(exit code 143\) as the Docker daemon"):
        run_to_end(stopped, tmp_path / "run.log", timeout_s=60)
    assert not stopped.killed and not (tmp_path / "run.log").exists()
    failed = _Container(None, {"StatusCode": 1})  # the work's own end: the daemon is not asked
    monkeypatch.setattr(failed, "logs", lambda **kw: b"1 failed\n", raising=False)
    assert run_to_end(failed, tmp_path / "run.log", timeout_s=60).exit_code == 1


def test_a_conflict_is_an_interruption_only_when_the_container_is_going():
    going = APIError("409", response=_api_error(409).response, explanation="can not get logs "
                     "from container which is dead or marked for removal")  # fmt: skip
    busy = APIError("409", response=_api_error(409).response, explanation="is not running")
    assert interrupted(going) and not interrupted(busy)


def test_a_signal_sent_through_the_daemon_is_no_result(tmp_path, monkeypatch):
    """``docker kill``/``docker stop`` from outside while the daemon stays up: the exit code is
    the signal's, not the work's; a kill by the container's own processes (no daemon event) is
    the work's."""
    monkeypatch.setattr("validation.environments.docker_engine.daemon_answers", lambda: True)
    kill = {"Action": "kill", "Actor": {"Attributes": {"signal": "9"}}}
    stopped = _Container(None, {"StatusCode": 137}, [kill])
    with pytest.raises(DaemonInterrupted, match=r"stopped from outside \(docker kill SIGKILL;"):
        run_to_end(stopped, tmp_path / "run.log", timeout_s=60)
    own = _Container(None, {"StatusCode": 137})
    monkeypatch.setattr(own, "logs", lambda **kw: b"Killed\n", raising=False)
    assert run_to_end(own, tmp_path / "run.log", timeout_s=60).exit_code == 137
