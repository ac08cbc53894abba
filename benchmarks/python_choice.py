"""Which rule for choosing a Python among the ones a project's CI tested agrees best with the
Python the reference's runs used?

For each record (SWE-bench format) the environment commit is found as a validation with no spec
finds it; at that commit the project's CI-tested Pythons (tox envlist, GitHub Actions, Travis,
Azure Pipelines, AppVeyor) and classifiers are read, and each rule below picks one. The pick is
compared with the record's reference Python, read from ``--reference-pythons`` (a JSON object
``{instance_id: "3.9"}`` or ``{instance_id: {"python": "3.9"}}``): SWE-bench's per-instance
``environment.yml`` (its ``python=`` line) or its harness's per-version specs give it.

    .venv/bin/python -m benchmarks.python_choice --data swe-bench-verified-nonlite.jsonl \
        --data swe-bench-dev-subset.jsonl --repos-dir DIR --reference-pythons FILE.json

Only the choice is measured here (no environment is built); ``benchmarks.fidelity`` measures
what a choice does to the lists.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import get_args

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from benchmarks.fidelity import find_mirror
from builder.core.config import PythonChoice
from validation.environments.inference import requires_python_at
from validation.environments.interpreters import PYTHON_RELEASES, era_python
from validation.environments.project_pythons import (
    SUPPORTED,
    TESTED,
    ProjectPython,
    project_python,
    project_pythons,
)
from validation.environments.resolution import environment_commit
from validation.environments.specs import RepoSpec
from validation.environments.versioning import commit_date

AVAILABLE = tuple(f"3.{minor}" for minor in range(6, 14))
"""The Pythons a build may choose from (the ones this toolkit runs environments on)."""


def _usable(pythons: Iterable[ProjectPython], date: dt.date, requires: str) -> dict[str, list]:
    """Tested and supported versions released by ``date``, available, allowed by ``requires``."""
    try:
        allowed = SpecifierSet(requires or "")
    except InvalidSpecifier:
        allowed = SpecifierSet()
    groups: dict[str, list[str]] = {"tested": [], "supported": []}
    for p in pythons:
        if (
            p.version in AVAILABLE
            and p.version in PYTHON_RELEASES
            and PYTHON_RELEASES[p.version] <= date
            and allowed.contains(f"{p.version}.0")
        ):
            key = "tested" if p.source in TESTED else "supported"
            if p.version not in groups[key]:
                groups[key].append(p.version)
    for key in groups:
        groups[key].sort(key=Version)
    return groups


def _choice(choice: str) -> Callable:
    """What validation does with ``validation.python_choice = choice``: ``project_python``,
    else the era's Python."""

    def rule(pythons: list[ProjectPython], date: dt.date, requires: str) -> str | None:
        named = project_python(
            pythons, AVAILABLE, date=date, requires_python=requires, choice=choice
        )
        if named is not None:
            return named.version
        return era_python(date, AVAILABLE, requires_python=requires)

    return rule


def _newest_aged(days: int) -> Callable:
    """The newest tested Python released at least ``days`` before the date (else the oldest)."""

    def rule(pythons: list[ProjectPython], date: dt.date, requires: str) -> str | None:
        groups = _usable(pythons, date, requires)
        for key in ("tested", "supported"):
            named = groups[key]
            if named:
                aged = [v for v in named if PYTHON_RELEASES[v] <= date - dt.timedelta(days=days)]
                return (aged or named[:1])[-1]
        return era_python(date, AVAILABLE, requires_python=requires)

    return rule


RULES: dict[str, Callable] = {
    **{f"{choice} tested": _choice(choice) for choice in get_args(PythonChoice)},
    "newest tested a year old": _newest_aged(365),
    "newest tested two years old": _newest_aged(730),
    "era's (no CI read)": lambda pythons, date, requires: era_python(
        date, AVAILABLE, requires_python=requires
    ),
}


def reference_pythons(path: Path) -> dict[str, str]:
    """``{instance_id: "3.x"}`` from the file (values a version or an object with ``python``)."""
    raw = json.loads(path.read_text())
    found = {}
    for instance_id, value in raw.items():
        version = value.get("python") if isinstance(value, dict) else value
        if version:
            found[instance_id] = ".".join(str(version).split(".")[:2])
    return found


def records(paths: Iterable[Path]) -> list[dict]:
    rows = []
    for path in paths:
        with path.open() as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def measure(rows: list[dict], repos_dir: Path, reference: dict[str, str]) -> dict:
    """Per record: its environment commit's date, tested Pythons, each rule's pick."""
    out = {}
    missing = set()
    for row in rows:
        repo, instance_id = row["repo"], row["instance_id"]
        if instance_id not in reference:
            continue
        mirror = find_mirror(repos_dir, repo)
        if mirror is None:
            missing.add(repo)
            continue
        _, _, _, commit = environment_commit(
            RepoSpec(repo=repo),
            mirror,
            row["base_commit"],
            row.get("version", ""),
            row.get("environment_setup_commit", ""),
        )
        date = commit_date(mirror, commit).date()
        pythons = project_pythons(mirror, commit)
        requires = requires_python_at(mirror, commit)
        out[instance_id] = {
            "repo": repo,
            "reference": reference[instance_id],
            "date": date.isoformat(),
            "tested": sorted({p.version for p in pythons if p.source in TESTED}, key=Version),
            "supported": sorted({p.version for p in pythons if p.source == SUPPORTED}, key=Version),
            "picks": {name: rule(pythons, date, requires) for name, rule in RULES.items()},
        }
    for repo in sorted(missing):
        print(f"skipping {repo}: no history under {repos_dir}", file=sys.stderr)
    return out


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def table(results: dict) -> str:
    """Markdown: per repository and overall, how many records each rule gives the reference's
    Python (the reference's Python among the tested ones at all is the ceiling), then per rule
    over all records: exact, within one minor version, and the mean distance in minor versions."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for result in results.values():
        by_repo[result["repo"]].append(result)
    names = list(RULES)
    lines = [
        "| repository | records | reference tested | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    groups = sorted(by_repo.items()) + [("all", list(results.values()))]
    for repo, rows in groups:
        tested = sum(r["reference"] in r["tested"] for r in rows)
        agree = [sum(r["picks"][n] == r["reference"] for r in rows) for n in names]
        lines.append(
            f"| {repo.split('/')[-1]} | {len(rows)} | {tested} | "
            + " | ".join(str(a) for a in agree)
            + " |"
        )
    lines += ["", "| rule | exact | within one minor | mean distance (minors) |"]
    lines += ["|---|---|---|---|"]
    rows = list(results.values())
    for name in names:
        distance = [
            abs(_minor(r["picks"][name]) - _minor(r["reference"])) if r["picks"][name] else None
            for r in rows
        ]
        known = [d for d in distance if d is not None]
        mean = sum(known) / len(known) if known else float("nan")
        lines.append(
            f"| {name} | {sum(d == 0 for d in known)} | {sum(d <= 1 for d in known)} | {mean:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--reference-pythons", type=Path, required=True)
    parser.add_argument("--json", type=Path, help="write the per-record picks here")
    args = parser.parse_args(argv)
    results = measure(records(args.data), args.repos_dir, reference_pythons(args.reference_pythons))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(table(results))
    print()
    counts = Counter(r["reference"] for r in results.values())
    print("reference Pythons: " + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
