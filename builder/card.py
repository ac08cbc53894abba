"""The dataset card: the Hub's YAML header, what the dataset is, and the drop funnel."""

from __future__ import annotations

from collections.abc import Sequence

from builder.export import SPLIT, split_path
from builder.pipeline import StageStats

_HEADER = """\
---
license: {license}
task_categories:
- text-generation
tags:
- code
- swt-bench
- test-generation
pretty_name: {name}
configs:
- config_name: full
  default: true
  data_files:
  - split: {split}
    path: {path}
---
"""


def funnel_lines(funnel: Sequence[StageStats]) -> list[str]:
    """The drop funnel as aligned text lines (printed at the end of a run)."""
    lines = []
    for stats in funnel:
        lines.append(f"{stats.stage:<10} {stats.seen:>6} in {stats.kept:>6} kept")
        for reason, count in sorted(stats.dropped.items()):
            lines.append(f"{'':<10} {count:>6} dropped: {reason}")
    return lines


def render_card(name: str, funnel: Sequence[StageStats], instances: int, license: str) -> str:
    """The README.md of the dataset (deterministic: no dates or machine details)."""
    rows = []
    for stats in funnel:
        drops = ", ".join(f"{reason} {count}" for reason, count in sorted(stats.dropped.items()))
        rows.append(f"| {stats.stage} | {stats.seen} | {stats.kept} | {drops or '—'} |")
    return (
        _HEADER.format(license=license, name=name, split=SPLIT, path=split_path("full"))
        + f"\n# {name}\n\n"
        "An SWT-Bench-style benchmark built with swt-builder: each instance pairs a GitHub issue "
        "with the repository at the fix's base commit, the golden code patch (`patch`) and the "
        "golden tests (`test_patch`). A method under evaluation must write tests that fail before "
        "the golden patch and pass after it. `FAIL_TO_PASS` and `PASS_TO_PASS` (JSON-encoded "
        "lists of pytest node ids) come from running the golden tests before and after the "
        "golden patch.\n\n"
        f"Instances: **{instances}**.\n\n"
        "## Load\n\n"
        "```python\nimport datasets\n"
        f'rows = datasets.load_dataset("<this dataset>", split="{SPLIT}")\n```\n\n'
        "## Construction funnel\n\n"
        "| stage | in | kept | dropped (reason count) |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n"
    )
