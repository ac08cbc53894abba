"""Benchmark: validation overhead (wall / raw test time) and coverage-instrumented vs plain runs.

Builds a small fixture repository (a package and a test file of ``--tests`` tests), validates one
candidate with a warm environment, once with coverage off and once on, ``--rounds`` times each,
per environment Python (3.11: coverage's C tracer; 3.12: its sys.monitoring core) and workload
("framework": many tiny tests, pytest's own code dominates; "hot-code": every test runs a Python
loop inside the patched module, the worst case for line coverage):

- overhead = the stage's whole wall time / the summed durations of its test runs (goal ≤ 1.3×);
- coverage = median, over rounds and instrumented runs, of an instrumented run's duration /
  the same run's (suite, side, repetition) with coverage off in the same round — the two
  validations run back to back, so a paired ratio is less exposed to the machine's drift
  (goal ≤ 1.3×); and the whole validation's test time,
  coverage on / off (only the first repetition of each side is instrumented);
- the same two ratios measured tightly: the runner's command line alone, plain and as
  validation's measured runs run it, alternated ``--pairs`` times (median of paired ratios);
  beside it coverage.py's floor: a bare ``coverage run`` (only ``include``: no contexts, no
  subprocess or multiprocessing following, no report) of that command — what any
  measurement with coverage.py costs at least on that Python.

Run with ``.venv/bin/python -m benchmarks.bench_validation``.

With ``--records FILE --repos-dir DIR`` it measures real records instead (``--repo`` picks the
repository, ``--instance`` or ``--limit`` which records): per record, the cost of a full
validation (``--repetitions`` runs per side, coverage, the existing-test pass; warm environment)
over the raw time of one before/after pair of the same test files (the runner's plain command,
before then after the golden patch, in the same environment):

    .venv/bin/python -m benchmarks.bench_validation --records swe-bench-dev-subset.jsonl \
        --repos-dir /work/.mirror --repo marshmallow-code/marshmallow --limit 3

With ``--phases --config TOML --out DIR`` it says where validation's time goes, phase by phase
(``validation.phases``): ``swt-builder build`` with that configuration, in a fresh work dir
under ``DIR`` per setting (``--quick``: one run per side, coverage off; each ``--recipe``: that
recipe's ``[validation]`` settings; neither: both, with the SWT-Bench Verified recipe), its
environments in ``--env-dir`` when given (reused, nothing rebuilt), then every record's
``phases.json`` read back: per record and in total, wall and CPU seconds per phase and their
share, as Markdown tables (``--json FILE``: the same as JSON). ``--phases-from WORK_DIR``
(repeatable) reads a finished build's work dir instead:

    nice -n 10 .venv/bin/python -m benchmarks.bench_validation --phases \
        --config /work/bench/nine/swt-builder.toml --instance psf__requests-1142 \
        --set validation.backend=local --env-dir /work/bench/nine/work/envs \
        --out /work/bench/phases --json /work/bench/phases/phases.json

The local backend's sandboxed runs and builds add their wall time to their phases but not
their CPU time (see ``validation.phases``): the CPU columns are the builder's own and its
unsandboxed children's (git).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.3
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


WORKLOADS = {
    # many small tests: pytest's own Python dominates, the patched module is barely run
    "framework": "def add(a, b):\n    return a - b\n\n\ndef work(n):\n    return sum(range(n))\n",
    # the patched module is hot: every test runs a Python loop in it (line events galore)
    "hot-code": (
        "def add(a, b):\n    return a - b\n\n\ndef work(n):\n    total = 0\n"
        "    for i in range(n):\n        total += i\n    return total\n"
    ),
}


def _fixture(root: Path, tests: int, workload: str) -> tuple[Path, str, str, str]:
    """(repo, base commit, golden patch, test patch) of a package with ``tests`` tests."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    code = WORKLOADS[workload]
    scale = 1000 if workload == "framework" else 200
    body = "from pkg import add, work\n"
    body += "".join(
        f"\n\ndef test_work_{i}():\n    assert work({i * scale}) == {sum(range(i * scale))}\n"
        for i in range(tests)
    )
    _write(repo, {"pkg/__init__.py": code, "tests/test_pkg.py": body})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()

    def diff(files: dict[str, str]) -> str:
        _write(repo, files)
        _git(repo, "add", "-A")
        text = _git(repo, "diff", "--cached")
        _git(repo, "reset", "-q", "--hard", "HEAD")
        return text

    test_patch = diff(
        {"tests/test_pkg.py": body + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
    )
    patch = diff({"pkg/__init__.py": code.replace("a - b", "a + b")})
    return repo, base, patch, test_patch


def _validate(work: Path, repo: Path, candidate, coverage: bool, repetitions: int, python: str):
    from builder.core.config import ValidationConfig
    from builder.core.records import RunResult, read_jsonl
    from validation.stage import ValidateStage

    settings = ValidationConfig(
        backend="local", repetitions=repetitions, coverage=coverage, timeout_s=600,
        python=python, dated=False,
    )  # fmt: skip
    stage = ValidateStage(settings, work, {candidate.repo: str(repo)})
    started = time.perf_counter()
    outcome = stage.process(candidate)
    wall = time.perf_counter() - started
    if not outcome.verdict.kept:
        raise RuntimeError(f"the benchmark candidate was dropped: {outcome.verdict}")
    runs = list(read_jsonl(Path(outcome.verdict.evidence["runs"]), RunResult))
    return wall, runs, outcome.output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200, help="tests in the fixture file")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--pairs", type=int, default=12, help="alternated plain / instrumented command runs"
    )
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument(
        "--python", action="append", help="environment Python (repeat); default 3.11 and 3.12"
    )
    parser.add_argument(
        "--workload", action="append", choices=sorted(WORKLOADS), help="default: both"
    )
    parser.add_argument("--records", help="SWE-bench-format JSONL: measure real records")
    parser.add_argument("--repos-dir", help="where the records' repository histories are")
    parser.add_argument("--repo", help="the records' repository (owner/name); default: all")
    parser.add_argument("--instance", action="append", help="instance id (repeat)")
    parser.add_argument("--limit", type=int, default=3, help="records measured (real mode)")
    parser.add_argument("--work-dir", help="real mode: keep environments here between runs")
    parser.add_argument("--phases", action="store_true", help="a phase-by-phase cost breakdown")
    parser.add_argument("--config", help="phases: the build's swt-builder.toml")
    parser.add_argument("--out", help="phases: where each setting's work and output dirs go")
    parser.add_argument("--quick", action="store_true", help="phases: one run per side, no ΔC")
    parser.add_argument(
        "--recipe", action="append", default=[], help="phases: a recipe's settings (repeat)"
    )
    parser.add_argument("--env-dir", help="phases: reuse the environments of this directory")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="phases: one more setting for every build (repeat)",
    )  # fmt: skip
    parser.add_argument(
        "--phases-from", action="append", default=[], metavar="WORK_DIR",
        help="phases: read a finished build's work dir (repeat)",
    )  # fmt: skip
    parser.add_argument("--json", help="phases: also write the breakdown here")
    args = parser.parse_args(argv)
    if args.phases or args.phases_from:
        return _phases(args)
    if args.records:
        return _real(args)
    print(
        f"fixture: {args.tests + 2} tests; {args.repetitions} runs per side + 2 existing-test"
        f" runs; {args.rounds} rounds; warm environment; cpus={os.cpu_count()}"
    )
    for python in args.python or ["3.11", "3.12"]:
        for workload in args.workload or sorted(WORKLOADS):
            _measure(args, python, workload)
    return 0


