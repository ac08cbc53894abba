"""The comparison loop: totals per repository, the JSON report rewritten atomically as it goes."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.compare import causes, decisions
from builder.compare.inputs import Drop, Reference
from builder.compare.instance import causes_of, compare_labels
from builder.core.files import atomic_write_text
from builder.core.records import Instance

ALL = "all"
"""The row of the totals over every repository."""
WRITE_EVERY = 50
"""How many instances are compared between two rewrites of the JSON report."""


@dataclass
class Totals:
    """Counters of one repository (or all): records, kept, exact lists, P→P Jaccard sum."""

    records: int = 0
    kept: int = 0
    exact_fail_to_pass: int = 0
    exact_pass_to_pass: int = 0
    fail_to_pass_as_defined: int = 0
    """Kept instances whose FAIL_TO_PASS differences (if any) are all :data:`causes.AS_DEFINED`."""
    fail_to_pass_environment: int = 0
    """Kept instances whose FAIL_TO_PASS differs by at least one :data:`causes.ENVIRONMENT`
    difference and otherwise only by artifacts (none unexplained)."""
    with_unexplained: int = 0
    """Kept instances with at least one difference (either list) that has no named cause."""
    jaccard_sum: float = 0.0
    jaccard_as_defined_sum: float = 0.0
    """Sum of the P→P Jaccard without the ids whose difference is :data:`causes.AS_DEFINED`."""
    causes: collections.Counter = field(default_factory=collections.Counter)
    decisions: collections.Counter = field(default_factory=collections.Counter)
    our_reasons: collections.Counter = field(default_factory=collections.Counter)
    """Our drop reasons of the instances we drop and they keep."""

    def add(self, row: dict[str, Any]) -> None:
        self.records += row["in_reference"]
        if "labels" in row:
            labels = row["labels"]
            self.kept += 1
            self.exact_fail_to_pass += labels["FAIL_TO_PASS"]["exact"]
            self.exact_pass_to_pass += labels["PASS_TO_PASS"]["exact"]
            self.jaccard_sum += labels["PASS_TO_PASS"]["jaccard"]
            self.jaccard_as_defined_sum += labels["PASS_TO_PASS"]["jaccard_as_defined"]
            found = {
                cause
                for side in ("missing", "extra")
                for item in labels["FAIL_TO_PASS"][side]
                for cause in causes_of(item)
            }
            self.fail_to_pass_as_defined += found <= set(causes.AS_DEFINED)
            self.fail_to_pass_environment += bool(found & set(causes.ENVIRONMENT)) and (
                causes.UNEXPLAINED not in found
            )
            self.with_unexplained += any(
                item["cause"] == causes.UNEXPLAINED
                for name in ("FAIL_TO_PASS", "PASS_TO_PASS")
                for side in ("missing", "extra")
                for item in labels[name][side]
            )
            for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                for side in ("missing", "extra"):
                    self.causes.update(item["cause"] for item in labels[name][side])
        if "decision" in row:
            self.decisions[row["decision"]] += 1
            if row["decision"] == decisions.WE_DROP_THEY_KEEP:
                self.our_reasons[row["ours"]["reason"]] += 1

    def _mean(self, total: float) -> float | None:
        """``total`` over the kept instances (None: none kept)."""
        return total / self.kept if self.kept else None

    def summary(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "kept": self.kept,
            "exact_fail_to_pass": self.exact_fail_to_pass,
            "exact_pass_to_pass": self.exact_pass_to_pass,
            "fail_to_pass_as_defined": self.fail_to_pass_as_defined,
            "fail_to_pass_environment_differences": self.fail_to_pass_environment,
            "with_unexplained_differences": self.with_unexplained,
            "mean_pass_to_pass_jaccard": self._mean(self.jaccard_sum),
            "mean_pass_to_pass_jaccard_as_defined": self._mean(self.jaccard_as_defined_sum),
            "causes": {cause: self.causes[cause] for cause in causes.CAUSES},
            "decisions": dict(sorted(self.decisions.items())),
            "we_drop_they_keep_reasons": dict(sorted(self.our_reasons.items())),
        }


def compare_row(
    instance_id: str,
    reference: Reference | None,
    ours: Instance | None,
    drop: Drop | None,
    excluded: set[str] | None,
    collection_errors: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """One instance's line of the report; ``excluded`` None: no exclusion list was given;
    ``collection_errors``: the files our runs could not collect, by side, when known."""
    repo = (
        reference.repo
        if reference
        else ours.repo
        if ours
        else instance_id.rpartition("-")[0].replace("__", "/", 1)
    )
    row: dict[str, Any] = {"instance_id": instance_id, "repo": repo}
    row["in_reference"] = reference is not None
    if ours is not None:
        row["ours"] = {"kept": True}
    elif drop is not None:
        row["ours"] = {"kept": False, "stage": drop.stage, "reason": drop.reason}
    else:
        row["ours"] = None
    if excluded is not None:
        row["decision"] = decisions.decision(
            ours is not None, drop is not None, instance_id in excluded
        )
    if reference is not None and ours is not None:
        row["labels"] = compare_labels(
            ours,
            {"FAIL_TO_PASS": reference.FAIL_TO_PASS, "PASS_TO_PASS": reference.PASS_TO_PASS},
            collection_errors,
        )
    return row


def recorded_collection_errors(instance: Instance | None) -> dict[str, list[str]] | None:
    """The files our golden runs could not collect, by side, as validation recorded them in
    the instance's ``run_metadata`` (``collection_errors``); None when it recorded none."""
    if instance is None or not instance.run_metadata.get("collection_errors"):
        return None
    try:
        recorded = json.loads(instance.run_metadata["collection_errors"])
    except ValueError:
        return None
    if not isinstance(recorded, dict):
        return None
    return {str(side): [str(name) for name in names] for side, names in recorded.items()}


