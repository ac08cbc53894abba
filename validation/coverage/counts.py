"""Execution counts of the golden patch's lines, as SWT-Bench's evaluation measures them.

SWT-Bench's ``trace.py`` (stdlib ``trace`` with ``--count``) counts line events per line of the
golden patch's files and reports each traced file's executable lines with their counts, 0 for
lines not run. Only the patch's lines matter and they are known before the run: ``counter.py``
(:data:`COUNTER`, run by the environment's interpreter) counts just those, the same numbers at a
fraction of the cost; see its docstring. This module runs in the builder: it wraps a test command
(:func:`counted_command`) and reads the report back (:func:`read_counts`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from validation.environments.runtime import RuntimeFiles

COUNTER = RuntimeFiles("validation.coverage", (("_swt_counter.py", "counter.py"),))
"""What counted runs run with the environment's interpreter: ``counter.py``."""

REPORT_VERSION = 1
"""The report format :func:`read_counts` reads (``counter.VERSION``)."""

_FLAGS_WITH_VALUE = "WX"
"""Short interpreter options that take a value (``-W all``, ``-Wall``, ``-X dev``)."""
_LONG_WITH_VALUE = ("--check-hash-based-pycs",)
_PROGRAM_FLAGS = "cm"
"""Short options that start the program's part: ``-c cmd``/``-m mod`` and what follows."""


def split_interpreter_options(command: list[str]) -> tuple[list[str], list[str]]:
    """``python [options] ARGS`` → (``[python, *options]``, ``ARGS``).

    Options are CPython's: flags (``-B``, ``-bb``, ``-OO``, clusters like ``-Es``), options with
    a value (``-W all``, ``-Wall``, ``-X dev``, ``--check-hash-based-pycs always``) and ``--``
    (kept with the options: the script follows). ``ARGS`` starts at ``-c``/``-m`` (also inside a
    cluster: ``-Bm pytest`` → ``[python, -B]``, ``[-m, pytest]``; a value written onto it,
    ``-mpytest``, becomes its own argument), at ``-`` (stdin) or at the first argument that is no
    option (a script). A wrapper script goes between the two parts.
    """
    python, *args = command
    head = [python]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            head.append(arg)
            index += 1
            break
        if arg == "-" or not arg.startswith("-"):
            break
        if arg.startswith("--"):
            head.append(arg)
            index += 1
            if arg in _LONG_WITH_VALUE and index < len(args):
                head.append(args[index])
                index += 1
            continue
        for position, letter in enumerate(arg[1:], 1):
            if letter in _PROGRAM_FLAGS:
                if position > 1:
                    head.append(arg[:position])
                value = arg[position + 1 :]
                program = [f"-{letter}", *([value] if value else [])]
                return head, [*program, *args[index + 1 :]]
            if letter in _FLAGS_WITH_VALUE:
                head.append(arg)
                index += 1
                if position == len(arg) - 1 and index < len(args):  # the value follows
                    head.append(args[index])
                    index += 1
                break
        else:
            head.append(arg)
            index += 1
    return head, args[index:]


def counted_command(
    command: list[str], runtime: str, report_path: str, targets: Mapping[str, Iterable[int]]
) -> list[str]:
    """``command`` (``python [options] ARGS``) counting the ``targets`` lines (per repo-relative
    file) into the JSON ``report_path``: ``python [options] RUNTIME/_swt_counter.py REPORT
    TARGETS_JSON ARGS``. ``runtime``: the run's folder holding :data:`COUNTER`
    (``Session.provide``). Its exit code is the command's."""
    interpreter, args = split_interpreter_options(command)
    lines = {path: sorted(set(numbers)) for path, numbers in targets.items()}
    return [
        *interpreter,
        f"{runtime}/{COUNTER.script}",
        report_path,
        json.dumps(lines, sort_keys=True),
        *args,
    ]


@dataclasses.dataclass(frozen=True)
class LineCounts:
    """A counted run, per repo-relative target file in which any line ran (the files
    ``trace.py`` reports): its wanted lines in the static line table, and their counts."""

    executable: Mapping[str, frozenset[int]]
    """The wanted lines that are executable (stdlib trace's static line table)."""
    counts: Mapping[str, Mapping[int, int]]
    """Per executable wanted line: how many line events it had, 0 included (``trace.py``'s
    number for it). A wanted line outside the table (a docstring line) is not here."""
    errors: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Files whose line table could not be computed (no source, a syntax error): the error."""
    replaced: bool = False
    """The counter was not in place at the end (Python < 3.12: the command, or coverage.py run
    in the same process, set its own trace function): the counts stop where it was replaced."""


def read_counts(data: bytes | None) -> LineCounts | None:
    """The counts of ``counter.py``'s report; None when the report is missing."""
    if data is None:
        return None
    report = json.loads(data)
    if report.get("version") != REPORT_VERSION:
        raise ValueError(f"counter report version {report.get('version')!r}, not {REPORT_VERSION}")
    executable, counts, errors = {}, {}, {}
    for path, entry in report.get("files", {}).items():
        key = PurePosixPath(path).as_posix()
        lines = frozenset(int(line) for line in entry.get("executable", ()))
        raw = {int(line): int(number) for line, number in entry.get("counts", {}).items()}
        executable[key] = lines
        counts[key] = {line: raw.get(line, 0) for line in sorted(lines)}
        if "error" in entry:
            errors[key] = entry["error"]
    return LineCounts(executable, counts, errors, bool(report.get("replaced", False)))


__all__ = [
    "COUNTER",
    "REPORT_VERSION",
    "LineCounts",
    "counted_command",
    "read_counts",
    "split_interpreter_options",
]