def _measure(args: argparse.Namespace, python: str, workload: str) -> None:
    from recipes.swe_bench import make_record, to_candidate

    with tempfile.TemporaryDirectory(prefix="swt-bench-validation-") as scratch:
        root = Path(scratch)
        repo, base, patch, test_patch = _fixture(root, args.tests, workload)
        record = make_record("bench/validation", 1, base, patch, test_patch)
        candidate = to_candidate({**record, "problem_statement": "add() subtracts"})
        work = root / "work"
        for coverage in (False, True):  # warm both environments (built once, reused after)
            _validate(work, repo, candidate, coverage, 1, python)
        results: dict[bool, list[tuple[float, list[float]]]] = {False: [], True: []}
        by_run: dict[bool, dict[tuple, list[float]]] = {False: {}, True: {}}
        instrumented: set[tuple] = set()
        for _ in range(args.rounds):
            for coverage in (False, True):
                wall, runs, instance = _validate(
                    work, repo, candidate, coverage, args.repetitions, python
                )
                results[coverage].append((wall, [run.duration_s for run in runs]))
                for run in runs:
                    position = (run.suite, run.side, run.repetition)
                    by_run[coverage].setdefault(position, []).append(run.duration_s)
                    if "coverage" in " ".join(run.command):
                        instrumented.add(position)
        print(f"\n== Python {python}, workload {workload}: golden ΔC {instance.golden_coverage}")
        for coverage in (False, True):
            label = "coverage on " if coverage else "coverage off"
            ratios = [wall / sum(durations) for wall, durations in results[coverage]]
            walls = [wall for wall, _ in results[coverage]]
            raw = [sum(durations) for _, durations in results[coverage]]
            print(
                f"{label}: wall {statistics.median(walls):.2f}s, raw test time "
                f"{statistics.median(raw):.2f}s, overhead {statistics.median(ratios):.3f}x "
                f"(goal <= {GOAL}x)"
            )
        plain = statistics.median(d for p in instrumented for d in by_run[False][p])
        measured = statistics.median(d for p in instrumented for d in by_run[True][p])
        paired = statistics.median(  # round by round: the two validations ran back to back
            on / off
            for p in instrumented
            for on, off in zip(by_run[True][p], by_run[False][p], strict=True)
        )
        print(
            f"instrumented run vs the same run plain: median of paired ratios {paired:.3f}x "
            f"(goal <= {GOAL}x; medians {measured:.3f}s vs {plain:.3f}s; {len(instrumented)} of "
            f"{len(by_run[True])} runs per validation instrumented)"
        )
        raw_on = statistics.median(sum(ds) for _, ds in results[True])
        raw_off = statistics.median(sum(ds) for _, ds in results[False])
        print(f"validation test time, coverage on / off: {raw_on / raw_off:.3f}x")
        medians, ratios = _alternated(work, repo, args.pairs, python)
        print(
            f"alternated runs of one command line ({args.pairs} each, median of paired ratios "
            f"to the plain run, {medians['plain']:.3f}s): instrumented as validation runs it "
            f"{ratios['ours']:.3f}x ({medians['ours']:.3f}s; goal <= {GOAL}x); coverage.py floor "
            f"(bare `coverage run`, include only) {ratios['bare']:.3f}x ({medians['bare']:.3f}s)"
        )


