"""SWE-bench's task-repo format: one directory per instance under ``tasks/``, read and written."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from builder.core.errors import SwtError
from builder.core.files import inside
from builder.task_repo import safe_files

CONFIG_FILE = "sweb.yaml"
TASKS_DIR = "tasks"
TASK_FILE = "task.yaml"
TESTS_FILE = "tests.json"
TEST_KEYS = ("FAIL_TO_PASS", "PASS_TO_PASS")
FULL_TESTS = "swt_builder_tests"
"""The key of ``task.yaml`` holding the release's own test lists when ``tests.json`` holds them
in the harness's form (ids as its log parser reads them: ``builder.task_repo.release``)."""
TEXT_FILES = {
    "problem_statement": "problem_statement.md",
    "patch": "gold.patch",
    "test_patch": "test.patch",
    "eval_script": "eval.sh",
}
"""Columns kept as files of their own (the harness reads ``eval.sh`` as ``eval_script``)."""
HINTS_FILE = ("hints_text", "hints.md")
"""Written only when the hints are not empty; an absent file reads as ``""``."""
DOCKERFILE = "Dockerfile"
DEPRECATED_SPLIT = "deprecated"
"""The split of a task kept in the tree and published in no dataset."""


class TaskRepoError(SwtError, ValueError):
    """A task repo that cannot be read: a missing file, invalid YAML or JSON, a bad value."""


@dataclasses.dataclass(frozen=True)
class Task:
    """One task directory: ``task.yaml``'s keys, ``tests.json``'s lists, the text files."""

    instance_id: str
    meta: Mapping[str, Any]
    tests: Mapping[str, list[str]]
    texts: Mapping[str, str]
    dockerfile: str
    context: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    """The other files of the directory, the Dockerfile's build context (a script it runs):
    name → bytes; the harness builds the image with the task directory as context."""

    def instance(self) -> dict[str, Any]:
        """The task as an instance dict: every key of ``task.yaml``, the texts, the test lists
        (as lists; the full ids of :data:`FULL_TESTS` where ``task.yaml`` has them, else
        ``tests.json``'s)."""
        meta = {key: value for key, value in self.meta.items() if key != FULL_TESTS}
        full = self.meta.get(FULL_TESTS)
        tests = {key: list(full[key]) for key in TEST_KEYS} if _lists(full) else self.tests
        return {**meta, **self.texts, **tests}


def _lists(value: Any) -> bool:
    """Whether ``value`` maps each of :data:`TEST_KEYS` to a list of strings."""
    return isinstance(value, dict) and all(
        isinstance(value.get(key), list) and all(isinstance(i, str) for i in value[key])
        for key in TEST_KEYS
    )


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, for a reviewer's eyes."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    literal = "\n" in data and _literal_safe(data)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if literal else None)


def _literal_safe(text: str) -> bool:
    """Whether a literal block gives ``text`` back exactly (trailing spaces on a line, tabs or
    carriage returns and leading blank lines do not survive every reader: quote those)."""
    return (
        not any(c in text for c in "\r\t\x85\u2028\u2029")
        and not any(line != line.rstrip(" ") for line in text.split("\n"))
        and not text.startswith(("\n", " "))
    )


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Mapping[str, Any]) -> str:
    """YAML text of ``data``: keys sorted, block style, UTF-8 kept, the same bytes every time."""
    return yaml.dump(
        dict(data), Dumper=_Dumper, sort_keys=True, allow_unicode=True,
        default_flow_style=False, width=100,
    )  # fmt: skip


