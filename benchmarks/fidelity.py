"""Fidelity on real records: does validation reproduce the official FAIL_TO_PASS/PASS_TO_PASS?

Runs the project's own validation stage (source → validate, resumable through the result store)
on SWE-bench-format records whose repositories' histories are in ``--repos-dir`` (one
``owner+name`` folder each, the repositories of their submodules too) and compares
the outcome with the official lists through ``swt-builder compare``'s code
(``builder/compare``): per repository, how many instances reproduce the official
``FAIL_TO_PASS`` and ``PASS_TO_PASS`` exactly, the mean ``PASS_TO_PASS`` Jaccard, and the named
cause of every differing id (with our runs' collection errors as evidence of a
``collection_abort``). ``--mode tuned`` uses the environment specs (recipes/environments),
``--mode dated`` the dated default alone (an inferred spec, everything resolved as of the
environment commit's date, no pins), ``--mode both`` runs both. ``--mode reference`` builds
each record that has a file in ``--reference-dir`` (SWE-bench's per-instance
``environment.yml`` files, or a SWE-bench checkout) in that environment, the others as
``tuned`` (``validation.reference_environments``). By default one run per side
without coverage (fidelity of the lists); ``--repetitions 3 --coverage`` is a full validation as
``swt-builder build`` does it (flaky and coverage drops included), reported under its own mode
label (e.g. ``tuned+3x+cov``). ``--rebuild-recipes`` (or ``--recipe FILE``, repeatable) adds,
after each quick run, one run per SWT-Bench rebuild recipe (``recipes/swt-bench/*.toml``) with
that recipe's own ``[validation]`` settings (its repetitions, coverage, timeouts), labelled by
the recipe (``tuned+lite``): what a rebuild by that recipe keeps and drops, and every record
whose decision or lists differ from the quick run's (``benchmarks/decisions.py``). Recipes with
the same settings share their results through the store. Each run's decisions are written to
``WORK_DIR/decisions-<label>.json``; ``--exclusions FILE`` (SWT-Bench's
``dataset/filter_cases_verified.txt``) puts each run's decisions beside that list.

    .venv/bin/python -m benchmarks.fidelity --data /work/shared/data/swe-bench-dev-subset.jsonl \
        --repos-dir /work/.mirror --repo marshmallow-code/marshmallow --mode both
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, get_args

from benchmarks import decisions as decided
from builder.build import reference_line
from builder.compare.inputs import Drop, Reference
from builder.compare.run import Totals, compare
from builder.compare.table import aligned, render
from builder.core.config import (
    DockerConfig,
    LimitsConfig,
    PythonChoice,
    ValidationConfig,
    load_config,
)
from builder.core.executor import Executor
from builder.core.mirror_repair import repair
from builder.core.pipeline import RejectedLog, StageStats, run_stage
from builder.core.records import Candidate, Record, RunResult, Verdict, read_jsonl
from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from recipes.swe_bench import swe_bench_candidates
from validation.environments.environment import COMPLETE
from validation.stage import ValidateStage


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


def other_histories(repos_dir: Path) -> dict[str, str]:
    """Every ``owner+name`` history under ``repos_dir`` by repository name: the submodules of a
    measured repository (astropy's ``astropy_helpers``) are checked out from them."""
    found: dict[str, str] = {}
    for entry in sorted(repos_dir.glob("*+*")):
        owner, _, name = entry.name.partition("+")
        mirror = find_mirror(repos_dir, f"{owner}/{name}")
        if mirror is not None:
            found[f"{owner}/{name}"] = str(mirror)
    return found


class _Verdicts(RejectedLog):
    """Keeps every drop verdict by instance id (and still collects the rejected rows)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[str, Verdict] = {}

    def add(self, record: Record | dict[str, Any], verdict: Verdict) -> None:
        super().add(record, verdict)
        instance_id = getattr(record, "instance_id", None) or dict(record).get("instance_id")
        self.by_id[str(instance_id)] = verdict


REBUILD_RECIPES = Path(__file__).resolve().parent.parent / "recipes" / "swt-bench"
"""The SWT-Bench rebuild recipes ``--rebuild-recipes`` measures, each with its own settings."""


def rebuild_recipes() -> list[Path]:
    """The rebuild recipes (``recipes/swt-bench/*.toml``), by name."""
    return sorted(REBUILD_RECIPES.glob("*.toml"))


def runs(modes: tuple[str, ...], recipes: list[Path]) -> list[tuple[str, Path | None]]:
    """Each spec mode once in the quick mode (no recipe: the command line's settings), then
    once per recipe with that recipe's own validation settings."""
    return [(mode, recipe) for mode in modes for recipe in (None, *recipes)]


def settings_for(
    mode: str, args: argparse.Namespace, recipe: Path | None = None
) -> ValidationConfig:
    """The quick mode's settings from the command line; a recipe's are its own ``[validation]``
    (repetitions, coverage, timeouts, limits, …), with the spec mode's choice of specs and the
    command line's backend."""
    specs = mode in ("tuned", "reference")
    reference = str(args.reference_dir) if mode == "reference" else ""
    if recipe is not None:
        own = load_config(recipe).validation
        return own.model_copy(
            update={
                "backend": args.backend,
                "bundled_specs": specs,
                "spec_dirs": [str(d) for d in args.spec_dir] if specs else [],
                "spec_files": own.spec_files if specs else [],
                "dated": True,
                "resolve_as_of": args.resolve_as_of or own.resolve_as_of,
                "python_choice": args.python_choice or own.python_choice,
                "reference_environments": reference,
                **_repair_settings(args),
            }
        )
    return ValidationConfig(
        backend=args.backend,
        timeout_s=args.timeout,
        repetitions=args.repetitions,
        coverage=args.coverage,
        bundled_specs=specs,
        spec_dirs=[str(d) for d in args.spec_dir] if specs else [],
        dated=True,
        resolve_as_of=args.resolve_as_of,
        **({"python_choice": args.python_choice} if args.python_choice else {}),
        reference_environments=reference,
        packages=["pytest"],
        limits=LimitsConfig(),
        **_repair_settings(args),
    )


def _repair_settings(args: argparse.Namespace) -> dict[str, Any]:
    """A mirror's missing content: recovered from ``--wheels``, the rest stubbed and listed in
    each record's ``run_metadata.stubbed_files`` (the histories the tool library brings lack
    some large files; the measurement takes them as the benchmark found them)."""
    wheels = getattr(args, "wheels", None)
    return {"repair_from": [str(wheels)] if wheels else [], "stub_missing": True}


def evaluate(
    candidates: list[Candidate],
    mode: str,
    args: argparse.Namespace,
    repos: dict[str, str],
    recipe: Path | None = None,
) -> dict[str, Totals]:
    """Validate ``candidates`` in ``mode`` and compare the outcome with their official lists
    (``builder.compare``): the report goes to ``WORK_DIR/fidelity-<label>.json``, the drops with
    their evidence to ``WORK_DIR/rejected-<label>/``; returns the totals per repository."""
    docker = DockerConfig(base_images=dict(args.base_image)) if args.base_image else None
    stage = ValidateStage(settings_for(mode, args, recipe), args.work_dir, repos, docker)
    store = ResultStore(args.work_dir / "store")
    if args.only_stored:  # report what earlier (possibly interrupted) runs finished
        candidates = [c for c in candidates if store.get(stage.name, stage.key(c)) is not None]
    verdicts = _Verdicts()
    label = run_label(mode, args, recipe)
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
    verdicts.write(args.work_dir / f"rejected-{label}", [stage.name])
    decided.save(
        args.work_dir / f"decisions-{label}.json",
        {
            **{
                instance_id: decided.dropped(verdict.reason.value, verdict.evidence)
                for instance_id, verdict in verdicts.by_id.items()
                if verdict.reason is not None
            },
            **{
                instance_id: decided.kept(instance.FAIL_TO_PASS, instance.PASS_TO_PASS)
                for instance_id, instance in kept.items()
            },
        },
    )
    if mode == "reference":
        print(reference_line(list(kept.values())))
    references = [
        Reference(
            candidate.instance_id,
            candidate.repo,
            candidate.reference_fail_to_pass or (),
            candidate.reference_pass_to_pass or (),
        )
        for candidate in candidates
    ]
    drops = {
        instance_id: Drop(verdict.stage, verdict.reason.value)
        for instance_id, verdict in verdicts.by_id.items()
        if verdict.reason is not None
    }
    log_dirs = {  # each record's log folder (``logs/<id>/<key[:12]>``)
        c.instance_id: args.work_dir / "logs" / c.instance_id / stage.key(c)[:12]
        for c in candidates
    }
    time_spent = machine_time(
        [(c.repo, log_dirs[c.instance_id]) for c in candidates],
        args.work_dir / "envs",
    )
    (args.work_dir / f"fidelity-{label}-time.json").write_text(
        json.dumps(time_spent, indent=1, sort_keys=True)
    )
    print(f"machine time ({label}):\n{render_time(time_spent)}", end="")
    errors = {
        candidate.instance_id: our_collection_errors(log_dirs[candidate.instance_id])
        for candidate in candidates
        if candidate.instance_id in kept
    }
    return compare(
        references,
        kept,
        drops,
        None,
        args.work_dir / f"fidelity-{label}.json",
        collection_errors=errors,
    )


_NO_TIME = {"validation_s": 0.0, "environments": 0, "environment_s": 0.0}
# An environment whose build ended up to this long before the first validation began was
# built by this run (a record's environment is built before its log folder is written).
_BUILD_SLACK_S = 600


def machine_time(records: list[tuple[str, Path]], envs: Path) -> dict[str, dict]:
    """Per repository, the machine time its records took, read from the run's files:
    ``validation_s``, each record's (``records``: its repo and log folder) from the first file
    of its log folder to the last, the environment build before it excluded; and
    ``environments``/``environment_s``, the environments (under ``envs``) of the repository
    built while those validations ran (from before the first began to the last's end: a later
    run's in the same work dir, another setting's, is not theirs), each from its lock file to
    its build log's last write (an environment an earlier run built is not counted again; one whose
    build failed has no record of its repository and is not counted). With ``--jobs N`` the
    clock time is about 1/N of the sum."""
    times: dict[str, dict] = {}
    started = ended = None
    for repo, logs in records:
        stamps = [entry.stat().st_mtime for entry in logs.iterdir()] if logs.is_dir() else []
        mine = times.setdefault(repo, dict(_NO_TIME))
        if stamps:
            mine["validation_s"] += max(stamps) - min(stamps)
            started = min(stamps) if started is None else min(started, min(stamps))
            ended = max(stamps) if ended is None else max(ended, max(stamps))
    for record in sorted(envs.glob(f"*/{COMPLETE}")) if started is not None else ():
        key = record.parent.name
        log, lock = envs / f"{key}.build.log", envs / f"{key}.lock"
        try:
            repo = str(json.loads(record.read_text()).get("label", "")).partition("@")[0]
            built, begun = log.stat().st_mtime, lock.stat().st_mtime
        except (OSError, ValueError):
            continue
        if repo in times and started - _BUILD_SLACK_S <= built and begun <= ended:
            times[repo]["environments"] += 1
            times[repo]["environment_s"] += max(0.0, built - begun)
    return times


def render_time(times: dict[str, dict]) -> str:
    """The machine-time table: minutes of validation and of environment builds per repo."""
    rows = [("repository", "validation min", "environments built", "building min")]
    total = dict(_NO_TIME)
    for repo in sorted(times):
        entry = times[repo]
        for field in total:
            total[field] += entry[field]
        rows.append(_time_row(repo.split("/")[-1], entry))
    rows.append(_time_row("all", total))
    return "".join(line + "\n" for line in aligned(rows))


def _time_row(name: str, entry: dict) -> tuple[str, str, str, str]:
    return (
        name,
        f"{entry['validation_s'] / 60:.1f}",
        str(entry["environments"]),
        f"{entry['environment_s'] / 60:.1f}",
    )


def our_collection_errors(logs: Path) -> dict[str, list[str]]:
    """The files the golden runs of one validation could not collect, by side, from its
    ``runs.jsonl`` (none when there is no such file)."""
    listing = logs / "runs.jsonl"
    found: dict[str, set[str]] = {"before": set(), "after": set()}
    if listing.is_file():
        for run in read_jsonl(listing, RunResult):
            if run.suite == "golden":
                found[run.side].update(run.collection_errors)
    return {side: sorted(files) for side, files in found.items()}


def run_label(mode: str, args: argparse.Namespace, recipe: Path | None = None) -> str:
    """The report's mode label: the spec mode, plus the recipe's name for a recipe's run, else
    repetitions and coverage when not 1/off; the resolution date when given, the backend when
    not local."""
    label = mode
    if recipe is not None:
        label += f"+{recipe.stem}"
    else:
        if args.repetitions > 1:
            label += f"+{args.repetitions}x"
        if args.coverage:
            label += "+cov"
    if args.resolve_as_of:
        label += f"+asof{args.resolve_as_of}"
    if args.python_choice:
        label += f"+py-{args.python_choice}"
    if args.backend != "local":
        label += f"+{args.backend}"
    return label


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


def quick_settings(mode: str, reference_dir: Path | None = None) -> ValidationConfig:
    """The quick mode's settings as this benchmark's command line defaults give them (one
    run per side, no coverage, the local backend)."""
    args = _parser().parse_args(["--data", "", "--repos-dir", ""])
    args.reference_dir = reference_dir
    return settings_for(mode, args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="SWE-bench-format JSONL")
    parser.add_argument("--repos-dir", type=Path, required=True, help="dir of git histories")
    parser.add_argument("--repo", action="append", default=[], help="only this repo (repeat)")
    parser.add_argument("--instance", action="append", default=[], help="only this instance")
    parser.add_argument("--mode", choices=("tuned", "dated", "both", "reference"), default="tuned")
    parser.add_argument(
        "--reference-dir",
        type=Path,
        help="--mode reference: the per-instance environment.yml files (or a SWE-bench checkout)",
    )
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
    parser.add_argument(
        "--resolve-as-of",
        default="",
        metavar="YYYY-MM-DD",
        help="resolve what is not pinned as of this date (validation.resolve_as_of)",
    )
    parser.add_argument(
        "--python-choice",
        choices=get_args(PythonChoice),
        help="which CI-tested Python a spec without one takes (validation.python_choice)",
    )
    parser.add_argument(
        "--recipe",
        type=Path,
        action="append",
        default=[],
        help="also run with this recipe's own validation settings (repeat)",
    )
    parser.add_argument(
        "--rebuild-recipes",
        action="store_true",
        help="also run with each of recipes/swt-bench/*.toml's own settings",
    )
    parser.add_argument("--progress", action="store_true", help="print a line per candidate")
    parser.add_argument(
        "--only-stored", action="store_true", help="only records with a stored result"
    )
    parser.add_argument(
        "--wheels", type=Path, help="dir of the packages' wheels, to recover missing blobs"
    )
    parser.add_argument(
        "--exclusions",
        type=Path,
        help="an exclusion list (one id per line; SWT-Bench's filter_cases_verified.txt): "
        "each run's decisions beside it",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    args.work_dir = args.work_dir.resolve()
    if args.mode == "reference" and args.reference_dir is None:
        parser.error("--mode reference needs --reference-dir")
    if args.reference_dir is not None:
        args.reference_dir = args.reference_dir.resolve()
    if args.exclusions is not None and not args.exclusions.is_file():
        parser.error(f"--exclusions {args.exclusions}: no such file")

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
    measured = sorted(repos)
    repos = {**other_histories(args.repos_dir), **repos}  # submodules' repositories too
    cache = RepoCache(args.work_dir / "repos", repos)
    for repo in measured:
        mine = [c for c in candidates if c.repo == repo]
        git_dir = cache.mirror(repo, mine[0].base_commit)
        commits = {c.base_commit for c in mine} | {
            c.environment_setup_commit for c in mine if c.environment_setup_commit
        }
        found = repair(git_dir, commits, [args.wheels] if args.wheels else [], stub=True)
        for commit, paths in found.recovered.items():
            print(f"{repo}@{commit[:12]}: content missing, recovered from {args.wheels}: "
                  f"{', '.join(paths)}")  # fmt: skip
        for commit, paths in found.stubbed.items():
            print(f"{repo}@{commit[:12]}: content missing, stubbed: {', '.join(paths)}")
    modes = ("tuned", "dated") if args.mode == "both" else (args.mode,)
    recipes = [*(rebuild_recipes() if args.rebuild_recipes else []), *args.recipe]
    excluded = decided.read_exclusions([args.exclusions]) if args.exclusions else None
    quick_label = ""
    for mode, recipe in runs(modes, recipes):
        totals = evaluate(candidates, mode, args, repos, recipe)
        label = run_label(mode, args, recipe)
        print(f"\n{label}:" if recipe is None else f"\n{label} ({recipe}'s own settings):")
        print(render(totals, with_decisions=False), end="")
        print(f"details: {args.work_dir / f'fidelity-{label}.json'}")
        decisions = decided.load(args.work_dir / f"decisions-{label}.json")
        if recipe is None:
            quick_label = label
        else:  # beside the quick run of its mode, record by record
            quick = decided.load(args.work_dir / f"decisions-{quick_label}.json")
            found = decided.differences(quick, decisions)
            print(decided.render_differences(found, quick_label, label), end="")
            print(decided.one_sided(quick, decisions), end="")
        if excluded is not None:
            beside = decided.against_exclusions(decisions, excluded)
            print(f"{label} beside {args.exclusions}:")
            print(decided.render_exclusions(beside), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