def _real(args: argparse.Namespace) -> int:
    """Full validation / raw pair on real records, one record at a time."""
    from benchmarks.fidelity import find_mirror
    from builder.core.config import ValidationConfig
    from builder.core.records import RunResult, read_jsonl
    from recipes.swe_bench import to_candidate
    from validation.stage import ValidateStage

    if not args.repos_dir:
        raise SystemExit("--records needs --repos-dir")
    rows = [json.loads(line) for line in Path(args.records).read_text().splitlines() if line]
    rows = [r for r in rows if args.repo in (None, r["repo"])]
    if args.instance:
        rows = [r for r in rows if r["instance_id"] in args.instance]
    rows = rows[: args.limit]
    print(
        f"{len(rows)} records; full validation = {args.repetitions} runs per side, coverage, "
        f"existing tests; raw pair = the plain command before + after; cpus={os.cpu_count()}, "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    with tempfile.TemporaryDirectory(prefix="swt-bench-real-") as scratch:
        work = Path(args.work_dir or scratch)
        medians = []
        for row in rows:
            mirror = find_mirror(Path(args.repos_dir), row["repo"])
            if mirror is None:
                print(f"{row['instance_id']}: no history of {row['repo']} in {args.repos_dir}")
                continue
            candidate = to_candidate(row)
            settings = ValidationConfig(
                backend="local", repetitions=args.repetitions, coverage=True, timeout_s=3600
            )
            stage = ValidateStage(settings, work, {row["repo"]: str(mirror)})
            ratios = []
            for round_ in range(1, args.rounds + 1):  # a raw pair, then a validation: paired
                raw = _raw_pair(stage, candidate, work / "raw")  # builds the environment first
                started = time.perf_counter()
                outcome = stage.process(candidate)
                wall = time.perf_counter() - started
                runs = list(read_jsonl(Path(outcome.verdict.evidence["runs"]), RunResult))
                verdict = "kept" if outcome.verdict.kept else outcome.verdict.reason.value
                ratios.append(wall / raw)
                print(
                    f"{row['instance_id']} round {round_}: {verdict}; raw pair {raw:.1f}s; full "
                    f"validation {wall:.1f}s wall ({len(runs)} runs, "
                    f"{sum(r.duration_s for r in runs):.1f}s of test time): {wall / raw:.2f}x; "
                    f"load {os.getloadavg()[0]:.2f}"
                )
            medians.append(statistics.median(ratios))
            print(
                f"{row['instance_id']}: median {medians[-1]:.2f}x over {len(ratios)} rounds "
                f"(goal <= 2.5x)"
            )
        if medians:
            print(f"median {statistics.median(medians):.2f}x over {len(medians)} records")
    return 0


QUICK = {"repetitions": 1, "coverage": False}
"""The quick mode's validation settings: one run per side, no coverage."""

VERIFIED = Path(__file__).resolve().parents[1] / "recipes" / "swt-bench" / "verified.toml"
"""The recipe whose settings ``--phases`` compares with the quick mode by default."""

COLUMNS = (
    "mirror", "resolve", "build", "checkout", "run", "coverage", "grading", "record", "store",
    "other",
)  # fmt: skip
"""The per-record table's phases (``run``: every ``run.*`` phase, with the runs counted)."""


def _phases(args: argparse.Namespace) -> int:
    """The breakdown of each setting's build (``--phases``) or of finished work dirs."""
    from validation import phases

    sections: dict[str, dict] = {}
    for work in map(Path, args.phases_from):  # a work dir, or a setting's dir of --out
        found = work / "work" if not (work / "logs").is_dir() else work
        sections[work.name] = {"records": collect_phases(found)}
    if args.phases:
        if not (args.config and args.out):
            raise SystemExit("--phases needs --config and --out")
        for label, settings in _settings(args).items():
            sections[label] = _build_phases(args, label, settings)
    lines = [
        f"cpus={os.cpu_count()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"phases.json version {phases.VERSION}"
    ]
    for label, section in sections.items():
        lines += ["", *phase_tables(label, section)]
    if len(sections) > 1:
        lines += ["", *comparison_table(sections)]
    print("\n".join(lines))
    if args.json:
        totals = {label: totals_of(section["records"]) for label, section in sections.items()}
        found = {label: {**section, "total": totals[label]} for label, section in sections.items()}
        Path(args.json).write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return 0


def _settings(args: argparse.Namespace) -> dict[str, dict]:
    """Label → the ``[validation]`` settings of each build: the quick mode, then each recipe's
    (the SWT-Bench Verified recipe's when none is named)."""
    import tomllib

    recipes = [Path(recipe) for recipe in args.recipe]
    quick = args.quick or not recipes
    if not args.quick and not recipes:
        recipes = [VERIFIED]
    found = {"quick": dict(QUICK)} if quick else {}
    for recipe in recipes:
        data = tomllib.loads(recipe.read_text(encoding="utf-8"))
        found[recipe.stem] = dict(data.get("validation", {}))
    return found


def _build_phases(args: argparse.Namespace, label: str, settings: dict) -> dict:
    """``swt-builder build`` with the configuration and ``settings``, in a fresh work dir (its
    environments in ``--env-dir`` when given); its records' phases and the build's wall time."""
    root = Path(args.out).resolve() / label
    for made in ("work", "dist"):  # fresh: nothing reused from the store
        shutil.rmtree(root / made, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    overrides = [
        f"work_dir={json.dumps(str(root / 'work'))}",
        f"output_dir={json.dumps(str(root / 'dist'))}",
        *(f"validation.{key}={json.dumps(value)}" for key, value in settings.items()),
    ]
    if args.env_dir:
        overrides.append(f"validation.env_dir={json.dumps(str(Path(args.env_dir).resolve()))}")
    if args.instance:
        overrides.append(f"source.path={json.dumps(str(_chosen(args, root)))}")
    overrides += args.overrides
    command = [sys.executable, "-m", "builder.cli", "build", "--config", str(args.config)]
    for override in overrides:
        command += ["--set", override]
    started = time.perf_counter()
    with (root / "build.log").open("wb") as log:
        completed = subprocess.run(
            [*command, "--no-progress"], stdout=log, stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[1], check=False,
        )  # fmt: skip
    wall = time.perf_counter() - started
    if completed.returncode not in (0, 1):  # 1: the build kept no instance (drops are timed)
        raise SystemExit(
            f"{label}: the build failed ({completed.returncode}): {root / 'build.log'}"
        )
    return {
        "settings": settings,
        "build_wall_s": round(wall, 3),
        "records": collect_phases(root / "work"),
    }


def _chosen(args: argparse.Namespace, root: Path) -> Path:
    """The configuration's records named by ``--instance``, as a JSONL file of their own."""
    from builder.core.config import load_config

    source = Path(load_config(Path(args.config)).source.path)
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    chosen = [row for row in rows if row["instance_id"] in args.instance]
    missing = sorted(set(args.instance) - {row["instance_id"] for row in chosen})
    if missing:
        raise SystemExit(f"not in {source}: {', '.join(missing)}")
    path = root / "records.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in chosen))
    return path


def collect_phases(work: Path) -> dict[str, dict]:
    """Instance id → its ``phases.json`` under ``work/logs`` (the newest, when a record was
    validated more than once in this work dir)."""
    found: dict[str, dict] = {}
    files = sorted((work / "logs").glob("*/*/phases.json"), key=lambda path: path.stat().st_mtime)
    for path in files:
        data = json.loads(path.read_text())
        found[data.get("instance_id", path.parent.parent.name)] = data
    return dict(sorted(found.items()))


def totals_of(records: dict[str, dict]) -> dict[str, dict]:
    """Per phase over every record: wall and CPU seconds and entries (``total``: all phases)."""
    totals: dict[str, dict] = {}
    for data in records.values():
        for name, entry in data["phases"].items():
            into = totals.setdefault(name, {"wall_s": 0.0, "cpu_s": 0.0, "count": 0})
            for field in into:
                into[field] += entry[field]
    totals["total"] = {
        "wall_s": sum(data["wall_s"] for data in records.values()),
        "cpu_s": sum(data["cpu_s"] for data in records.values()),
        "count": len(records),
    }
    return totals


def _grouped(entries: dict[str, dict]) -> dict[str, dict]:
    """Phases with every ``run.*`` summed into ``run``."""
    grouped: dict[str, dict] = {}
    for name, entry in entries.items():
        key = "run" if name.startswith("run.") else name
        into = grouped.setdefault(key, {"wall_s": 0.0, "cpu_s": 0.0, "count": 0})
        for field in into:
            into[field] += entry[field]
    return grouped


def phase_tables(label: str, section: dict) -> list[str]:
    """A setting's per-record table (each phase's wall / CPU seconds) and its total per phase
    with the shares of the whole."""
    records = section["records"]
    settings = section.get("settings")
    about = f"{len(records)} records"
    if settings is not None:
        about += f"; settings {json.dumps(settings, sort_keys=True)}"
    if "build_wall_s" in section:
        about += f"; the whole build {section['build_wall_s']:.1f} s wall"
    lines = [f"### {label} ({about})", "", "wall / CPU seconds per phase; runs: test runs made", ""]
    lines.append("| record | runs | wall s | CPU s | " + " | ".join(COLUMNS) + " |")
    lines.append("|---|" + "---:|" * (3 + len(COLUMNS)))
    for instance, data in records.items():
        lines.append(_record_row(instance, data["phases"], data["wall_s"], data["cpu_s"]))
    totals = totals_of(records)
    phases_only = {name: entry for name, entry in totals.items() if name != "total"}
    lines.append(
        _record_row("**total**", phases_only, totals["total"]["wall_s"], totals["total"]["cpu_s"])
    )
    lines += ["", "| phase | entries | wall s | wall share | CPU s | CPU share |"]
    lines.append("|---|---:|---:|---:|---:|---:|")
    whole = totals["total"]
    for name in _ordered(phases_only):
        entry = phases_only[name]
        lines.append(
            f"| {name} | {entry['count']} | {entry['wall_s']:.2f} | "
            f"{_share(entry['wall_s'], whole['wall_s'])} | {entry['cpu_s']:.2f} | "
            f"{_share(entry['cpu_s'], whole['cpu_s'])} |"
        )
    lines.append(f"| **total** | | {whole['wall_s']:.2f} | 100 % | {whole['cpu_s']:.2f} | 100 % |")
    return lines


def _record_row(instance: str, entries: dict[str, dict], wall: float, cpu: float) -> str:
    grouped = _grouped(entries)
    runs = grouped.get("run", {}).get("count", 0)
    cells = [
        f"{grouped[name]['wall_s']:.2f} / {grouped[name]['cpu_s']:.2f}" if name in grouped else "–"
        for name in COLUMNS
    ]
    return f"| {instance} | {runs} | {wall:.2f} | {cpu:.2f} | " + " | ".join(cells) + " |"


def comparison_table(sections: dict[str, dict]) -> list[str]:
    """Each phase's wall seconds and share of the whole, side by side for every setting."""
    totals = {label: totals_of(section["records"]) for label, section in sections.items()}
    names = _ordered({name for found in totals.values() for name in found if name != "total"})
    labels = list(sections)
    lines = [
        "### settings compared (wall seconds, share of the whole)",
        "",
        "| phase | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    for name in [*names, "total"]:
        cells = [_compared(totals[label].get(name), totals[label]["total"]) for label in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _compared(entry: dict | None, whole: dict) -> str:
    if entry is None:
        return "–"
    return f"{entry['wall_s']:.2f} ({_share(entry['wall_s'], whole['wall_s'])})"


def _ordered(names) -> list[str]:
    """Phases in validation's order (``validation.phases.PHASES``), any other after, ``other``
    last."""
    from validation.phases import OTHER, PHASES

    known = [name for name in PHASES if name in names]
    rest = sorted(name for name in names if name not in PHASES and name != OTHER)
    return [*known, *rest, *([OTHER] if OTHER in names else [])]


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def _raw_pair(stage, candidate, run_dir: Path) -> float:
    """Seconds of one plain run of the golden test files before, then after, the golden patch
    (with the test patch), in the environment the stage validates with."""
    from validation.runs.patches import runnable_test_files
    from validation.runs.runners import make_runner

    mirror = stage.repos.mirror(candidate.repo, candidate.base_commit)
    spec = stage._measurable(stage.environments.resolve(candidate, mirror).spec)
    environment = stage.backend.prepare(spec)
    runner = make_runner(spec.runner, spec.test_command)
    files = runnable_test_files(candidate.test_patch)
    total = 0.0
    for side in ("before", "after"):
        where = run_dir / side
        with stage.backend.session(environment, mirror, candidate.base_commit, where) as session:
            session.bytecode = True  # the plain command: Python's default
            session.apply(candidate.test_patch, "test patch")
            if side == "after":
                session.apply(candidate.patch, "golden patch")
            report = session.scratch_path("report.xml")
            completed = session.run(
                runner.command("python", files, report), run_dir / f"{side}.log", 3600
            )
            total += completed.duration_s
    return total


def _alternated(
    work: Path, repo: Path, pairs: int, version: str
) -> tuple[dict[str, float], dict[str, float]]:
    """The runner's command on the fixture's test file (as validation runs it), alternated
    ``pairs`` times in the warm environment that has coverage.py: plain; under a bare
    ``coverage run`` (coverage.py's floor: the core validation uses on that Python, only
    ``include``); and as validation's measured runs run it (our rcfile, context plugin and
    report). Medians per command, and medians of each one's ratio to the plain run of its round
    (back-to-back runs: less exposed to the machine's drift than separate validations)."""
    import json

    from validation.coverage import (
        CONTEXT_PLUGIN,
        RUNTIME,
        SYSMON_PYTHON,
        measured_command,
        rcfile,
    )
    from validation.runs.runners import make_runner

    (python,) = [
        marker.parent / "bin" / "python"
        for marker in (work / "envs").glob("*/swt-environment.json")
        if any(p.startswith("coverage") for p in json.loads(marker.read_text())["packages"])
    ]
    scratch = repo.parent / "alternated"
    scratch.mkdir(exist_ok=True)
    rc = scratch / "floor.coveragerc"
    sysmon = tuple(int(part) for part in version.split(".")) >= SYSMON_PYTHON
    rc.write_text(
        f"[run]\ndata_file = {scratch / 'floor.coverage'}\n"
        + ("core = sysmon\n" if sysmon else "")
        + "include =\n    pkg/*\n"
    )
    runner = make_runner("pytest")
    report = str(scratch / "report.xml")
    plain = runner.command(str(python), ["tests/test_pkg.py"], report, ())
    plugin = runner.context_options(CONTEXT_PLUGIN) or []
    ours = measured_command(
        runner.command(str(python), ["tests/test_pkg.py"], report, plugin),
        str(RUNTIME.place(scratch / "tools")),
        str(scratch / "ours" / "rc"),
        rcfile(["pkg/__init__.py"], str(scratch / "ours" / "data"), contexts="runner",
               python=version),
        str(scratch / "ours" / "coverage.json"),
        {"pkg/__init__.py": [2]},  # the golden patch's line
    )  # fmt: skip
    commands = {
        "plain": plain,
        "bare": [str(python), "-m", "coverage", "run", f"--rcfile={rc}", *plain[1:]],
        "ours": ours,
    }
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(pairs):
        for name, command in commands.items():
            shutil.rmtree(scratch / "ours", ignore_errors=True)
            started = time.perf_counter()
            subprocess.run(command, cwd=repo, env=env, check=False, capture_output=True)
            times[name].append(time.perf_counter() - started)
    measured = json.loads((scratch / "ours" / "coverage.json").read_text())  # the last run's
    if "pkg/__init__.py" not in measured.get("files", {}):
        raise RuntimeError(f"the instrumented command measured nothing: {measured}")
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {
        name: statistics.median(a / b for a, b in zip(times[name], times["plain"], strict=True))
        for name in commands
    }
    return medians, ratios


if __name__ == "__main__":
    raise SystemExit(main())
