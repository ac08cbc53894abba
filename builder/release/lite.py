"""The Lite split: SWE-bench-Lite rules read from config, checked offline, then a seeded sample."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Sequence

from unidiff import UnidiffParseError

from builder.core.config import LiteConfig
from builder.core.diffs import parse_patch
from builder.core.patterns import linear
from builder.core.records import Instance


@dataclasses.dataclass(frozen=True)
class LiteCheck:
    """Which Lite rules one instance breaks (empty: eligible), with a short evidence per rule."""

    instance_id: str
    broken: dict[str, str]

    @property
    def eligible(self) -> bool:
        return not self.broken


@dataclasses.dataclass(frozen=True)
class LiteSelection:
    """The Lite split and how it was chosen: eligible count, rule counts, the sample."""

    instances: list[Instance]
    eligible: int
    rule_counts: dict[str, int]
    checks: list[LiteCheck]

    def to_dict(self) -> dict[str, object]:
        return {
            "considered": len(self.checks),
            "eligible": self.eligible,
            "selected": len(self.instances),
            "excluded_by_rule": dict(sorted(self.rule_counts.items())),
        }


def _added_lines(patch: str) -> str:
    lines = patch.splitlines()
    return "\n".join(line[1:] for line in lines if line[:1] == "+" and line[:3] != "+++")


def _patch_rules(patch: str, config: LiteConfig) -> dict[str, str]:
    broken: dict[str, str] = {}
    try:
        files = parse_patch(patch)
    except UnidiffParseError as error:
        return {"patch_unparsable": str(error)[:80]}
    changed = [f for f in files if f.is_added_file or f.is_removed_file]
    if changed and not config.allow_added_or_deleted_files:
        broken["patch_adds_or_deletes_files"] = ", ".join(sorted(f.path for f in changed))
    if len(files) > config.max_patch_files:
        broken["patch_touches_too_many_files"] = f"{len(files)} files > {config.max_patch_files}"
    hunks = sum(len(f) for f in files)
    if hunks < config.min_patch_hunks:
        broken["patch_too_few_hunks"] = f"{hunks} hunks < {config.min_patch_hunks}"
    if hunks > config.max_patch_hunks:
        broken["patch_too_many_hunks"] = f"{hunks} hunks > {config.max_patch_hunks}"
    return broken


def check_instance(instance: Instance, config: LiteConfig) -> LiteCheck:
    """Apply every Lite rule to one instance, offline (text and diffs only)."""
    broken: dict[str, str] = {}
    words = len(instance.problem_statement.split())
    if words < config.min_problem_words:
        broken["problem_too_short"] = f"{words} words < {config.min_problem_words}"
    for name, pattern in sorted(config.problem_patterns.items()):
        found = linear(pattern).search(instance.problem_statement)
        if found:
            broken[f"problem_has_{name}"] = found.group(0).strip()[:80]
    broken.update(_patch_rules(instance.patch, config))
    added_test_code = _added_lines(instance.test_patch)
    for name, pattern in sorted(config.test_patterns.items()):
        found = linear(pattern).search(added_test_code)
        if found:
            broken[f"tests_check_{name}"] = found.group(0)[:80]
    return LiteCheck(instance.instance_id, broken)


def select_lite(instances: Sequence[Instance], config: LiteConfig) -> LiteSelection:
    """Eligible instances by the rules, then ``config.size`` of them by a seeded sample.

    The sample depends only on the eligible ids, the seed and the size (ids are sorted first),
    so the same inputs always give the same Lite split.
    """
    ordered = sorted(instances, key=lambda i: i.instance_id)
    checks = [check_instance(instance, config) for instance in ordered]
    eligible = [i for i, check in zip(ordered, checks, strict=True) if check.eligible]
    counts: Counter[str] = Counter(rule for check in checks for rule in check.broken)
    if config.size and len(eligible) > config.size:
        chosen = random.Random(config.seed).sample(range(len(eligible)), config.size)
        eligible_sample = [eligible[index] for index in sorted(chosen)]
    else:
        eligible_sample = eligible
    return LiteSelection(eligible_sample, len(eligible), dict(counts), checks)
