"""A hostile task repo as a build's source: links, special files and links out of the repo are
named drops (``unsafe_path``) or a refused source, and nothing of the host is read into a
candidate. Each case read the host's file (or hung on a FIFO) before the source read without
following links."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from builder.core.records import DropReason
from builder.task_repo.release import Harness, dataset_names, write_task_repo
from builder.task_repo.source import task_repo_candidates
from recipes.swe_bench import SourceError
from tests.support.instances import make_instance

SECRET = "hf_SECRET_of_the_builders_host_0123456789"


@pytest.fixture
def repo(tmp_path):
    """A task repo of two tasks (``owner__repo-1``, ``owner__repo-2``) and a host file holding
    a secret, outside it."""
    instances = [make_instance(1), make_instance(2)]
    ids = [i.instance_id for i in instances]
    harness = {i: Harness("eval\n", "FROM scratch\n", "parse_log_pytest") for i in ids}
    root = tmp_path / "repo"
    write_task_repo(root, "b", "0.1.0", instances, dataset_names("b", [("full", "test", ids)]),
                    harness)  # fmt: skip
    secret = tmp_path / "host" / "token"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return root, secret


def _no_secret(results) -> None:
    for raw, outcome in results:
        text = json.dumps([raw, outcome.verdict.evidence], default=str)
        text += outcome.output.model_dump_json() if outcome.verdict.kept else ""
        assert SECRET not in text


def _unsafe(root, origin: str, names: str) -> None:
    results = list(task_repo_candidates(root, "test"))
    _no_secret(results)
    dropped = {raw.get("origin"): o for raw, o in results if not o.verdict.kept}
    assert dropped[origin].verdict.reason is DropReason.UNSAFE_PATH
    assert names in dropped[origin].verdict.evidence["error"]
    kept = [o.output.instance_id for _, o in results if o.verdict.kept]
    assert kept == [i for i in ("owner__repo-1", "owner__repo-2") if f"tasks/{i}" != origin]


@pytest.mark.parametrize("name", ["problem_statement.md", "test.patch", "gold.patch", "hints.md",
                                  "task.yaml", "tests.json", "Dockerfile"])  # fmt: skip
def test_a_task_file_linked_to_a_host_file_is_unsafe(repo, name):
    root, secret = repo
    target = root / "tasks" / "owner__repo-1" / name
    target.unlink(missing_ok=True)
    target.symlink_to(secret)
    _unsafe(root, "tasks/owner__repo-1", f"{name}: a symbolic link")


def test_a_test_patch_linked_to_etc_passwd_is_unsafe(repo):
    root, _ = repo
    target = root / "tasks" / "owner__repo-2" / "test.patch"
    target.unlink()
    target.symlink_to("/etc/passwd")
    _unsafe(root, "tasks/owner__repo-2", "test.patch: a symbolic link")


def test_a_task_directory_linked_out_of_the_repo_is_unsafe(repo, tmp_path):
    root, _ = repo
    outside = tmp_path / "elsewhere"
    shutil.copytree(root / "tasks" / "owner__repo-2", outside)
    statement = outside / "problem_statement.md"
    statement.write_text(SECRET)
    shutil.rmtree(root / "tasks" / "owner__repo-2")
    (root / "tasks" / "owner__repo-2").symlink_to(outside)
    _unsafe(root, "tasks/owner__repo-2", "tasks/owner__repo-2: a symbolic link")


def test_a_fifo_is_unsafe_and_reading_it_does_not_hang(repo):
    root, _ = repo
    os.mkfifo(root / "tasks" / "owner__repo-1" / "hints.md")
    _unsafe(root, "tasks/owner__repo-1", "hints.md: a FIFO")


def test_a_context_file_linked_out_is_unsafe(repo):
    root, secret = repo
    (root / "tasks" / "owner__repo-1" / "build.sh").symlink_to(secret)
    _unsafe(root, "tasks/owner__repo-1", "build.sh: a symbolic link")


@pytest.mark.parametrize("name", ["sweb.yaml", "tasks"])
def test_a_linked_config_or_tasks_folder_refuses_the_source(repo, tmp_path, name):
    root, _ = repo
    moved = tmp_path / f"moved-{name}"
    (root / name).rename(moved)
    (root / name).symlink_to(moved)
    with pytest.raises(SourceError, match=f"{name}: a symbolic link"):
        list(task_repo_candidates(root, "test"))
