"""Two processes on one work dir: the second build or collect exits 2 naming the holder."""

import os
import subprocess
import sys

from builder.cli import main
from builder.core.worklock import work_dir_lock
from tests.support.records import SHA, swe_record, write_records
from tests.support.source import ROOT

HOLD = """
import sys
from builder.core.worklock import work_dir_lock
with work_dir_lock(sys.argv[1], "build"):
    print("held", flush=True)
    sys.stdin.read()
"""


def _argv(tmp_path, work):
    source = write_records(tmp_path / "source.jsonl", [swe_record("o/r", 1, SHA, "p", "t")])
    argv = ["build", "--source", str(source), "--work-dir", str(work), "--no-progress"]
    return [*argv, "--output-dir", str(tmp_path / "dist"), "--set", "validation.backend=local"]


def test_a_build_on_a_work_dir_another_process_holds_exits_2_naming_it(tmp_path, capsys):
    work = tmp_path / "work"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(work)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        assert main(_argv(tmp_path, work)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"in use by swt-builder build (pid {holder.pid}, started " in err
        assert not (work / "rejected").exists()  # it did nothing
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
    assert main(_argv(tmp_path, work)) == 1  # released: this build runs (and keeps nothing)


def test_collect_is_refused_while_a_build_holds_the_work_dir(tmp_path):
    work = tmp_path / "work"
    recipe = tmp_path / "recipe.toml"
    recipe.write_text('repo = "o/r"\n')
    command = [sys.executable, "-m", "builder.cli", "collect", "--work-dir", str(work)]
    command += ["--recipe", str(recipe), "--output", str(tmp_path / "c.jsonl"), "--no-progress"]
    with work_dir_lock(work, "build"):
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2, completed.stderr
    [line] = completed.stderr.splitlines()
    assert line.startswith(f"swt-builder collect: work dir {work} is in use by swt-builder build ")
    assert f"(pid {os.getpid()}, started " in line
    assert not (work / "store").exists()  # it did nothing
