"""Progress bars: drawn once a total is known, finished before any report line is printed."""

from __future__ import annotations

import io
import re

from builder.progress import Progress


def _as_a_stage_drives_it(bar: Progress, total: int, cached: int) -> None:
    """What ``run_stage`` does with its ``progress``: reset to the total, count as it goes."""
    bar.reset(total=total)
    bar.update(cached)
    for _ in range(total - cached):
        bar.update(1)


def test_no_bar_before_the_total_and_none_after_a_report_line() -> None:
    stream = io.StringIO()
    with Progress("collect", "PR", echo=lambda line: stream.write(line + "\n"), file=stream) as bar:
        _as_a_stage_drives_it(bar, 13, 0)
        bar.echo("collect o/r: 13 PRs in range")
        bar.echo("collect: 8 candidates")
    text = stream.getvalue()
    # a bar without a total counts "0PR" (or "0it"); a rate such as "197557.80PR/s" is no count
    assert not re.search(r"(?<![\d.])0(?:PR|it)", text)
    before, report = text.split("collect o/r: 13 PRs in range\n")
    assert report == "collect: 8 candidates\n", "the bar was drawn again after the report"
    assert "13/13" in before
    assert before.endswith("\n"), "the report line shares the bar's line"


def test_one_bar_per_reset_and_none_for_nothing_to_do() -> None:
    stream = io.StringIO()
    with Progress("validate", "candidate", echo=stream.write, file=stream) as bar:
        _as_a_stage_drives_it(bar, 0, 0)
    assert stream.getvalue() == ""
    with Progress("validate", "candidate", echo=stream.write, file=stream) as bar:
        _as_a_stage_drives_it(bar, 3, 3)
    assert stream.getvalue().count("\n") == 1 and "3/3" in stream.getvalue()


def test_disabled_draws_nothing_and_still_prints() -> None:
    stream, lines = io.StringIO(), []
    with Progress("collect", "PR", enabled=False, echo=lines.append, file=stream) as bar:
        _as_a_stage_drives_it(bar, 5, 1)
        bar.echo("done")
    assert stream.getvalue() == "" and lines == ["done"]
