"""Keep/drop decisions and lists, record by record: two builds side by side, or one build beside
an exclusion list (SWT-Bench's ``dataset/filter_cases_verified.txt``).

A record's decision is *kept* with its ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` lists, or *dropped*
with its reason and evidence. Two settings (or two versions of the builder) agree on a record
when both keep it with the same two lists, or both drop it for the same reason. A fault of the
machine (``infra_error``) is no decision: such a record is named as undecided and compared with
nothing.

SWT-Bench's exclusion list names the instances its gold validation did not resolve in all five
runs, or whose runs had errors (``dataset/determine_filter.py`` in its repository): beside it, a
record we drop that the list does not name, and one we keep that the list names, are its
disagreements, each shown with our decision's evidence.

    .venv/bin/python -m benchmarks.decisions DIST_A DIST_B        # two builds' output dirs
    .venv/bin/python -m benchmarks.decisions DIST --exclusions filter_cases_verified.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from builder.compare.inputs import read_exclusions, read_ours
from builder.core.config import ConfigError
from builder.core.faults import is_infrastructure
from builder.core.records import DropReason

KEPT = "kept"


@dataclasses.dataclass(frozen=True)
class Decision:
    """One record's outcome: kept with its lists, or dropped with reason and evidence."""

    outcome: str
    """``kept``, or the drop reason."""
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    evidence: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.outcome == KEPT

    @property
    def decided(self) -> bool:
        """Kept, or dropped for a verdict: not a fault of the machine."""
        try:
            return not is_infrastructure(DropReason(self.outcome))
        except ValueError:  # kept, or a reason this version does not know: taken as given
            return True

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "FAIL_TO_PASS": list(self.fail_to_pass),
            "PASS_TO_PASS": list(self.pass_to_pass),
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decision:
        return cls(
            str(data["outcome"]),
            tuple(data.get("FAIL_TO_PASS", ())),
            tuple(data.get("PASS_TO_PASS", ())),
            {str(k): str(v) for k, v in dict(data.get("evidence", {})).items()},
        )


def kept(fail_to_pass: Iterable[str], pass_to_pass: Iterable[str]) -> Decision:
    return Decision(KEPT, tuple(sorted(fail_to_pass)), tuple(sorted(pass_to_pass)))


def dropped(reason: str, evidence: Mapping[str, Any] | None = None) -> Decision:
    return Decision(reason, evidence={str(k): str(v) for k, v in (evidence or {}).items()})


def from_dist(dist: Path, stages: Iterable[str] = ("validate",)) -> dict[str, Decision]:
    """The decisions of a build's output dir: its ``instances.jsonl`` (kept, read as ``compare``
    reads it) and ``rejected/<stage>.jsonl`` of ``stages`` (dropped, with the evidence that
    ``compare``'s reader leaves out)."""
    ours = read_ours(dist)
    decisions: dict[str, Decision] = {}
    for stage in stages:
        rejected = dist / "rejected" / f"{stage}.jsonl"
        for row in _rows(rejected) if rejected.is_file() else []:
            instance_id = str(row["record"]["instance_id"])
            decisions[instance_id] = dropped(row["reason"], row.get("evidence"))
    for instance_id, instance in ours.items():
        decisions[instance_id] = kept(instance.FAIL_TO_PASS, instance.PASS_TO_PASS)
    return decisions


def undecided(decisions: Mapping[str, Decision]) -> list[str]:
    """The records a fault of the machine left without a decision."""
    return sorted(i for i, decision in decisions.items() if not decision.decided)


def _decided(decisions: Mapping[str, Decision]) -> dict[str, Decision]:
    return {i: decision for i, decision in decisions.items() if decision.decided}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def save(path: Path, decisions: Mapping[str, Decision]) -> None:
    path.write_text(
        json.dumps({k: decisions[k].to_json() for k in sorted(decisions)}, indent=1) + "\n"
    )


def load(path: Path) -> dict[str, Decision]:
    return {k: Decision.from_json(v) for k, v in json.loads(path.read_text()).items()}


@dataclasses.dataclass(frozen=True)
class Difference:
    """A record whose decision differs between two settings: what each gave and, when both
    kept it, the ids each list has that the other's lacks."""

    instance_id: str
    first: str
    second: str
    lists: Mapping[str, Mapping[str, tuple[str, ...]]]


def differences(first: Mapping[str, Decision], second: Mapping[str, Decision]) -> list[Difference]:
    """The records decided in both whose decisions differ (another outcome, or other lists)."""
    first, second = _decided(first), _decided(second)
    found = []
    for instance_id in sorted(first.keys() & second.keys()):
        a, b = first[instance_id], second[instance_id]
        lists: dict[str, dict[str, tuple[str, ...]]] = {}
        if a.kept and b.kept:
            for name, x, y in (
                ("FAIL_TO_PASS", a.fail_to_pass, b.fail_to_pass),
                ("PASS_TO_PASS", a.pass_to_pass, b.pass_to_pass),
            ):
                only_first, only_second = sorted(set(x) - set(y)), sorted(set(y) - set(x))
                if only_first or only_second:
                    lists[name] = {
                        "first_only": tuple(only_first),
                        "second_only": tuple(only_second),
                    }
        if a.outcome != b.outcome or lists:
            found.append(Difference(instance_id, _told(a), _told(b), lists))
    return found


