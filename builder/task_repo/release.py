"""A release as a SWE-bench task repo and back: instances, splits and our extra columns."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from builder.compare.ids import cut
from builder.core.records import Instance
from builder.task_repo.format import (
    FULL_TESTS,
    TEST_KEYS,
    Task,
    TaskRepoError,
    image_name,
    read_config,
    read_tasks,
    write_config,
    write_task,
)
from validation.runs.runners import make_runner

OURS = "swt_builder"
"""The key of ``sweb.yaml`` holding what only this toolkit reads (the harness ignores it)."""
HARNESS_KEYS = ("split", "datasets", "image", "log_parser", "eval_type")
"""Keys of ``task.yaml`` that route and run a task: the harness's, none of them a column."""
EXTRA_COLUMNS = (
    "pull_number", "issue_numbers", "issue_created_at", "merged_at", "golden_coverage", "stats",
    "run_metadata",
)  # fmt: skip
"""Our columns after SWE-bench's, kept in ``task.yaml`` with the value of the release's row."""
SPLIT = "test"
"""Every exported task's split: each of our (config, split) pairs is a dataset of its own."""
EVAL_TYPE = "pass_and_fail"
"""The harness's grading: FAIL_TO_PASS must pass and PASS_TO_PASS keep passing."""


@dataclasses.dataclass(frozen=True)
class Harness:
    """What the harness needs of one instance besides its record: how it runs."""

    eval_script: str
    dockerfile: str
    log_parser: str
    context: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    """Files beside the Dockerfile that it reads (its build script): name → bytes."""
    unread: tuple[str, ...] = ()
    """Test ids (the release's) the harness's parser cannot read from a run's log, left out of
    ``tests.json`` (sympy's runner prints each file's last test on the file's verdict line,
    which ``parse_log_sympy`` does not read: SWE-bench's records leave them out too)."""


@dataclasses.dataclass(frozen=True)
class ReleaseSplit:
    """One non-empty split of a release and the dataset name it has in the task repo."""

    config: str
    split: str
    dataset: str
    instance_ids: tuple[str, ...]


def dataset_names(
    base: str, splits: Sequence[tuple[str, str, Sequence[str]]]
) -> list[ReleaseSplit]:
    """The non-empty ``(config, split, ids)`` of a release as datasets: ``full`` is ``base``,
    ``lite`` is ``base-lite``, any other split ``base-<split>`` (``base-month_2024_05``)."""
    named = []
    for config, split, ids in splits:
        if not ids:
            continue
        suffix = "" if config == "full" else "-lite" if config == "lite" else f"-{split}"
        named.append(ReleaseSplit(config, split, f"{base}{suffix}", tuple(sorted(ids))))
    return named


def sweb_config(name: str, version: str, splits: Sequence[ReleaseSplit]) -> dict[str, Any]:
    """``sweb.yaml``: the datasets the harness publishes, and our configs under :data:`OURS`."""
    return {
        "datasets": [split.dataset for split in splits],
        "splits": [SPLIT],
        OURS: {
            "name": name,
            "version": version,
            "configs": [
                {"config": s.config, "split": s.split, "dataset": s.dataset} for s in splits
            ],
        },
    }


def task_of(instance: Instance, datasets: Sequence[str], harness: Harness) -> Task:
    """One instance as a task: SWE-bench's columns, the harness's keys, our columns."""
    row = instance.to_row()
    meta: dict[str, Any] = {
        key: row[key]
        for key in ("instance_id", "repo", "base_commit", "created_at", "version",
                    "environment_setup_commit")
    }  # fmt: skip
    meta.update({key: row[key] for key in EXTRA_COLUMNS})
    meta.update(
        split=SPLIT,
        datasets=list(datasets),
        image=image_name(instance.instance_id),
        log_parser=harness.log_parser,
        eval_type=EVAL_TYPE,
    )
    texts = {
        "problem_statement": instance.problem_statement,
        "patch": instance.patch,
        "test_patch": instance.test_patch,
        "hints_text": instance.hints_text,
        "eval_script": harness.eval_script,
    }
    full = {key: list(getattr(instance, key)) for key in TEST_KEYS}
    runner = instance.run_metadata.get("runner", "pytest")
    unread = set(harness.unread)
    tests = {
        key: harness_ids([i for i in ids if i not in unread], runner) for key, ids in full.items()
    }
    if tests != full:  # the release's own lists, for the import (the harness ignores the key)
        meta[FULL_TESTS] = full
    return Task(instance.instance_id, meta, tests, texts, harness.dockerfile, dict(harness.context))


