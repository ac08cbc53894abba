"""A task repo as a build's source: the tasks of one split as candidates, bad ones dropped."""

from __future__ import annotations

import pytest

from builder.core.records import DropReason
from builder.task_repo.release import Harness, dataset_names, write_task_repo
from builder.task_repo.source import task_repo_candidates
from recipes.swe_bench import SourceError
from tests.support.instances import make_instance


def test_tasks_of_the_split_become_candidates_and_a_broken_one_is_dropped(tmp_path):
    instances = [
        make_instance(1, issue_numbers=(4,), issue_created_at=("2024-01-01T00:00:00Z",)),
        make_instance(2),
        make_instance(3),
    ]
    ids = [i.instance_id for i in instances]
    harness = {i: Harness("eval\n", "FROM scratch\n", "parse_log_pytest") for i in ids}
    write_task_repo(
        tmp_path, "b", "0.1.0", instances, dataset_names("b", [("full", "test", ids)]), harness
    )
    deprecated = tmp_path / "tasks" / "owner__repo-2" / "task.yaml"
    deprecated.write_text(deprecated.read_text().replace("split: test", "split: deprecated"))
    (tmp_path / "tasks" / "owner__repo-3" / "gold.patch").unlink()

    results = list(task_repo_candidates(tmp_path, "test"))

    kept = [outcome.output for _, outcome in results if outcome.verdict.kept]
    assert [c.instance_id for c in kept] == ["owner__repo-1"]
    first = kept[0]
    assert first.source == "task-repo"
    assert first.reference_fail_to_pass == instances[0].FAIL_TO_PASS
    assert (first.issue_numbers, first.issue_created_at) == ((4,), ("2024-01-01T00:00:00Z",))
    assert first.patch == instances[0].patch and first.pull_number == 1
    [(_, dropped)] = [r for r in results if not r[1].verdict.kept]
    assert dropped.verdict.reason is DropReason.MALFORMED_RECORD
    assert "gold.patch" in dropped.verdict.evidence["error"]


def test_a_directory_that_is_no_task_repo_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="sweb.yaml"):
        list(task_repo_candidates(tmp_path))
