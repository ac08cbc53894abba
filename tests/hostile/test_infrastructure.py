"""Faults of the machine in a build — a checkout that fails for one instance of several, a
sandbox that cannot start, an output dir that cannot be written: none is stored as a verdict on
an instance, none ends the build in a traceback, and the next build, the machine mended, runs
exactly the instances they hit."""

import json
import os
import shutil
import signal
import stat
import threading
import time

from builder.core.repos import RepoCache
from tests.support.hostile import Project, build_local, hostile_tests

REPO = "hostile/infra"


def _rows(path):
    return [json.loads(line) for line in path.open()]


def _validated(tmp_path):
    return list((tmp_path / "work" / "store" / "validate").glob("*/*.json"))


def _third_lacks(tmp_path, path: str, lacking: str):
    """(project, two good candidates, a third whose base commit adds ``path``, the mirror's
    loose object of ``lacking`` at that commit)."""
    project = Project(tmp_path / "repo", repo=REPO)
    good = [project.candidate(case, project.diff(hostile_tests(""))) for case in ("a", "b")]
    other = project.git.commit({path: "only in this commit\n"})
    hit = project.candidate("c", project.diff(hostile_tests("")))
    hit = hit.model_copy(update={"base_commit": other})
    sha = project.git.git("rev-parse", f"{other}:{lacking}").strip()
    mirror = RepoCache(tmp_path / "work" / "repos", {REPO: str(project.git.path)}).mirror(
        REPO, other
    )
    return project, good, hit, mirror / "objects" / sha[:2] / sha[2:]


def test_a_blob_missing_from_one_mirror_commit_is_that_instance_s_named_drop(
    tmp_path, capsys, env_dir
):
    """The history lists a file without its content: that instance is dropped
    ``content_missing`` before any build, naming the path (the others are built), and is
    validated again by the next build, which finds the mirror mended."""
    project, good, hit, stored = _third_lacks(tmp_path, "data/blob.txt", "data/blob.txt")
    other = hit.base_commit
    saved = tmp_path / "blob-object"
    shutil.copyfile(stored, saved)
    stored.unlink()  # the mirror lacks one object of the third instance's base commit

    code, out, err = build_local(tmp_path, capsys, project, [*good, hit], env_dir)
    assert code == 0, err
    assert "dataset: 2 instances written" in out
    assert "1 dropped: content_missing" in out and "infra_error" not in out
    rejected = _rows(tmp_path / "dist" / "swt-dataset" / "rejected" / "validate.jsonl")
    assert [(r["record"]["instance_id"], r["reason"]) for r in rejected] == [
        ("hostile-c", "content_missing")
    ]
    assert json.loads(rejected[0]["evidence"]["missing"]) == {other: ["data/blob.txt"]}

    stored.parent.mkdir(exist_ok=True)
    shutil.copyfile(saved, stored)  # the mirror mended
    code, out, err = build_local(tmp_path, capsys, project, [*good, hit], env_dir)
    assert code == 0, err
    assert "validate: 2 of 3 reused from the store" in out
    assert "dataset: 3 instances written" in out and "content_missing" not in out


def test_a_missing_tree_in_one_mirror_checkout_is_that_instance_infra_error(
    tmp_path, capsys, env_dir
):
    """An object other than a file's content (a tree) missing from the mirror is a fault of the
    mirror, which cannot be read at that commit: not stored, tried again."""
    project, good, hit, stored = _third_lacks(tmp_path, "data/deep/blob.txt", "data/deep")
    stored.unlink()

    code, out, err = build_local(tmp_path, capsys, project, [*good, hit], env_dir)
    assert code == 0, err
    assert "dataset: 2 instances written" in out
    assert "1 infra_error: repository (not stored: tried again)" in out  # it reads no tree
    rejected = _rows(tmp_path / "dist" / "swt-dataset" / "rejected" / "validate.jsonl")
    assert [(r["record"]["instance_id"], r["reason"]) for r in rejected] == [
        ("hostile-c", "infra_error")
    ]
    assert len(_validated(tmp_path)) == 2


