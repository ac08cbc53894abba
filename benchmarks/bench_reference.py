"""Benchmark: what environments cost in reference mode beside the bundled specs — how many
distinct environments per 100 instances, and build time cold and warm and disk per environment.

For each mode (``reference``: SWE-bench's per-instance files of ``--reference-dir``;
``tuned``: the bundled specs), every record of ``--data`` whose history is under
``--repos-dir`` is resolved (no build) and the distinct environments counted: instances whose
pinned lists are identical share one. Then the environments of the records named by
``--instance`` (a sample) are built with uv, local backend's builder:

- **cold**: a new environment directory with an empty uv cache (every package downloaded);
- **warm**: another new directory on the cache the cold builds filled (what a second machine
  sharing the cache, or a rebuild after ``rm -rf envs``, pays);
- **disk**: the environments of one directory (``du``: hardlinks from the cache once) and the
  cache.

Per 100 instances: each repository's environments at the mean of its sampled ones (name an
``--instance`` of every repository), summed over the repositories, per 100 records. Prints
one table::

    .venv/bin/python -m benchmarks.bench_reference --data swe-bench-verified-nonlite.jsonl \\
        --repos-dir DIR --reference-dir OG --instance ID [--instance ID ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fidelity import find_mirror, other_histories, quick_settings
from builder.core.repos import RepoCache
from recipes.swe_bench import swe_bench_candidates
from validation.environments.environment import EnvironmentSpec, LocalEnvironments
from validation.environments.interpreters import Interpreters
from validation.environments.resolution import EnvironmentResolver

MODES = ("reference", "tuned")


def resolved(candidates, mode: str, args: argparse.Namespace, scratch: Path) -> dict:
    """Instance id → the environment spec ``mode`` gives it (resolution only, no build)."""
    interpreters = Interpreters()
    settings = quick_settings(mode, args.reference_dir)
    resolver = EnvironmentResolver(settings, scratch / f"specs-{mode}", interpreters.available)
    repos = RepoCache(scratch / "repos", {**other_histories(args.repos_dir), **args.mirrors})
    return {
        c.instance_id: resolver.resolve(c, repos.mirror(c.repo, c.base_commit)).spec
        for c in candidates
    }


def build_all(specs: list[EnvironmentSpec], root: Path, cache: Path) -> list[float]:
    """Seconds of each build of ``specs`` into ``root`` with uv's cache at ``cache``."""
    saved = os.environ.get("UV_CACHE_DIR")
    os.environ["UV_CACHE_DIR"] = str(cache)
    try:
        environments = LocalEnvironments(root, Interpreters(), "uv")
        seconds = []
        for spec in specs:
            started = time.monotonic()
            environments.python(spec)
            seconds.append(time.monotonic() - started)
            print(f"  {spec.label or spec.key()}: {seconds[-1]:.1f} s", file=sys.stderr)
        return seconds
    finally:
        if saved is None:
            os.environ.pop("UV_CACHE_DIR", None)
        else:
            os.environ["UV_CACHE_DIR"] = saved


def disk_mb(*paths: Path) -> float:
    """Megabytes ``du`` gives the paths together (a file hardlinked in several counts once)."""
    out = subprocess.run(["du", "-sck", *map(str, paths)], capture_output=True, text=True)
    return int(out.stdout.splitlines()[-1].split()[0]) / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="SWE-bench-format JSONL")
    parser.add_argument("--repos-dir", type=Path, required=True, help="dir of git histories")
    parser.add_argument("--reference-dir", type=Path, required=True)
    parser.add_argument("--instance", action="append", default=[], help="a record to build")
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args(argv)
    args.reference_dir = args.reference_dir.resolve()
    candidates = [o.output for _, o in swe_bench_candidates(str(args.data)) if o.verdict.kept]
    args.mirrors = {}
    for repo in sorted({c.repo for c in candidates}):
        mirror = find_mirror(args.repos_dir, repo)
        if mirror is not None:
            args.mirrors[repo] = str(mirror)
    candidates = [c for c in candidates if c.repo in args.mirrors]
    unknown = set(args.instance) - {c.instance_id for c in candidates}
    if unknown:
        parser.error(f"not among the records with a history: {', '.join(sorted(unknown))}")
    chosen = {c.instance_id: c.repo for c in candidates if c.instance_id in args.instance}
    missing = sorted({c.repo for c in candidates} - set(chosen.values()))
    if missing:
        parser.error(f"name an --instance of each repository: none of {', '.join(missing)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="swt-bench-reference-") as tmp:
        scratch = Path(tmp)
        for mode in args.modes.split(","):
            specs = resolved(candidates, mode, args, scratch)
            keys = {c.repo: set() for c in candidates}
            for candidate in candidates:
                keys[candidate.repo].add(specs[candidate.instance_id].key())
            sample = {specs[i].key(): (specs[i], repo) for i, repo in chosen.items()}
            print(f"{mode}: {len(sample)} environments to build", file=sys.stderr)
            cache, built = scratch / mode / "uv-cache", [spec for spec, _ in sample.values()]
            cold = build_all(built, scratch / mode / "cold", cache)
            warm = build_all(built, scratch / mode / "warm", cache)
            disk = [disk_mb(scratch / mode / "cold" / spec.key()) for spec in built]
            per_repo = {repo: [] for repo in keys}
            for (_, repo), *figures in zip(sample.values(), cold, warm, disk, strict=True):
                per_repo[repo].append(figures)
            totals = [0.0, 0.0, 0.0]  # over every environment of the mode: each repository's
            for repo, figures in per_repo.items():  # by the mean of its sampled ones
                for index in range(3):
                    mean = sum(f[index] for f in figures) / len(figures)
                    totals[index] += len(keys[repo]) * mean
            environments = sum(len(k) for k in keys.values())
            rows.append((mode, len(candidates), environments, len(built), cold, warm, disk,
                         disk_mb(cache), [100 * t / len(candidates) for t in totals]))  # fmt: skip
    print(
        "| mode | records | environments | sample | cold s | warm s | environment MB | "
        "uv cache MB | per 100 instances: environments, cold min, warm min, disk GB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for mode, records, environments, built, cold, warm, disk, cache_mb, per_100 in rows:
        print(
            f"| {mode} | {records} | {environments} | {built} | {sum(cold):.0f} | "
            f"{sum(warm):.0f} | {sum(disk):.0f} | {cache_mb:.0f} | "
            f"{100 * environments / records:.1f}, {per_100[0] / 60:.0f}, {per_100[1] / 60:.0f}, "
            f"{per_100[2] / 1024:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