def one_sided(first: Mapping[str, Decision], second: Mapping[str, Decision]) -> str:
    """A line naming the records only one of two runs decided (empty when both decided the
    same ones): the differences leave them out. A fault of the machine decides nothing."""
    first, second = _decided(first), _decided(second)
    sides = (
        ("first", sorted(first.keys() - second.keys())),
        ("second", sorted(second.keys() - first.keys())),
    )
    named = [f"{name}: {', '.join(ids)}" for name, ids in sides if ids]
    return f"decided by one only (not compared): {'; '.join(named)}\n" if named else ""


def _told(decision: Decision) -> str:
    if decision.kept:
        return f"kept ({len(decision.fail_to_pass)} F→P, {len(decision.pass_to_pass)} P→P)"
    shown = "; ".join(f"{k}: {v[:160]}" for k, v in sorted(decision.evidence.items()) if v)
    return decision.outcome + (f" ({shown})" if shown else "")


@dataclasses.dataclass(frozen=True)
class AgainstExclusions:
    """One build's decisions beside an exclusion list, over the records the build decided."""

    both_keep: tuple[str, ...]
    both_exclude: Mapping[str, str]
    """Excluded by the list and dropped here: id → our drop."""
    only_we_drop: Mapping[str, str]
    """Not named by the list, dropped here: id → our drop (with its evidence)."""
    only_they_exclude: tuple[str, ...]
    """Named by the list, kept here."""
    undecided: tuple[str, ...] = ()
    """Left without a decision here by a fault of the machine: compared with nothing."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def against_exclusions(decisions: Mapping[str, Decision], excluded: set[str]) -> AgainstExclusions:
    faults = tuple(undecided(decisions))
    decisions = _decided(decisions)
    ids = sorted(decisions)
    return AgainstExclusions(
        both_keep=tuple(i for i in ids if decisions[i].kept and i not in excluded),
        both_exclude={
            i: _told(decisions[i]) for i in ids if not decisions[i].kept and i in excluded
        },
        only_we_drop={
            i: _told(decisions[i]) for i in ids if not decisions[i].kept and i not in excluded
        },
        only_they_exclude=tuple(i for i in ids if decisions[i].kept and i in excluded),
        undecided=faults,
    )


def render_differences(found: list[Difference], first: str, second: str) -> str:
    if not found:
        return f"every record decided by both has the same decision and lists ({first}, {second})\n"
    lines = [f"| record | {first} | {second} | lists |", "|---|---|---|---|"]
    for difference in found:
        lists = "; ".join(
            f"{name}: {len(sides['first_only'])} only in {first}, "
            f"{len(sides['second_only'])} only in {second}"
            for name, sides in difference.lists.items()
        )
        lines.append(
            f"| {difference.instance_id} | {difference.first} | {difference.second} | {lists} |"
        )
    return "\n".join(lines) + "\n"


def render_exclusions(result: AgainstExclusions) -> str:
    decided = (
        len(result.both_keep)
        + len(result.both_exclude)
        + len(result.only_we_drop)
        + len(result.only_they_exclude)
    )
    lines = [
        f"{decided} records decided: both keep {len(result.both_keep)}, both leave out "
        f"{len(result.both_exclude)}, only we drop {len(result.only_we_drop)}, only the list "
        f"excludes {len(result.only_they_exclude)}",
    ]
    for instance_id, told in result.only_we_drop.items():
        lines.append(f"  dropped here, kept by the list: {instance_id}: {told}")
    for instance_id in result.only_they_exclude:
        lines.append(f"  excluded by the list, kept here: {instance_id}")
    if result.undecided:
        lines.append(
            f"  undecided (a fault of the machine, compared with nothing): "
            f"{', '.join(result.undecided)}"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, nargs="+", help="a build's output dir (one or two)")
    parser.add_argument("--exclusions", type=Path, help="an exclusion list, one id per line")
    args = parser.parse_args(argv)
    if len(args.dist) > 2:
        parser.error("give one build's output dir, or two to compare")
    try:
        decided = [from_dist(dist) for dist in args.dist]
        excluded = read_exclusions([args.exclusions]) if args.exclusions is not None else None
    except (OSError, ValueError, KeyError, ConfigError) as error:
        parser.error(str(error))
    if len(decided) == 2:
        names = [str(dist) for dist in args.dist]
        print(render_differences(differences(*decided), *names), end="")
        print(one_sided(*decided), end="")
    if excluded is not None:
        for dist, decisions in zip(args.dist, decided, strict=True):
            print(f"{dist} beside {args.exclusions}:")
            print(render_exclusions(against_exclusions(decisions, excluded)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