def test_a_sandbox_that_cannot_start_is_no_stored_drop_and_stops_the_build(
    tmp_path, capsys, env_dir, monkeypatch
):
    project = Project(tmp_path / "repo", repo=REPO)
    candidates = [project.candidate(case, project.diff(hostile_tests(""))) for case in "ab"]
    real = shutil.which("bwrap")
    assert real is not None
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    wrapper = broken / "bwrap"
    wrapper.write_text(  # passes the backend's probe, refuses every sandbox it is asked for
        "#!/bin/sh\n"
        f'case " $* " in *" --unshare-all "*) exec {real} "$@";; esac\n'
        'echo "bwrap: Can\'t create file at $HOME/.ssh: Is a directory" >&2\n'
        "exit 1\n"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    original = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{broken}:{original}")

    code, out, err = build_local(tmp_path, capsys, project, candidates, env_dir)
    assert code == 2
    (line,) = err.splitlines()
    assert "validate: stopped: the first 2 records computed all hit the same fault" in line
    assert "(sandbox)" in line and "Can't create file at" in line
    assert _validated(tmp_path) == []
    assert not (tmp_path / "dist").exists()

    monkeypatch.setenv("PATH", original)  # the sandbox mended: both are judged, none reused
    code, out, err = build_local(tmp_path, capsys, project, candidates, env_dir)
    assert code == 0, err
    assert "reused from the store" not in out and "dataset: 2 instances written" in out


def test_an_unwritable_output_dir_is_one_line_before_any_work(tmp_path, capsys, env_dir):
    project = Project(tmp_path / "repo", repo=REPO)
    candidate = project.candidate("a", project.diff(hostile_tests("")))
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the output dir's parent should be\n")
    code, out, err = build_local(tmp_path, capsys, project, [candidate], env_dir, blocker / "dist")
    assert code == 2
    (line,) = err.splitlines()
    assert line == (
        f"swt-builder build: output dir {blocker / 'dist' / 'swt-dataset'} is under {blocker}, "
        "which is not a directory"
    )
    assert out == "" and not (tmp_path / "work" / "store").exists()


KILLED_TESTS = """
import pathlib, time


def test_waits_to_be_killed():
    pathlib.Path.home().joinpath("swt-kill-me").write_text("up")
    time.sleep(90)
"""


def _kill_the_sandbox_of_the_run_that_waits(work, killed, done):
    """SIGKILL, from outside, the launcher of the run whose HOME holds ``swt-kill-me``: the
    topmost process naming its run dir (as an operator's ``kill -9`` or a host's tool would).
    Watches until ``done`` is set (the build may first make its environment)."""
    while not done.is_set() and not killed:
        try:  # run dirs come and go while this looks
            markers = list(work.glob("runs/*/*/home/swt-kill-me"))
        except FileNotFoundError:
            markers = []
        for marker in markers:
            run_dir = str(marker.parent.parent)
            naming = {pid: parent for pid, parent, cmdline in _processes() if run_dir in cmdline}
            for pid, parent in naming.items():
                if parent not in naming:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
        time.sleep(0.05)


def _processes():
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = open(f"/proc/{entry}/stat").read()
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read().decode(errors="replace")
            except OSError:
                continue
            yield int(entry), int(stat_line.rsplit(")", 1)[1].split()[1]), cmdline


def test_a_run_killed_from_outside_is_infra_error_and_tried_again(tmp_path, capsys, env_dir):
    project = Project(tmp_path / "repo", repo=REPO)
    good = [project.candidate(case, project.diff(hostile_tests(""))) for case in ("a", "b")]
    hit = project.candidate("c", project.diff(hostile_tests(KILLED_TESTS)))
    killed: list[int] = []
    done = threading.Event()
    killer = threading.Thread(
        target=_kill_the_sandbox_of_the_run_that_waits, args=(tmp_path / "work", killed, done)
    )
    killer.start()
    try:
        code, out, err = build_local(tmp_path, capsys, project, [*good, hit], env_dir)
    finally:
        done.set()
        killer.join()
    assert killed and code == 0, err
    assert "1 infra_error: killed (not stored: tried again)" in out
    rejected = _rows(tmp_path / "dist" / "swt-dataset" / "rejected" / "validate.jsonl")
    assert [(r["record"]["instance_id"], r["reason"]) for r in rejected] == [
        ("hostile-c", "infra_error")
    ]
    evidence = rejected[0]["evidence"]
    assert evidence["fault"] == "killed"
    assert evidence["error"] == "the run's sandbox was killed from outside by SIGKILL"
    assert len(_validated(tmp_path)) == 2  # the two judged; not the one killed
