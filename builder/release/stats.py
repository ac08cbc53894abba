"""The paper-style statistics table (Table 1 of SWT-Bench) over a split's instances."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from builder.core.records import Instance, Transitions

_TRANSITIONS = (
    ("F→P", "fail_to_pass"),
    ("F→F", "fail_to_fail"),
    ("P→P", "pass_to_pass"),
    ("P→F", "pass_to_fail"),
)


@dataclasses.dataclass(frozen=True)
class StatRow:
    """One row: mean and max over the instances where the value was measured."""

    group: str
    name: str
    measured: int
    total: int
    mean: float | None
    maximum: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "measured": self.measured,
            "instances": self.total,
            "mean": None if self.mean is None else round(self.mean, 6),
            "max": None if self.maximum is None else round(self.maximum, 6),
        }


def issue_words(instance: Instance) -> int:
    """Words of the issue text (whitespace-separated tokens of the problem statement)."""
    return len(instance.problem_statement.split())


def _transition(which: str, field: str | None) -> Callable[[Instance], float | None]:
    def value(instance: Instance) -> float | None:
        counts: Transitions | None = getattr(instance.stats, which)
        if counts is None:
            return None
        if field is None:
            return sum(getattr(counts, name) for _, name in _TRANSITIONS)
        return getattr(counts, field)

    return value


def _stat(field: str) -> Callable[[Instance], float | None]:
    return lambda instance: getattr(instance.stats, field)


def _coverage(instance: Instance) -> float | None:
    return None if instance.golden_coverage is None else 100.0 * instance.golden_coverage


_ROWS: tuple[tuple[str, str, Callable[[Instance], float | None]], ...] = (
    ("Issue text", "# words", issue_words),
    ("Codebase", "# files", _stat("codebase_files")),
    ("Codebase", "# lines", _stat("codebase_lines")),
    *(("Existing tests", label, _transition("existing_tests", f)) for label, f in _TRANSITIONS),
    ("Existing tests", "total", _transition("existing_tests", None)),
    ("Golden coverage", "coverage (%)", _coverage),
    *(("Golden tests", label, _transition("golden_tests", f)) for label, f in _TRANSITIONS),
    ("Golden tests", "added", _stat("golden_tests_added")),
    ("Golden tests", "removed", _stat("golden_tests_removed")),
    ("Golden tests", "total", _transition("golden_tests", None)),
    ("Golden test edits", "# files", _stat("golden_test_files_edited")),
    ("Golden test edits", "# lines", _stat("golden_test_lines_edited")),
)


def statistics_table(instances: Sequence[Instance]) -> list[StatRow]:
    """Mean and max of every Table-1 statistic; unmeasured (None) values are left out, counted."""
    rows = []
    for group, name, value in _ROWS:
        values = [v for v in map(value, instances) if v is not None]
        mean = sum(values) / len(values) if values else None
        maximum = max(values, default=None)
        rows.append(StatRow(group, name, len(values), len(instances), mean, maximum))
    return rows


def _number(value: float | None, decimals: int) -> str:
    if value is None:
        return "n/a"
    if decimals == 0 and float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{decimals}f}"


def markdown_table(columns: dict[str, list[StatRow]]) -> str:
    """Rows as a markdown table, one mean/max column pair per split (e.g. full and lite)."""
    names = list(columns)
    header = "| | statistic | " + " | ".join(f"{n} mean | {n} max" for n in names) + " |"
    rule = "|---|---|" + "---:|---:|" * len(names)
    lines = [header, rule]
    first = columns[names[0]]
    previous_group = None
    for index, row in enumerate(first):
        group = row.group if row.group != previous_group else ""
        previous_group = row.group
        cells = []
        for name in names:
            cell = columns[name][index]
            note = "" if cell.measured == cell.total else f" ({cell.measured}/{cell.total})"
            cells.append(f"{_number(cell.mean, 1)}{note} | {_number(cell.maximum, 0)}")
        lines.append(f"| {group} | {row.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
