"""Local environments: cold/warm build time (uv vs pip) and per-run worktree overhead.

For the offline demo repository (always) and, with ``--repos-dir``, one real record's repository
(``--instance``, default the first marshmallow record). Prints one table:

    .venv/bin/python -m benchmarks.bench_environments_local \
        [--repos-dir /work/.mirror --data /work/shared/data/swe-bench-dev-subset.jsonl]

- cold: a new environment directory and an empty installer cache (packages come from the
  registry), per installer; cold-cached: a new directory, the installer's cache warm;
  warm: the environment exists (what every later validation of that repo@version pays).
- per run: a fresh git worktree + the sandboxed test command + removal (the local backend's
  session), against the same test command run raw in an existing checkout; medians of N runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from builder.core.config import packaged_spec_dir
from builder.core.repos import worktree
from recipes.demo.make import generate_demo
from recipes.swe_bench import swe_bench_candidates
from validation.environments.environment import EnvironmentSpec, LocalEnvironments
from validation.environments.interpreters import Interpreters
from validation.environments.resolution import resolve
from validation.environments.specs import SpecLibrary
from validation.runs.backends.local import Limits, LocalBackend
from validation.runs.patches import runnable_test_files


@dataclasses.dataclass
class Case:
    name: str
    spec: EnvironmentSpec
    mirror: Path
    commit: str
    test_files: list[str]
    test_patch: str = ""


def _timed_build(spec: EnvironmentSpec, installer: str, root: Path, cache: Path) -> float:
    os.environ["UV_CACHE_DIR"] = str(cache / "uv")
    os.environ["PIP_CACHE_DIR"] = str(cache / "pip")
    environments = LocalEnvironments(root, Interpreters(), installer)
    started = time.monotonic()
    environments.python(spec)
    return time.monotonic() - started


def build_times(case: Case, installer: str, scratch: Path) -> dict[str, float]:
    """Cold (empty cache), cold-cached (new dir, warm cache) and warm build seconds."""
    spec = case.spec if installer == "uv" else dataclasses.replace(case.spec, exclude_newer="")
    cache = scratch / f"cache-{installer}"
    saved = {k: os.environ.get(k) for k in ("UV_CACHE_DIR", "PIP_CACHE_DIR")}
    try:
        cold = _timed_build(spec, installer, scratch / f"envs-{installer}-1", cache)
        cached = _timed_build(spec, installer, scratch / f"envs-{installer}-2", cache)
        warm = _timed_build(spec, installer, scratch / f"envs-{installer}-2", cache)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return {"cold": cold, "cold_cached": cached, "warm": warm}


def run_overhead(case: Case, scratch: Path, repeats: int) -> dict[str, float]:
    """Median seconds of the raw test command vs a full local-backend session around it."""
    backend = LocalBackend(scratch / "work", env_dir=scratch / "envs-run", limits=Limits())
    python = backend.prepare(case.spec)
    command = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *case.test_files]
    raw, session_times = [], []
    with worktree(case.mirror, case.commit, scratch / "raw") as tree:
        env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
        env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "src")])
        for _ in range(repeats):
            started = time.monotonic()
            subprocess.run(command, cwd=tree, env=env, capture_output=True)
            raw.append(time.monotonic() - started)
    for index in range(repeats):
        started = time.monotonic()
        with backend.session(python, case.mirror, case.commit, scratch / f"run{index}") as run:
            run.run(command, scratch / f"run{index}.log", 600)
        session_times.append(time.monotonic() - started)
    raw_median, session_median = statistics.median(raw), statistics.median(session_times)
    return {
        "raw": raw_median,
        "session": session_median,
        "overhead": session_median - raw_median,
    }


def demo_case(scratch: Path) -> Case:
    paths = generate_demo(scratch / "demo")
    record = json.loads(paths.records.read_text().splitlines()[0])
    spec = SpecLibrary([packaged_spec_dir()]).get("swt-demo/calc")
    resolution = resolve(
        spec, mirror=paths.repo, base_commit=record["base_commit"],
        available_pythons=Interpreters().available(),
    )  # fmt: skip
    files = sorted(str(p.relative_to(paths.repo)) for p in (paths.repo / "tests").glob("test_*.py"))
    return Case("demo (swt-demo/calc)", resolution.spec, paths.repo, record["base_commit"], files)


def real_case(data: Path, repos_dir: Path, instance: str) -> Case:
    from benchmarks.fidelity import find_mirror

    for _, outcome in swe_bench_candidates(str(data)):
        candidate = outcome.output
        if candidate is None or (instance and candidate.instance_id != instance):
            continue
        mirror = find_mirror(repos_dir, candidate.repo)
        spec = SpecLibrary([packaged_spec_dir()]).get(candidate.repo)
        if mirror is None or spec is None:
            continue
        resolution = resolve(
            spec, mirror=mirror, base_commit=candidate.base_commit,
            record_version=candidate.version,
            record_setup_commit=candidate.environment_setup_commit,
            available_pythons=Interpreters().available(),
        )  # fmt: skip
        files = [f for f in runnable_test_files(candidate.test_patch)]
        existing = subprocess.run(
            ["git", "cat-file", "-e", f"{candidate.base_commit}:{files[0]}"], cwd=mirror
        )
        if existing.returncode != 0:
            continue
        return Case(candidate.instance_id, resolution.spec, mirror, candidate.base_commit, files)
    raise SystemExit(f"no usable record {instance or ''} with a history under {repos_dir}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, help="git histories of real repositories")
    parser.add_argument("--data", type=Path, help="SWE-bench-format JSONL (with --repos-dir)")
    parser.add_argument("--instance", default="marshmallow-code__marshmallow-1359")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--installers", default="uv,pip")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="swt-bench-env-") as tmp:
        scratch = Path(tmp)
        cases = [demo_case(scratch)]
        if args.repos_dir and args.data:
            cases.append(real_case(args.data, args.repos_dir, args.instance))
        print(f"{'case':40} {'installer':9} {'cold s':>7} {'cached s':>8} {'warm s':>7}")
        overheads = []
        for case in cases:
            for installer in args.installers.split(","):
                times = build_times(case, installer, scratch / case.name.split()[0])
                print(
                    f"{case.name:40} {installer:9} {times['cold']:7.2f} "
                    f"{times['cold_cached']:8.2f} {times['warm']:7.3f}",
                    flush=True,
                )
            overheads.append((case, run_overhead(case, scratch / "runs", args.repeats)))
        print(f"\n{'case':40} {'raw run s':>9} {'session s':>9} {'overhead s':>10}")
        for case, o in overheads:
            print(f"{case.name:40} {o['raw']:9.3f} {o['session']:9.3f} {o['overhead']:10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
