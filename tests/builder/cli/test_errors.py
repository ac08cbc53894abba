"""User errors end in one line naming the problem and an exit code, never in a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_USAGE, main
from tests.support.instances import make_instance, make_release
from tests.support.net import closed_port_url

ROOT = Path(__file__).resolve().parents[3]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_publish_with_the_hub_unreachable(tmp_path, monkeypatch, capsys) -> None:
    config, _ = make_release(tmp_path / "out", [make_instance(1)])
    endpoint = closed_port_url()
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_TOKEN", "hf_unreached_0001")
    argv = ["publish", "--dataset-dir", str(config.dataset_dir), "--repo-id", "a/b"]
    assert main(argv) == EXIT_USAGE
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("swt-builder publish: cannot reach the Hub at " + endpoint)
    assert main([*argv, "--dry-run"]) == 0  # a dry run shows the release alone
    out = capsys.readouterr().out
    assert f"the Hub not reached (cannot reach the Hub at {endpoint}" in out


def test_publish_of_a_dir_without_a_release(tmp_path, capsys) -> None:
    argv = ["publish", "--dataset-dir", str(tmp_path), "--repo-id", "a/b", "--dry-run"]
    assert main(argv) == EXIT_USAGE
    assert "is not a release dir" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("name", ["missing.jsonl", "missing.parquet", "./missing-dir"])
def test_a_missing_source_file(tmp_path, monkeypatch, capsys, name) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["build", "--source", name, "--work-dir", "w", "--output-dir", "o", "--no-progress"]
    assert main(argv) == EXIT_USAGE
    line = _one_line(capsys.readouterr().err)
    assert line == f"swt-builder build: source.path: no such file or directory: {name}"
    assert not (tmp_path / "o").exists()


def test_the_docker_backend_without_a_daemon(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    source = tmp_path / "source.jsonl"
    source.write_text("not a record\n")
    argv = ["build", "--source", str(source), "--work-dir", str(tmp_path / "w")]
    argv += ["--output-dir", str(tmp_path / "o"), "--no-progress"]
    argv += ["--set", "validation.backend=docker"]
    assert main(argv) == EXIT_USAGE
    line = _one_line(capsys.readouterr().err)
    assert "validation.backend = 'docker': no Docker daemon answers" in line
    assert "validation.backend = 'local'" in line
    assert not (tmp_path / "o").exists()


def test_keyboard_interrupt_is_one_line_and_exit_130(monkeypatch, capsys) -> None:
    from builder.cli import COMMANDS

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(COMMANDS["config"], "run", interrupted)
    assert main(["config"]) == EXIT_INTERRUPTED == 130
    assert _one_line(capsys.readouterr().err) == "swt-builder config: interrupted"


def _sigint_default() -> None:
    """A terminal's Ctrl-C reaches the command: a suite started in the background (``nohup``,
    ``&`` without job control) hands its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_in_a_real_process(tmp_path) -> None:
    script = (
        "import sys, time\n"
        "from builder.cli import COMMANDS, main\n"
        "def slow(args):\n"
        "    print('running', flush=True)\n"
        "    time.sleep(60)\n"
        "COMMANDS['config'].run = slow\n"
        "sys.exit(main(['config']))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=_sigint_default,
    )  # fmt: skip
    assert process.stdout.readline() == "running\n"
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert _one_line(err) == "swt-builder config: interrupted"


def test_a_closed_stdout_ends_quietly(tmp_path) -> None:
    """``swt-builder config | head -1``: the reader is gone before the output is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "builder.cli", "config"], cwd=tmp_path,
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    finally:
        os.close(write)
    assert completed.stderr == ""
    assert completed.returncode == EXIT_BROKEN_PIPE


def test_config_piped_into_head_prints_its_first_line(tmp_path) -> None:
    command = f"'{sys.executable}' -m builder.cli config | head -1"
    completed = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert completed.stdout == "{\n" and completed.stderr == ""


def test_github_unavailable_during_a_build(tmp_path, monkeypatch, capsys) -> None:
    import recipes.github.collect
    from recipes.github.client import GitHubUnavailable

    def unavailable(*args, **kwargs):
        raise GitHubUnavailable("pulls: gave up after 8 attempts: ConnectionError")

    monkeypatch.setattr(recipes.github.collect, "collect_for_config", unavailable)
    argv = ["build", "--work-dir", str(tmp_path / "w"), "--output-dir", str(tmp_path / "o")]
    argv += ["--set", "source.kind=github", "--set", "source.base_url=http://127.0.0.1:9"]
    argv += ["--no-progress"]
    assert main(argv) == EXIT_USAGE
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("swt-builder build: GitHub at http://127.0.0.1:9 unavailable: pulls:")


def _under_a_file(tmp_path: Path) -> Path:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a folder should be\n")
    return blocker


def test_evaluate_checks_its_output_and_work_dirs_before_any_work(tmp_path, capsys) -> None:
    blocker = _under_a_file(tmp_path)
    config, _ = make_release(tmp_path / "out", [make_instance(1)])
    argv = ["evaluate", "--dataset", str(config.dataset_dir), "--predictions", "gold"]
    argv += ["--run-id", "r1", "--output-dir", str(blocker / "dist"), "--no-progress"]
    argv += ["--work-dir", str(blocker / "work")]
    assert main(argv) == EXIT_USAGE
    lines = capsys.readouterr().err.strip().splitlines()
    reports = blocker / "dist" / "evaluations" / "r1"
    assert lines == [
        f"swt-builder evaluate: output dir {reports} is under {blocker}, which is not a directory",
        f"work dir {blocker / 'work'} is under {blocker}, which is not a directory",
    ]


def test_collect_checks_its_output_folder_before_any_work(tmp_path, capsys) -> None:
    blocker = _under_a_file(tmp_path)
    output = blocker / "candidates.jsonl"
    argv = ["collect", "--work-dir", str(tmp_path / "work"), "--output", str(output)]
    argv += ["--base-url", closed_port_url(), "--no-progress"]  # never asked: exit 2, not 1
    assert main(argv) == EXIT_USAGE
    line = _one_line(capsys.readouterr().err)
    assert line == (f"swt-builder collect: output dir {blocker} is not a directory")
    assert not (tmp_path / "work").exists()
