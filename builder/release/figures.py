"""The card's PNG figures (repositories, issue lengths, funnel), byte-identical for equal data."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from builder.core.files import atomic_write_bytes
from builder.core.pipeline import StageStats
from builder.core.records import Instance
from builder.release.stats import issue_words

FIGURES = {
    "repos": "figures/repos.png",
    "issue_words": "figures/issue_words.png",
    "funnel": "figures/funnel.png",
}
"""Figure name → path relative to the dataset dir."""

_STYLE = {
    "font.family": "DejaVu Sans",  # bundled with matplotlib: the same glyphs everywhere
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": True,
}
_KEPT, _DROPPED = "#3b7dd8", "#d8823b"
_REASON_COLOURS = [
    *(matplotlib.colormaps["tab20"](i) for i in range(2, 20)),  # 0-1 are the blues of "kept"
    *(matplotlib.colormaps["tab20b"](i) for i in range(20)),
]
"""One distinct colour per drop reason (38: more than DropReason has members)."""
_MAX_REPOS = 25


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    # No "Software" (version) or date chunks: the bytes depend on the data and matplotlib only.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _empty(axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes)
    axes.set_xticks([])
    axes.set_yticks([])


def repos_figure(instances: Sequence[Instance]) -> bytes:
    """Horizontal bars: instances per repository (the largest first, at most 25)."""
    counts = sorted(Counter(i.repo for i in instances).items(), key=lambda kv: (-kv[1], kv[0]))
    shown = counts[:_MAX_REPOS]
    with matplotlib.rc_context(_STYLE):
        figure = Figure(figsize=(7, 1.2 + 0.3 * max(len(shown), 1)))
        axes = figure.add_subplot()
        if shown:
            names = [name for name, _ in shown][::-1]
            values = [value for _, value in shown][::-1]
            bars = axes.barh(names, values, color=_KEPT)
            axes.bar_label(bars, padding=2)
            axes.set_xlabel("instances")
            axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            _empty(axes, "no instances")
        title = "Instances per repository"
        if len(counts) > len(shown):
            title += f" (top {len(shown)} of {len(counts)})"
        axes.set_title(title)
        figure.tight_layout()
        return _png(figure)


def issue_words_figure(instances: Sequence[Instance]) -> bytes:
    """Histogram of the issue texts' word counts."""
    words = sorted(issue_words(i) for i in instances)
    with matplotlib.rc_context(_STYLE):
        figure = Figure(figsize=(7, 3.5))
        axes = figure.add_subplot()
        if words:
            axes.hist(words, bins=min(30, max(5, len(set(words)))), color=_KEPT, edgecolor="white")
            axes.set_xlabel("words in the issue text")
            axes.set_ylabel("instances")
            axes.yaxis.set_major_locator(MaxNLocator(integer=True))
            mean = sum(words) / len(words)
            axes.axvline(mean, color="black", linestyle="--", linewidth=1)
            axes.set_title(f"Issue length (mean {mean:.0f}, max {words[-1]} words)")
        else:
            _empty(axes, "no instances")
            axes.set_title("Issue length")
        figure.tight_layout()
        return _png(figure)


def funnel_figure(funnel: Sequence[StageStats]) -> bytes:
    """Per stage: records kept and dropped, the drops stacked by reason."""
    with matplotlib.rc_context(_STYLE):
        reasons = sorted({reason for stats in funnel for reason in stats.dropped})
        rows = (len(reasons) + 2) // 3 + 1
        figure = Figure(figsize=(7, 1.4 + 0.6 * max(len(funnel), 1) + 0.22 * rows),
                        layout="constrained")  # fmt: skip
        axes = figure.add_subplot()
        stages = [stats.stage for stats in funnel][::-1]
        ordered = list(funnel)[::-1]
        kept = [stats.kept for stats in ordered]
        axes.barh(stages, kept, color=_KEPT, label="kept")
        left = list(kept)
        for index, reason in enumerate(reasons):
            values = [stats.dropped.get(reason, 0) for stats in ordered]
            color = _REASON_COLOURS[index % len(_REASON_COLOURS)]
            axes.barh(stages, values, left=left, color=color, label=reason)
            left = [a + b for a, b in zip(left, values, strict=True)]
        for position, stats in enumerate(ordered):
            axes.text(left[position], position, f" {stats.kept}/{stats.judged}", va="center")
        axes.set_xlabel("records (kept first, then drops by reason)")
        axes.set_title("Construction funnel")
        axes.set_xlim(0, max(left, default=1) * 1.2 + 1)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        figure.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
        return _png(figure)


def write_figures(
    dataset_dir: Path, instances: Sequence[Instance], funnel: Sequence[StageStats]
) -> dict[str, str]:
    """Write the three PNGs under ``figures/``; returns name → relative path."""
    images = {
        "repos": repos_figure(instances),
        "issue_words": issue_words_figure(instances),
        "funnel": funnel_figure(funnel),
    }
    for name, data in images.items():
        atomic_write_bytes(dataset_dir / FIGURES[name], data)
    return dict(FIGURES)