def harness_ids(test_ids: Sequence[str], runner: str) -> list[str]:
    """Test ids as the harness's log parser reads them from a run's log, sorted and without
    repeats: SWE-bench's form of the runner's ids (sympy's bare names; Django's and unittest's
    ``name (module.Class)``), a pytest id cut at its first whitespace (its parsers split each
    ``PASSED id`` line there, as SWE-bench's own records are cut)."""
    convert = make_runner(runner).swe_bench_id
    ids = (convert(test_id) for test_id in test_ids)
    return sorted({cut(test_id) if runner == "pytest" else test_id for test_id in ids})


def instance_of(task: Task) -> Instance:
    """The record a task holds (our columns where it has them; defaults elsewhere)."""
    whole = task.instance()  # the release's own lists, where tests.json has the harness's
    data = {key: value for key, value in task.meta.items() if key not in HARNESS_KEYS}
    data.pop(FULL_TESTS, None)
    data.update({key: task.texts[key] for key in ("problem_statement", "patch", "test_patch",
                                                  "hints_text")})  # fmt: skip
    data.update({key: list(whole[key]) for key in TEST_KEYS})
    metadata = data.get("run_metadata")
    if isinstance(metadata, str):
        data["run_metadata"] = json.loads(metadata) if metadata else {}
    for key in ("issue_numbers", "issue_created_at"):
        data.setdefault(key, [])
    try:
        return Instance.model_validate_json(json.dumps(data))
    except ValueError as error:
        raise TaskRepoError(f"tasks/{task.instance_id}: not a valid instance: {error}") from error


def harness_of(task: Task) -> Harness:
    """A task's harness files, with the ids its ``tests.json`` leaves out (those of the
    release's lists, ``task.yaml``'s :data:`FULL_TESTS`, whose harness form is not there)."""
    whole = task.instance()
    runner = str(whole.get("run_metadata") and _runner(whole["run_metadata"]) or "pytest")
    listed = {i for key in TEST_KEYS for i in task.tests[key]}
    unread = tuple(
        test_id
        for key in TEST_KEYS
        for test_id in whole[key]
        if not set(harness_ids([test_id], runner)) <= listed
    )
    return Harness(
        task.texts["eval_script"],
        task.dockerfile,
        str(task.meta.get("log_parser", "")),
        dict(task.context),
        unread,
    )


def _runner(metadata: Any) -> str:
    """The runner named by a row's ``run_metadata`` (a mapping, or its JSON text)."""
    if isinstance(metadata, str):
        metadata = json.loads(metadata) if metadata.strip() else {}
    return str(metadata.get("runner", "pytest")) if isinstance(metadata, dict) else "pytest"


def write_task_repo(
    out: Path,
    name: str,
    version: str,
    instances: Sequence[Instance],
    splits: Sequence[ReleaseSplit],
    harness: Mapping[str, Harness],
) -> None:
    """Write the task repo of ``instances`` into ``out`` (tasks of other ids there are left)."""
    member: dict[str, list[str]] = {}
    for split in splits:
        for instance_id in split.instance_ids:
            member.setdefault(instance_id, []).append(split.dataset)
    for instance in sorted(instances, key=lambda i: i.instance_id):
        datasets = member.get(instance.instance_id, [])
        write_task(out, task_of(instance, datasets, harness[instance.instance_id]))
    write_config(out, sweb_config(name, version, splits))


@dataclasses.dataclass(frozen=True)
class ReadRepo:
    """A task repo read back: its name and version, splits, instances and harness files."""

    name: str
    version: str
    splits: list[ReleaseSplit]
    instances: list[Instance]
    harness: dict[str, Harness]


def read_task_repo(root: Path) -> ReadRepo:
    """A task repo as our records. One we wrote gives its configs back from ``sweb.yaml``;
    anyone else's gives each dataset as a ``full``-like config of its tasks in split ``test``."""
    config = read_config(root)
    tasks = read_tasks(root)
    ours = config.get(OURS) or {}
    members: dict[str, list[str]] = {}
    for task in tasks:
        for dataset in task.meta.get("datasets") or []:
            members.setdefault(dataset, []).append(task.instance_id)
    entries = ours.get("configs") or [
        {"config": "full", "split": SPLIT, "dataset": dataset} for dataset in config["datasets"]
    ]
    splits = [
        ReleaseSplit(
            e["config"], e["split"], e["dataset"], tuple(sorted(members.get(e["dataset"], [])))
        )
        for e in entries
    ]
    return ReadRepo(
        name=str(ours.get("name", Path(root).name)),
        version=str(ours.get("version", "")),
        splits=splits,
        instances=[instance_of(task) for task in tasks],
        harness={task.instance_id: harness_of(task) for task in tasks},
    )