def _yaml(text: str, shown: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise TaskRepoError(f"{shown}: not valid YAML: {error}") from error


def _read_at(root: Path, *parts: str) -> str:
    """A file below ``root`` as written (UTF-8, no newline translation: CRLF in a patch stays),
    read without following links (``safe_files``: UnsafePath when it is a link, a device, …)."""
    shown = Path(root, *parts)
    try:
        data = safe_files.read_bytes(Path(root), *parts)
    except FileNotFoundError as error:
        raise TaskRepoError(f"missing {shown}") from error
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TaskRepoError(f"{shown}: not UTF-8: {error.reason}") from error


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def dump_tests(tests: Mapping[str, list[str]]) -> str:
    return (
        json.dumps({key: list(tests[key]) for key in TEST_KEYS}, indent=2, ensure_ascii=False)
        + "\n"
    )


def write_task(root: Path, task: Task) -> Path:
    """Write ``task`` under ``root/tasks/<instance_id>/`` (the directory is replaced whole)."""
    folder = inside(Path(root), TASKS_DIR, task.instance_id)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.is_file():
            stale.unlink()
    _write(folder / TASK_FILE, dump_yaml(task.meta))
    _write(folder / TESTS_FILE, dump_tests(task.tests))
    for column, name in TEXT_FILES.items():
        _write(folder / name, task.texts[column])
    column, name = HINTS_FILE
    if task.texts.get(column):
        _write(folder / name, task.texts[column])
    _write(folder / DOCKERFILE, task.dockerfile)
    for name, data in sorted(task.context.items()):
        if name in _known_files() or "/" in name or name.startswith("."):
            raise TaskRepoError(f"tasks/{task.instance_id}: {name!r} cannot be a context file")
        (folder / name).write_bytes(data)
    (folder / TEXT_FILES["eval_script"]).chmod(0o755)
    return folder


def _known_files() -> set[str]:
    """The files of a task directory that are not context files."""
    return {TASK_FILE, TESTS_FILE, DOCKERFILE, HINTS_FILE[1], *TEXT_FILES.values()}


def write_config(root: Path, config: Mapping[str, Any]) -> None:
    _write(Path(root) / CONFIG_FILE, dump_yaml(config))


def read_config(root: Path) -> dict[str, Any]:
    """``sweb.yaml``: at least ``datasets`` (a list); ``splits`` defaults to ``[test]``."""
    path = Path(root) / CONFIG_FILE
    config = _yaml(_read_at(Path(root), CONFIG_FILE), path)
    if not isinstance(config, dict) or not isinstance(config.get("datasets"), list):
        raise TaskRepoError(f"{path} names no datasets (a list under 'datasets')")
    config.setdefault("splits", ["test"])
    return config


def task_entries(root: Path) -> list[tuple[str, str]]:
    """``(name, problem)`` of every entry of ``tasks/`` that is a task, sorted by name: a
    directory holding a ``task.yaml`` (problem ``""``), or an entry that is a link or a special
    file (problem: what it is; never followed). Regular files there are no tasks."""
    root = Path(root)
    if not safe_files.exists(root, TASKS_DIR):
        raise TaskRepoError(f"{root} has no {TASKS_DIR}/ directory")
    found = []
    for name, kind in safe_files.entries(root, TASKS_DIR):
        if kind == "dir":
            if safe_files.exists(root, TASKS_DIR, name, TASK_FILE):
                found.append((name, ""))
        elif kind != "file":
            found.append((name, f"{TASKS_DIR}/{name}: {kind}"))
    return found


def task_dirs(root: Path) -> list[Path]:
    """Every directory of ``tasks/`` holding a ``task.yaml``, sorted by name; UnsafePath for
    an entry that is a link or a special file."""
    folders = []
    for name, problem in task_entries(root):
        if problem:
            raise safe_files.UnsafePath(f"{TASKS_DIR}/{name}", problem.rsplit(": ", 1)[-1])
        folders.append(Path(root) / TASKS_DIR / name)
    return folders


def read_task(folder: Path) -> Task:
    """One task directory (``ROOT/tasks/NAME``), every file read without following links;
    TaskRepoError naming the file when something is missing or bad, UnsafePath when a file is
    a link, a device or another special file."""
    root, name = folder.parent.parent, folder.name
    here = (TASKS_DIR, name)
    meta = _yaml(_read_at(root, *here, TASK_FILE), folder / TASK_FILE)
    if not isinstance(meta, dict):
        raise TaskRepoError(f"{folder / TASK_FILE} is not a mapping")
    try:
        tests = json.loads(_read_at(root, *here, TESTS_FILE))
    except json.JSONDecodeError as error:
        raise TaskRepoError(f"{folder / TESTS_FILE}: not valid JSON: {error}") from error
    for key in TEST_KEYS:
        value = tests.get(key) if isinstance(tests, dict) else None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise TaskRepoError(f"{folder / TESTS_FILE}: {key} is not a list of test ids")
    texts = {column: _read_at(root, *here, file) for column, file in TEXT_FILES.items()}
    column, file = HINTS_FILE
    texts[column] = _read_at(root, *here, file) if safe_files.exists(root, *here, file) else ""
    dockerfile = (
        _read_at(root, *here, DOCKERFILE) if safe_files.exists(root, *here, DOCKERFILE) else ""
    )
    context = {}
    for entry, kind in safe_files.entries(root, *here):
        if entry in _known_files() or entry.startswith(".") or kind == "dir":
            continue
        if kind != "file":
            raise safe_files.UnsafePath(f"{TASKS_DIR}/{name}/{entry}", kind)
        context[entry] = safe_files.read_bytes(root, *here, entry)
    return Task(
        instance_id=str(meta.get("instance_id", name)),
        meta=meta,
        tests={key: tests[key] for key in TEST_KEYS},
        texts=texts,
        dockerfile=dockerfile,
        context=context,
    )


def read_tasks(root: Path) -> list[Task]:
    return [read_task(folder) for folder in task_dirs(root)]


def image_name(instance_id: str, namespace: str = "swebench") -> str:
    """The image the harness derives for an instance: ``sweb.eval.x86_64.<id>:latest`` under
    ``namespace``, lower case, ``__`` spelled ``_1776_`` (Docker Hub refuses double
    underscores)."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id}:latest".replace("__", "_1776_").lower()
