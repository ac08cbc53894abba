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

CONFIG_FILE = "sweb.yaml"
TASKS_DIR = "tasks"
TASK_FILE = "task.yaml"
TESTS_FILE = "tests.json"
TEST_KEYS = ("FAIL_TO_PASS", "PASS_TO_PASS")
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
        """The task as the harness's instance dict: every key of ``task.yaml``, the texts, the
        test lists (as lists)."""
        return {**self.meta, **self.texts, **self.tests}


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


def load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(_read(path))
    except yaml.YAMLError as error:
        raise TaskRepoError(f"{path}: not valid YAML: {error}") from error


def _read(path: Path) -> str:
    """A text file as written: UTF-8, no newline translation (CRLF in a patch stays)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError as error:
        raise TaskRepoError(f"missing {path}") from error
    except UnicodeDecodeError as error:
        raise TaskRepoError(f"{path}: not UTF-8: {error.reason}") from error


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
    config = load_yaml(path)
    if not isinstance(config, dict) or not isinstance(config.get("datasets"), list):
        raise TaskRepoError(f"{path} names no datasets (a list under 'datasets')")
    config.setdefault("splits", ["test"])
    return config


def task_dirs(root: Path) -> list[Path]:
    """Every directory of ``tasks/`` holding a ``task.yaml``, sorted by name."""
    folder = Path(root) / TASKS_DIR
    if not folder.is_dir():
        raise TaskRepoError(f"{root} has no {TASKS_DIR}/ directory")
    return sorted(path for path in folder.iterdir() if (path / TASK_FILE).is_file())


def read_task(folder: Path) -> Task:
    """One task directory; TaskRepoError naming the file when something is missing or bad."""
    meta = load_yaml(folder / TASK_FILE)
    if not isinstance(meta, dict):
        raise TaskRepoError(f"{folder / TASK_FILE} is not a mapping")
    try:
        tests = json.loads(_read(folder / TESTS_FILE))
    except json.JSONDecodeError as error:
        raise TaskRepoError(f"{folder / TESTS_FILE}: not valid JSON: {error}") from error
    for key in TEST_KEYS:
        value = tests.get(key) if isinstance(tests, dict) else None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise TaskRepoError(f"{folder / TESTS_FILE}: {key} is not a list of test ids")
    texts = {column: _read(folder / name) for column, name in TEXT_FILES.items()}
    column, name = HINTS_FILE
    texts[column] = _read(folder / name) if (folder / name).is_file() else ""
    return Task(
        instance_id=str(meta.get("instance_id", folder.name)),
        meta=meta,
        tests={key: tests[key] for key in TEST_KEYS},
        texts=texts,
        dockerfile=_read(folder / DOCKERFILE) if (folder / DOCKERFILE).is_file() else "",
        context={
            path.name: path.read_bytes()
            for path in sorted(folder.iterdir())
            if path.is_file() and path.name not in _known_files() and not path.name.startswith(".")
        },
    )


def read_tasks(root: Path) -> list[Task]:
    return [read_task(folder) for folder in task_dirs(root)]


def image_name(instance_id: str, namespace: str = "swebench") -> str:
    """The image the harness derives for an instance: ``sweb.eval.x86_64.<id>:latest`` under
    ``namespace``, lower case, ``__`` spelled ``_1776_`` (Docker Hub refuses double
    underscores)."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id}:latest".replace("__", "_1776_").lower()