def compare(
    references: list[Reference],
    ours: dict[str, Instance],
    drops: dict[str, Drop],
    excluded: set[str] | None,
    out: Path | None,
    on_row: Callable[[dict[str, Any]], None] = lambda row: None,
    collection_errors: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
) -> dict[str, Totals]:
    """Compare every reference instance (then excluded ids the reference lacks); totals by
    repository and ``ALL``. ``out`` is rewritten every ``WRITE_EVERY`` rows and at the end,
    also when interrupted, with ``complete`` saying whether every instance was compared.
    ``collection_errors`` (by instance id, then side) are our runs' uncollectable files, when
    known: evidence of a ``collection_abort``."""
    by_id = {reference.instance_id: reference for reference in references}
    ids = [*by_id, *sorted((excluded or set()) - by_id.keys())]
    totals: dict[str, Totals] = collections.defaultdict(Totals)
    rows: list[dict[str, Any]] = []
    complete = False
    try:
        for instance_id in ids:
            row = compare_row(
                instance_id,
                by_id.get(instance_id),
                ours.get(instance_id),
                drops.get(instance_id),
                excluded,
                (collection_errors or {}).get(instance_id)
                or recorded_collection_errors(ours.get(instance_id)),
            )
            rows.append(row)
            totals[row["repo"]].add(row)
            totals[ALL].add(row)
            on_row(row)
            if out is not None and len(rows) % WRITE_EVERY == 0:
                write_report(out, totals, rows, complete=False)
        complete = True
    finally:
        if out is not None:
            write_report(out, totals, rows, complete=complete)
    return dict(totals)


def write_report(
    out: Path, totals: dict[str, Totals], rows: list[dict[str, Any]], complete: bool
) -> None:
    """The whole report as one JSON file, written atomically."""
    report = {
        "complete": complete,
        "compared": len(rows),
        "repositories": {repo: totals[repo].summary() for repo in sorted(totals)},
        "instances": rows,
    }
    atomic_write_text(out, json.dumps(report, indent=1, sort_keys=True) + "\n")
