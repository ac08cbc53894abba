"""Fidelity on real records: does validation reproduce the official FAIL_TO_PASS/PASS_TO_PASS?

Runs the project's own validation stage (source → validate, resumable through the result store)
on SWE-bench-format records whose repositories' histories are in ``--repos-dir`` and prints, per
repository, how many instances reproduce the official ``FAIL_TO_PASS`` exactly, how far
``PASS_TO_PASS`` agrees, and why the rest do not. ``--mode tuned`` uses the environment specs
(recipes/environments), ``--mode dated`` the dated default alone (an inferred spec, everything
resolved as of the environment commit's date, no pins), ``--mode both`` runs both. By default
one run per side without coverage (fidelity of the lists); ``--repetitions 3 --coverage`` is a
full validation as ``swt-builder build`` does it (flaky and coverage drops included), reported
under its own mode label (e.g. ``tuned+3x+cov``).

    .venv/bin/python -m benchmarks.fidelity --data /work/shared/data/swe-bench-dev-subset.jsonl \
        --repos-dir /work/.mirror --repo marshmallow-code/marshmallow --mode both
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from builder.core.config import DockerConfig, LimitsConfig, ValidationConfig
from builder.core.executor import Executor
from builder.core.files import atomic_write_text
from builder.core.gitutil import git
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.records import Candidate, Record, Verdict
from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from recipes.swe_bench import swe_bench_candidates
from validation.stage import ValidateStage


def normalize(test_id: str) -> str:
    """A test id as SWE-bench's log parser records it: cut at the first whitespace."""
    return test_id.split()[0] if test_id.split() else test_id


def find_mirror(repos_dir: Path, repo: str) -> Path | None:
    """The git dir of ``repo`` under ``repos_dir`` (owner+name/repo, owner__name.git, name)."""
    owner, name = repo.split("/")
    for candidate in (
        repos_dir / f"{owner}+{name}" / "repo",
        repos_dir / f"{owner}+{name}",
        repos_dir / f"{owner}__{name}.git",
        repos_dir / f"{owner}__{name}",
        repos_dir / name,
    ):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def recover_blobs(git_dir: Path, wheels: Path) -> int:
    """Write into ``git_dir`` every file of the wheels in ``wheels`` whose blob it lacks.

    A package's published wheels often carry the large data files a fetched history lacks
    (pvlib's SAM module library); identical bytes give the identical blob id.
    """
    listed = _original_git("rev-list", "--objects", "--all", "--missing=print", cwd=git_dir)
    missing = {line[1:].strip() for line in listed.splitlines() if line.startswith("?")}
    recovered = 0
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                data = archive.read(name)
                blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                if blob in missing:
                    subprocess.run(
                        ["git", "hash-object", "-w", "--stdin"], input=data, cwd=git_dir,
                        check=True, capture_output=True,
                    )  # fmt: skip
                    missing.discard(blob)
                    recovered += 1
    return recovered


def repair_history(git_dir: Path, commits: set[str]) -> dict[str, list[str]]:
    """Stub the blobs a fetched history lacks at ``commits`` so checkouts work; say which.

    Histories brought by the tool library may list their largest files without their content.
    A missing blob is replaced by an empty one in a replacement tree (``git replace``): commit
    ids stay the same, the checkout succeeds, and the stubbed paths are reported (a test that
    reads such a file fails, and the report says why).
    """
    empty = git("hash-object", "-w", "--stdin", cwd=git_dir, input_text="").strip()
    stubbed: dict[str, list[str]] = {}
    for commit in sorted(commits):
        listing = _original_git("ls-tree", "-r", commit, cwd=git_dir)
        entries = [line.split("\t", 1) for line in listing.splitlines()]
        shas = "\n".join(meta.split()[2] for meta, _ in entries) + "\n"
        checked = _original_git("cat-file", "--batch-check", cwd=git_dir, input_text=shas)
        missing = [
            path
            for (_, path), row in zip(entries, checked.splitlines(), strict=True)
            if row.endswith(" missing")
        ]
        for path in missing:
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            tree = _original_git("rev-parse", f"{commit}:{parent}", cwd=git_dir).strip()
            name = path.rsplit("/", 1)[-1]
            rows = []
            for line in _original_git("ls-tree", tree, cwd=git_dir).splitlines():
                meta, entry = line.split("\t", 1)
                mode, kind, sha = meta.split()
                rows.append(f"{mode} {kind} {empty if entry == name else sha}\t{entry}")
            fixed = git("mktree", "--missing", cwd=git_dir, input_text="\n".join(rows) + "\n")
            git("replace", "-f", tree, fixed.strip(), cwd=git_dir)
        if missing:
            stubbed[commit] = missing
    return stubbed


