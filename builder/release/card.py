"""The dataset card: the Hub's YAML header, statistics, funnel, per-repo counts and figures."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from builder.core.pipeline import StageStats
from builder.core.records import Instance
from builder.release.reproduce import facts_markdown
from builder.release.rolling import Cutoff
from builder.release.splits import CONFIG_ORDER, FULL, LITE, SPLIT, SplitPlan
from builder.release.stats import StatRow, markdown_table
from builder.release.versions import VERSION_SCHEME

_ABOUT = (
    "An SWT-Bench-style benchmark built with swt-builder: each instance pairs a GitHub issue "
    "with the repository at the fix's base commit, the golden code patch (`patch`) and the "
    "golden tests (`test_patch`). A method under evaluation must write tests that fail before "
    "the golden patch and pass after it. `FAIL_TO_PASS` and `PASS_TO_PASS` (JSON-encoded "
    "lists of pytest node ids) come from running the golden tests before and after the "
    "golden patch. A test that is an expected failure (xfail) or an unexpected pass (xpass) on "
    "either side is in neither list and decides no drop."
)

_CONFIG_TEXT = {
    FULL: "every validated instance",
    LITE: "the SWE-bench-Lite rules (offline), then a seeded sample",
    "post_cutoff": "per model cutoff: instances whose problem became public after it",
    "monthly": "per complete month of the problem's publication; frozen once released",
}


def _size_category(count: int) -> str:
    return "n<1K" if count < 1000 else "1K<n<10K" if count < 10_000 else "10K<n<100K"


def yaml_header(name: str, license: str, plan: SplitPlan) -> str:
    """The Hub's YAML front matter: license, task, and every config's splits and files."""
    lines = [
        "---",
        f"license: {license}",
        "task_categories:",
        "- text-generation",
        "tags:",
        "- code",
        "- swt-bench",
        "- test-generation",
        f"pretty_name: {name}",
        "size_categories:",
        f"- {_size_category(plan.get(FULL, SPLIT).rows)}",
        "configs:",
    ]
    grouped = plan.by_config()
    for config in [c for c in CONFIG_ORDER if c in grouped] + sorted(
        set(grouped) - set(CONFIG_ORDER)
    ):
        present = [split for split in grouped[config] if split.rows]
        if not present:
            continue
        lines.append(f"- config_name: {config}")
        if config == FULL:
            lines.append("  default: true")
        lines.append("  data_files:")
        for split in present:
            lines += [f"  - split: {split.name}", f"    path: {split.path}"]
    return "\n".join(lines) + "\n---\n"


def _splits_table(plan: SplitPlan) -> str:
    lines = ["| config | split | instances | frozen |", "|---|---|---:|---|"]
    for split in plan.splits:
        frozen = "yes" if split.frozen else ""
        rows = f"{split.rows}" if split.rows else "0 (no file)"
        lines.append(f"| {split.config} | {split.name} | {rows} | {frozen} |")
    return "\n".join(lines) + "\n"


def _funnel_table(funnel: Sequence[StageStats], lite: Mapping[str, Any] | None) -> str:
    rows = ["| stage | in | kept | dropped (reason count) |", "|---|---|---|---|"]
    for stats in funnel:
        drops = ", ".join(f"{reason} {count}" for reason, count in sorted(stats.dropped.items()))
        rows.append(f"| {stats.stage} | {stats.judged} | {stats.kept} | {drops or '—'} |")
    if lite is not None:
        rules = ", ".join(f"{rule} {n}" for rule, n in lite["excluded_by_rule"].items())
        rows.append(
            f"| lite (rules) | {lite['considered']} | {lite['eligible']} | {rules or '—'} |"
        )
        rows.append(
            f"| lite (sample) | {lite['eligible']} | {lite['selected']} | "
            f"{lite['eligible'] - lite['selected']} not sampled |"
        )
    return "\n".join(rows) + "\n" + _not_judged(funnel)


def _not_judged(funnel: Sequence[StageStats]) -> str:
    """A line below the funnel for records a fault of the build machine left without a verdict
    (``infra_error``): not in the table, not in the release, tried again by the next build."""
    parts = []
    for stats in funnel:
        if stats.faults:
            faults = ", ".join(f"{fault} {count}" for fault, count in sorted(stats.faults.items()))
            parts.append(f"{stats.stage} {sum(stats.faults.values())} ({faults})")
    if not parts:
        return ""
    return (
        "\nNot judged, a fault of the build machine (`infra_error`, tried again by the next "
        f"build): {'; '.join(parts)}.\n"
    )


def _repo_table(instances: Sequence[Instance], plan: SplitPlan) -> str:
    lite_ids = set(plan.get(LITE, SPLIT).instance_ids) if plan.lite is not None else set()
    counts = Counter(i.repo for i in instances)
    lite = Counter(i.repo for i in instances if i.instance_id in lite_ids)
    lines = ["| repository | full | lite |", "|---|---:|---:|"]
    for repo, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {repo} | {count} | {lite.get(repo, 0)} |")
    return "\n".join(lines) + "\n"


def _cutoff_table(cutoffs: Sequence[Cutoff], plan: SplitPlan) -> str:
    lines = ["| model | cutoff | split | instances |", "|---|---|---|---:|"]
    for cutoff in cutoffs:
        rows = plan.get("post_cutoff", cutoff.split).rows
        lines.append(f"| {cutoff.model} | {cutoff.date.isoformat()} | {cutoff.split} | {rows} |")
    return "\n".join(lines) + "\n"


def _stubbed_section(instances: Sequence[Instance]) -> str:
    """The files checked out empty because the repository's history lacked their content
    (``[validation] stub_missing``), per instance; "" when there are none."""
    rows = []
    for instance in sorted(instances, key=lambda i: i.instance_id):
        stubbed = json.loads(instance.run_metadata.get("stubbed_files", "{}"))
        for commit, paths in sorted(stubbed.items()):
            rows.append(
                f"| `{instance.instance_id}` | `{commit[:12]}` | "
                + ", ".join(f"`{path}`" for path in paths) + " |"
            )  # fmt: skip
    if not rows:
        return ""
    return (
        "## Stubbed files\n\n"
        "The repository's history as mirrored lacked these files' content, and no repair "
        "folder held it: the validation checked them out empty (`stub_missing`). A test that "
        "reads one fails; each instance's `run_metadata.stubbed_files` lists its own.\n\n"
        "| instance | commit | files |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
    )


def render_card(
    *,
    name: str,
    version: str,
    license: str,
    instances: Sequence[Instance],
    funnel: Sequence[StageStats],
    plan: SplitPlan,
    tables: Mapping[str, list[StatRow]],
    cutoffs: Sequence[Cutoff],
    figures: Mapping[str, str],
    reproduce: Mapping[str, Any] | None = None,
) -> str:
    """The README.md of the dataset (deterministic: no dates, paths or host names; the
    ``reproduce`` facts, when given, name the toolkit, platform and environments of the build)."""
    lite = plan.lite.to_dict() if plan.lite is not None else None
    configs = "\n".join(
        f"- `{config}`: {_CONFIG_TEXT.get(config, config)}"
        for config in CONFIG_ORDER
        if config in plan.by_config()
    )
    return (
        yaml_header(name, license, plan) + f"\n# {name}\n\n{_ABOUT}\n\n"
        f"Version **{version}**. Instances: **{len(instances)}**.\n\n"
        "## Load\n\n"
        "```python\nimport datasets\n"
        f'full = datasets.load_dataset("<this dataset>", split="{SPLIT}")\n'
        f'lite = datasets.load_dataset("<this dataset>", "lite", split="{SPLIT}")\n'
        'rolling = datasets.load_dataset("<this dataset>", "post_cutoff")\n```\n\n'
        "The SWE-bench columns come first (`instance_id, repo, base_commit, patch, test_patch, "
        "problem_statement, hints_text, created_at, version, environment_setup_commit, "
        "FAIL_TO_PASS, PASS_TO_PASS`), so SWE-bench harnesses read the `test` split "
        "unchanged; our columns follow (`stats` holds the per-instance statistics below).\n\n"
        f"## Configs and splits\n\n{configs}\n\n{_splits_table(plan)}\n"
        "A problem became public at the earliest of its linked issues' and its pull request's "
        "creation; a model cannot have trained on an instance made public after its cutoff.\n\n"
        f"{_cutoff_table(cutoffs, plan)}\n"
        "## Statistics\n\n"
        "Mean and maximum per instance (as in Table 1 of the SWT-Bench paper). `n/a`: not "
        "measured for any instance; `(m/n)`: measured for m of n instances.\n\n"
        f"{markdown_table(dict(tables))}\n"
        f"![issue length]({figures['issue_words']})\n\n"
        "## Construction funnel\n\n"
        f"{_funnel_table(funnel, lite)}\n"
        f"![funnel]({figures['funnel']})\n\n"
        "## Repositories\n\n"
        f"{_repo_table(instances, plan)}\n"
        f"![repositories]({figures['repos']})\n\n"
        f"{_stubbed_section(instances)}"
        "## Versions\n\n"
        f"{VERSION_SCHEME}\n\n"
        "`CHANGELOG.md` lists the instance ids added and removed per split in every release; "
        "`manifest.json` holds the sha256 of every file, the resolved configuration, the "
        "toolkit version and the counts.\n"
        + (f"\n## Reproduce\n\n{facts_markdown(reproduce)}" if reproduce is not None else "")
    )


_TEXT_YAML = ("# text configs\n", "# end text configs\n")
_TEXT_SECTION = ("<!-- text configs -->\n", "<!-- end text configs -->\n")
_TEXT_STYLES = {
    "zsb": "ZeroShot: asks for a unified diff",
    "zsp": "ZeroShotPlus: asks for the function-level format",
}
_TEXT_RETRIEVALS = {
    "bm25": "BM25 over the repository's files, queried with the issue",
    "oracle": "the files the golden patch edits",
    "oracle+tests": "the files the golden patch and the golden tests edit",
    "issue+bm25": "the files the issue names (paths, modules, identifiers), then BM25's",
}
_TEXT_CONSTRUCTIONS = {
    "swe-bench": "SWE-bench's (`*.py`, Lucene BM25, top 20, READMEs, by path, whole prompt)",
    "all-text": "every text file, rank order, budget over the files",
}


_GOLDEN_SECTION = ("<!-- golden mutation -->\n", "<!-- end golden mutation -->\n")


def with_golden_mutation(card: str, splits: Mapping[str, Mapping[str, Any]]) -> str:
    """``card`` with a section on the golden tests' kill rate per ``config/split`` (as
    ``golden_mutation.json`` holds it) before the text configs' section, or "## Versions";
    the section a card had before is replaced, none left for no splits."""
    card = _strip_between(card, *_GOLDEN_SECTION)
    if not splits:
        return card
    rows = ["| config | split | instances | mutants | equivalent | killed | kill rate |",
            "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, stat in sorted(splits.items()):
        config, _, split = name.partition("/")
        rate = "–" if stat["kill_rate"] is None else f"{stat['kill_rate']:.1f} %"
        rows.append(
            f"| {config} | {split} | {stat['instances']} | {stat['mutants']} | "
            f"{stat['equivalent']} | {stat['killed']} | {rate} |"
        )
    caps = sorted({stat["cap"] for stat in splits.values()})
    section = (
        f"{_GOLDEN_SECTION[0]}## Strength of the golden tests\n\n"
        "How many plausible bugs the golden tests catch: mutants of the lines each golden "
        "patch adds (a comparison, operator, constant, statement or return value changed, "
        f"at most {' / '.join(map(str, caps))} per instance, chosen deterministically) run "
        "under the golden tests; a mutant is killed when a golden test that passes on the "
        "fixed code fails on it. Equivalent mutants (the fixed code's bytecode, not killed) "
        "are left out of the kill rate (`swt-builder evaluate --predictions gold --semantics "
        "strict --mutation`; `golden_mutation.json`).\n\n"
        + "\n".join(rows)
        + f"\n\n{_GOLDEN_SECTION[1]}"
    )
    for anchor in (_TEXT_SECTION[0], "## Versions\n"):
        head, found, tail = card.partition(anchor)
        if found:
            return head + section + found + tail
    return card + "\n" + section


def _strip_between(text: str, start: str, end: str) -> str:
    head, found, rest = text.partition(start)
    return head + rest.partition(end)[2] if found else text


def with_text_configs(card: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """``card`` listing the text configs of ``entries`` (one per config and split, as the
    manifest's ``text`` holds them): in the YAML header's ``configs`` and in a section before
    "## Versions"; the text configs a card listed before are replaced, none listed for none."""
    card = _strip_between(card, *_TEXT_YAML)
    card = _strip_between(card, *_TEXT_SECTION)
    if not entries:
        return card
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        grouped.setdefault(entry["config"], []).append(entry)
    yaml = [_TEXT_YAML[0]]
    for config, splits in grouped.items():
        yaml.append(f"- config_name: {config}\n  data_files:\n")
        yaml += [f"  - split: {s['split']}\n    path: {s['path']}\n" for s in splits]
    yaml.append(_TEXT_YAML[1])
    close = card.index("\n---\n", 4) + 1  # the end of the front matter
    card = card[:close] + "".join(yaml) + card[close:]
    rows = ["| config | split | rows | retrieval | budget | prompt | tokenizer | made as |",
            "|---|---|---:|---|---:|---|---|---|"]  # fmt: skip
    for entry in entries:
        construction = entry.get("construction", "all-text")
        rows.append(
            f"| {entry['config']} | {entry['split']} | {entry['rows']} | "
            f"{_TEXT_RETRIEVALS.get(entry['retrieval'], entry['retrieval'])} | "
            f"{entry['budget']} | {_TEXT_STYLES.get(entry['style'], entry['style'])} | "
            f"{entry['tokenizer']} | {_TEXT_CONSTRUCTIONS.get(construction, construction)} |"
        )
    swapped = sorted({entry["config"] for entry in entries if entry.get("swapped")})
    swap_note = (
        "\n\nAs in SWT-Bench's zsb/zsp datasets, the rows of "
        + ", ".join(f"`{config}`" for config in swapped)
        + " swap the patch columns: `patch` holds the golden **test** patch between "
        "`<patch>` and `</patch>` lines (what a model is to write), `test_patch` the golden "
        "**code** patch (its lines rejoined with `\\n`, as SWT-Bench's script leaves it). "
        "Evaluate predictions against the plain configs."
        if swapped
        else ""
    )
    section = (
        f"{_TEXT_SECTION[0]}## Text configs\n\n"
        "Each row of a text config is its plain config's row with a `text` column: a prompt "
        "holding the issue, whole repository files at the base commit (numbered lines; chosen "
        "in rank order while they fit in the budget of tokens, counted with the tokenizer "
        "named; shown as the construction orders them) and the answer format. A file the "
        "repository's mirror could not produce is left out and named in the row's "
        "`run_metadata` (`text_skipped_files`)."
        + swap_note
        + "\n\n"
        + "\n".join(rows)
        + f"\n\n{_TEXT_SECTION[1]}"
    )
    head, found, tail = card.partition("## Versions\n")
    return head + section + found + tail if found else card + "\n" + section
