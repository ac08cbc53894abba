"""A task directory's build context: the files beside its Dockerfile (its ``build.sh``) are
written, read back byte for byte, replaced whole, and never stand in for a file of the format
(swebench's check of a repo with one: ``test_release.py``)."""

from __future__ import annotations

import pytest
from swebench.task.repo import task_paths

from builder.task_repo.format import Task, TaskRepoError, read_task, write_config, write_task

SCRIPT = b"#!/bin/sh\nset -eu\nprintf '%s\\n' \"it's\" \\\n  $HOME\r\n\xe2\x9c\x93\n"


def _task(context: dict[str, bytes]) -> Task:
    meta = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "split": "test",
            "datasets": ["o/bench"], "image": "swebench/sweb.eval.x86_64.o_1776_r-1:latest",
            "log_parser": "parse_log_pytest", "eval_type": "pass_and_fail"}  # fmt: skip
    texts = {"problem_statement": "p\n", "patch": "", "test_patch": "", "hints_text": "",
             "eval_script": "#!/bin/bash\n"}  # fmt: skip
    tests = {"FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": []}
    return Task("o__r-1", meta, tests, texts, "FROM scratch\nCOPY build.sh /\n", context)


def test_the_build_context_is_written_and_read_back_exactly(tmp_path):
    folder = write_task(tmp_path, _task({"build.sh": SCRIPT}))
    assert (folder / "build.sh").read_bytes() == SCRIPT
    assert read_task(folder).context == {"build.sh": SCRIPT}
    write_config(tmp_path, {"datasets": ["o/bench"], "splits": ["test"]})
    assert task_paths(tmp_path)["o__r-1"] == folder  # the harness's build context


def test_a_context_file_no_longer_exported_is_removed(tmp_path):
    write_task(tmp_path, _task({"build.sh": SCRIPT, "old.sh": b"x\n"}))
    folder = write_task(tmp_path, _task({"build.sh": SCRIPT}))
    assert read_task(folder).context == {"build.sh": SCRIPT}


@pytest.mark.parametrize("name", ["eval.sh", "Dockerfile", "task.yaml", "sub/build.sh", ".git"])
def test_a_context_file_cannot_stand_in_for_a_file_of_the_format(tmp_path, name):
    with pytest.raises(TaskRepoError, match="cannot be a context file"):
        write_task(tmp_path, _task({name: b"x"}))