def _original_git(*args: str, cwd: Path, input_text: str | None = None) -> str:
    """git with replacements ignored: what the fetched history itself holds."""
    return git("--no-replace-objects", *args, cwd=cwd, input_text=input_text)


class _Verdicts(RejectedLog):
    """Keeps every drop verdict by instance id (and still collects the rejected rows)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[str, Verdict] = {}

    def add(self, record: Record | dict[str, Any], verdict: Verdict) -> None:
        super().add(record, verdict)
        instance_id = getattr(record, "instance_id", None) or dict(record).get("instance_id")
        self.by_id[str(instance_id)] = verdict


def _settings(mode: str, args: argparse.Namespace) -> ValidationConfig:
    return ValidationConfig(
        backend=args.backend,
        timeout_s=args.timeout,
        repetitions=args.repetitions,
        coverage=args.coverage,
        bundled_specs=mode == "tuned",
        spec_dirs=[str(d) for d in args.spec_dir] if mode == "tuned" else [],
        dated=True,
        packages=["pytest"],
        limits=LimitsConfig(),
    )


def evaluate(
    candidates: list[Candidate], mode: str, args: argparse.Namespace, repos: dict[str, str]
) -> list[dict[str, Any]]:
    """Validate ``candidates`` in ``mode`` and compare each with its official lists."""
    docker = DockerConfig(base_images=dict(args.base_image)) if args.base_image else None
    stage = ValidateStage(_settings(mode, args), args.work_dir, repos, docker)
    store = ResultStore(args.work_dir / "store")
    if args.only_stored:  # report what earlier (possibly interrupted) runs finished
        candidates = [c for c in candidates if store.get(stage.name, stage.key(c)) is not None]
    verdicts = _Verdicts()
    kept = {
        instance.instance_id: instance
        for instance in run_stage(
            stage,
            candidates,
            store=store,
            executor=Executor("threads", args.jobs),
            rejected=verdicts,
            stats=StageStats(stage.name),
            progress=_Progress(len(candidates), mode) if args.progress else None,
        )
    }
    rows = []
    for candidate in candidates:
        official_f2p = set(candidate.reference_fail_to_pass or ())
        official_p2p = set(candidate.reference_pass_to_pass or ())
        row: dict[str, Any] = {
            "instance_id": candidate.instance_id,
            "repo": candidate.repo,
            "version": candidate.version,
            "mode": _label(mode, args),
            "stubbed_files": args.stubs.get(candidate.base_commit, []),
        }
        instance = kept.get(candidate.instance_id)
        if instance is None:
            verdict = verdicts.by_id[candidate.instance_id]
            row.update(
                kept=False,
                reason=verdict.reason.value,
                evidence=dict(verdict.evidence),
                f2p_exact=False,
                p2p_exact=not official_p2p,
                p2p_jaccard=0.0 if official_p2p else 1.0,
            )
        else:
            f2p = {normalize(t) for t in instance.FAIL_TO_PASS}
            # ids cut at a space can merge parameters; SWE-bench's parser keeps one status each
            p2p = {normalize(t) for t in instance.PASS_TO_PASS} - f2p
            union = p2p | official_p2p
            row.update(
                kept=True,
                reason="",
                f2p_exact=f2p == official_f2p,
                f2p_missing=sorted(official_f2p - f2p),
                f2p_extra=sorted(f2p - official_f2p),
                why=_why_f2p_differs(
                    official_f2p - f2p,
                    f2p - official_f2p,
                    args.work_dir / "logs" / candidate.instance_id / stage.key(candidate)[:12],
                ),
                p2p_exact=p2p == official_p2p,
                p2p_missing=sorted(official_p2p - p2p),
                p2p_extra=sorted(p2p - official_p2p),
                p2p_jaccard=len(p2p & official_p2p) / len(union) if union else 1.0,
                golden_coverage=instance.golden_coverage,
                environment=instance.run_metadata.get("environment", ""),
                python=instance.run_metadata.get("python", ""),
                detected_version=instance.run_metadata.get("detected_version", ""),
            )
        rows.append(row)
    return rows


def _label(mode: str, args: argparse.Namespace) -> str:
    """The report's mode column: the spec mode, plus repetitions and coverage when not 1/off."""
    label = mode
    if args.repetitions > 1:
        label += f"+{args.repetitions}x"
    if args.coverage:
        label += "+cov"
    if args.backend != "local":
        label += f"+{args.backend}"
    return label


