"""``swt-builder doctor`` run for real here, and with the tools out of reach."""

from __future__ import annotations

import shutil

import pytest

from builder.cli import COMMANDS, main
from validation.environments.docker_engine import daemon_answers
from validation.environments.interpreters import Interpreters

NAMES = ["git", "docker", "base images", "sandbox", "limits", "python", "uv", "disk"]


def _doctor(tmp_path, capsys, *settings: str) -> tuple[int, dict[str, str], list[str]]:
    overrides = [arg for setting in settings for arg in ("--set", setting)]
    code = main(["doctor", "--work-dir", str(tmp_path / "work"), *overrides])
    lines = capsys.readouterr().out.splitlines()
    checks = {}
    for line in lines[:-1]:
        status, rest = line.split(maxsplit=1)
        name = next(n for n in NAMES if rest.startswith(n + " "))
        assert status in ("ok", "missing", "warn", "skipped"), line
        assert ("fix: " in line) == (status in ("missing", "warn")), line
        checks[name] = line
    return code, checks, lines


def test_doctor_is_a_command() -> None:
    assert COMMANDS["doctor"].HELP


def test_doctor_reports_this_machine(tmp_path, capsys) -> None:
    code, checks, lines = _doctor(tmp_path, capsys)
    assert list(checks) == NAMES
    assert checks["docker"].startswith("ok" if daemon_answers() else "missing")
    if shutil.which("bwrap") is None:
        assert checks["sandbox"].startswith("missing")
        assert "fix: apt-get install bubblewrap" in checks["sandbox"]
    assert "local backend" in checks["sandbox"]
    assert "processes 4096" in checks["limits"] and "memory_mb 16384" in checks["limits"]
    assert ("per-run cgroup" in checks["limits"]) != ("memory.max per run" in checks["limits"])
    found = Interpreters().available()
    if found:
        assert sorted(checks["python"].split(" (")[0].split()[2:]) == sorted(found)
    else:
        assert checks["python"].startswith("missing")
    assert " GiB free " in checks["disk"]
    assert f"at {tmp_path}" in checks["disk"]  # the nearest existing dir of the work dir
    verdict = lines[-1]
    assert verdict.startswith("can build: ")
    assert code == (0 if verdict.startswith("can build: yes") else 1)
    local = [checks[name].startswith("ok") for name in ("git", "python", "sandbox")]
    if all(local):
        assert code == 0 and "local" in verdict
    else:
        assert "local" not in verdict


def test_doctor_without_tools_names_each_fix(tmp_path, monkeypatch, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.setenv("PYENV_ROOT", str(empty))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{empty}/docker.sock")
    code, checks, lines = _doctor(tmp_path, capsys)
    assert code == 1 and lines[-1].startswith("can build: no")
    assert checks["git"].endswith("fix: apt-get install git")
    assert checks["docker"].startswith("missing")
    assert "fix: start the Docker daemon" in checks["docker"]
    assert checks["base images"].startswith("skipped")
    assert checks["sandbox"].startswith("missing")
    assert checks["sandbox"].endswith(
        'fix: apt-get install bubblewrap, or opt out: validation.sandbox = "none"'
    )
    assert checks["python"].startswith("missing") and "fix: uv python install" in checks["python"]
    assert "validation.sandbox" in lines[-1]


def test_doctor_without_bwrap_builds_locally_only_when_opted_out(
    tmp_path, monkeypatch, capsys
) -> None:
    """The sandbox is required by the local backend unless ``validation.sandbox = "none"``."""
    python = Interpreters().available()
    if shutil.which("git") is None or not python:
        pytest.skip("needs git and a Python interpreter: what the local backend needs besides")
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "bwrap" else which(name))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    code, checks, lines = _doctor(tmp_path, capsys)
    assert checks["sandbox"].startswith("missing") and "required by the local" in checks["sandbox"]
    assert code == 1 and lines[-1].startswith("can build: no")
    code, checks, lines = _doctor(tmp_path, capsys, "validation.sandbox=none")
    assert checks["sandbox"].startswith("skipped") and 'sandbox = "none"' in checks["sandbox"]
    assert code == 0 and lines[-1] == "can build: yes, with the local backend"