COLLECTION_ABORT = "official F→P has tests passing before (session stopped by a collection error)"
"""Why an official list can name tests that pass before the fix: run without
``--continue-on-collection-errors``, pytest stops the whole session when one touched test file
cannot be imported, so every test of every other file counts as failing before. By the
definition (a test fails on an error in *its* file) those tests are not F→P; ours are."""


def _why_f2p_differs(missing: set[str], extra: set[str], logs: Path) -> str:
    """A kept record whose F→P differs: the collection-abort artifact when that explains all."""
    listing = logs / "runs.jsonl"
    if not missing or extra or not listing.is_file():
        return ""
    runs = [json.loads(line) for line in listing.read_text().splitlines()]
    before = [run for run in runs if run["suite"] == "golden" and run["side"] == "before"]
    after = [run for run in runs if run["suite"] == "golden" and run["side"] == "after"]
    aborted = all(run["collection_errors"] for run in before)
    passing = all(
        {normalize(t) for t, status in run["tests"].items() if status == "passed"} >= missing
        for run in before + after
    )
    return COLLECTION_ABORT if aborted and passing else ""


class _Progress:
    """A one-line progress print per finished candidate (for logs of long background runs)."""

    def __init__(self, total: int, mode: str) -> None:
        self.total, self.mode, self.done, self.started = total, mode, 0, time.monotonic()

    def reset(self, total: int) -> None:
        self.total = total

    def update(self, count: int) -> None:
        self.done += count
        elapsed = time.monotonic() - self.started
        print(f"[{self.mode}] {self.done}/{self.total} ({elapsed:.0f}s)", flush=True)


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (repo, mode): records, kept, exact F→P, exact P→P, mean P→P Jaccard, reasons."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for row in rows:
        groups[(row["repo"], row["mode"])].append(row)
    table = []
    for (repo, mode), items in sorted(groups.items()):
        reasons = collections.Counter(
            row["reason"] if not row["kept"] else (row.get("why") or "kept, F→P differs")
            for row in items
            if not row["f2p_exact"]
        )
        artifacts = sum(row.get("why") == COLLECTION_ABORT for row in items)
        table.append(
            {
                "repo": repo,
                "mode": mode,
                "records": len(items),
                "kept": sum(row["kept"] for row in items),
                "f2p_exact": sum(row["f2p_exact"] for row in items),
                "f2p_as_defined": sum(row["f2p_exact"] for row in items) + artifacts,
                "p2p_exact": sum(row["p2p_exact"] for row in items),
                "p2p_jaccard": sum(row["p2p_jaccard"] for row in items) / len(items),
                "golden_coverage": _mean(row.get("golden_coverage") for row in items),
                "not_exact": dict(reasons),
            }
        )
    return table


def _mean(values: Any) -> float | None:
    measured = [value for value in values if value is not None]
    return sum(measured) / len(measured) if measured else None


def print_table(table: list[dict[str, Any]]) -> None:
    header = f"{'repo':32} {'mode':14} {'records':>7} {'kept':>5} {'F→P exact':>10} "
    header += f"{'as defined':>11} {'P→P exact':>10} {'P→P J':>6} {'ΔC':>5}  not exact (why)"
    print(header)
    for row in table:
        share = 100 * row["f2p_exact"] / row["records"]
        defined = 100 * row["f2p_as_defined"] / row["records"]
        mean = row.get("golden_coverage")
        coverage = "-" if mean is None else f"{mean:.2f}"
        why = ", ".join(f"{reason}: {n}" for reason, n in sorted(row["not_exact"].items()))
        print(
            f"{row['repo']:32} {row['mode']:14} {row['records']:7d} {row['kept']:5d} "
            f"{row['f2p_exact']:4d} ({share:3.0f}%) {row['f2p_as_defined']:4d} ({defined:3.0f}%) "
            f"{row['p2p_exact']:10d} {row['p2p_jaccard']:6.3f} {coverage:>5}  {why or '-'}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="SWE-bench-format JSONL")
    parser.add_argument("--repos-dir", type=Path, required=True, help="dir of git histories")
    parser.add_argument("--repo", action="append", default=[], help="only this repo (repeat)")
    parser.add_argument("--instance", action="append", default=[], help="only this instance")
    parser.add_argument("--mode", choices=("tuned", "dated", "both"), default="tuned")
    parser.add_argument("--work-dir", type=Path, default=Path(".swt-work/fidelity"))
    parser.add_argument("--spec-dir", type=Path, action="append", default=[])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repetitions", type=int, default=1, help="runs per side")
    parser.add_argument("--backend", choices=("local", "docker"), default="local")
    parser.add_argument(
        "--base-image",
        nargs=2,
        action="append",
        metavar=("PYTHON", "IMAGE"),
        help="docker: your own base image for a Python version (repeat)",
    )
    parser.add_argument(
        "--coverage", action="store_true", help="measure ΔC too (a full validation, as built)"
    )
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--progress", action="store_true", help="print a line per candidate")
    parser.add_argument(
        "--only-stored", action="store_true", help="only records with a stored result"
    )
    parser.add_argument(
        "--wheels", type=Path, help="dir of the packages' wheels, to recover missing blobs"
    )
    args = parser.parse_args(argv)
    args.work_dir = args.work_dir.resolve()

    candidates = [
        outcome.output
        for _, outcome in swe_bench_candidates(str(args.data))
        if outcome.verdict.kept
        and (not args.repo or outcome.output.repo in args.repo)
        and (not args.instance or outcome.output.instance_id in args.instance)
    ]
    repos: dict[str, str] = {}
    missing = set()
    for repo in sorted({c.repo for c in candidates}):
        mirror = find_mirror(args.repos_dir, repo)
        if mirror is None:
            missing.add(repo)
        else:
            repos[repo] = str(mirror)
    for repo in sorted(missing):
        print(f"skipping {repo}: no history under {args.repos_dir}", file=sys.stderr)
    candidates = [c for c in candidates if c.repo in repos]
    cache = RepoCache(args.work_dir / "repos", repos)
    stubs: dict[str, list[str]] = {}
    for repo in sorted(repos):
        mine = [c for c in candidates if c.repo == repo]
        git_dir = cache.mirror(repo, mine[0].base_commit)
        if args.wheels:
            recovered = recover_blobs(git_dir, args.wheels)
            print(f"{repo}: {recovered} missing blobs recovered from {args.wheels}")
        commits = {c.base_commit for c in mine} | {
            c.environment_setup_commit for c in mine if c.environment_setup_commit
        }
        for commit, paths in repair_history(git_dir, commits).items():
            print(f"{repo}@{commit[:12]}: content missing, stubbed: {', '.join(paths)}")
            stubs[commit] = paths
    args.stubs = stubs
    modes = ("tuned", "dated") if args.mode == "both" else (args.mode,)
    rows = []
    for mode in modes:
        rows += evaluate(candidates, mode, args, repos)
    report = args.work_dir / "fidelity.json"
    if report.is_file():  # earlier runs (other repos or modes) stay in the report
        fresh = {(row["instance_id"], row["mode"]) for row in rows}
        earlier = json.loads(report.read_text())["rows"]
        rows = [r for r in earlier if (r["instance_id"], r["mode"]) not in fresh] + rows
    table = summarize(rows)
    atomic_write_text(report, json.dumps({"table": table, "rows": rows}, indent=1) + "\n")
    print_table(table)
    print(f"details: {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
