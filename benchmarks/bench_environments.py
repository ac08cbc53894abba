"""Docker environments: image build cold/warm and per-run container overhead.

For the offline demo repository (always) and, with ``--repos-dir`` and ``--data``, one real
record's repository (``--instance``, default marshmallow-1359: its spec's Python 3.9, the
project installed from its environment commit). Measures, with a running Docker daemon (and the
base image of the case's Python, built on first use):

- environment image build **cold** (fresh work dir: empty uv cache, a spec hash never built),
  **cold with a warm uv cache** (a new hash in the same work dir), and **warm** (the same spec
  again: the image is found by its hash, nothing is built);
- **per-run overhead**: the case's test command in a fresh test-run container (copy the
  checkout in, start, wait, read the report back, remove) against the same command run directly
  on this machine in a local venv of the same spec; and an empty command (``true``) in a
  container, the pure container cost.

    .venv/bin/python -m benchmarks.bench_environments [--runs 5] [--json out.json] \
        [--repos-dir DIR --data FILE [--instance ID]]

The local backend's figures (uv vs pip, worktree overhead): ``benchmarks.bench_environments_local``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.bench_environments_local import Case, demo_case, real_case
from builder.core.config import DockerConfig
from builder.core.repos import worktree
from validation.environments.docker_engine import DockerUnavailable, connect
from validation.environments.environment import LocalEnvironments
from validation.environments.images import ensure_base_image
from validation.runs.backends.docker import DockerBackend


def _marked(case: Case, marker: str) -> Case:
    """The case's spec with ``marker`` in its variables: a hash never built (a cold build)."""
    spec = dataclasses.replace(case.spec, env=(*case.spec.env, ("SWT_BENCH_RUN", marker)))
    return dataclasses.replace(case, spec=spec)


def _timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def measure(case: Case, runs: int, scratch: Path) -> dict[str, float]:
    client = connect()
    figures: dict[str, float] = {}
    _, figures["base_image_s"] = _timed(
        ensure_base_image, client, case.spec.python, DockerConfig(), scratch / "base"
    )
    cold_backend = DockerBackend(scratch / "cold")
    marked = _marked(case, uuid.uuid4().hex)
    environment, figures["env_cold_s"] = _timed(cold_backend.prepare, marked.spec)
    second, figures["env_cold_warm_uv_cache_s"] = _timed(
        cold_backend.prepare, _marked(case, uuid.uuid4().hex).spec
    )
    _, figures["env_warm_s"] = _timed(cold_backend.prepare, marked.spec)
    try:
        figures.update(_runs(cold_backend, environment, runs, scratch, marked))
    finally:
        for built in (environment, second):  # the benchmark's own images, never reused
            client.images.remove(built.image_id, force=True)
    return {name: round(value, 3) for name, value in figures.items()}


def _runs(backend, environment, runs: int, scratch: Path, case: Case) -> dict[str, float]:
    figures: dict[str, float] = {}
    local_python = LocalEnvironments(scratch / "local-envs").python(case.spec)
    command = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *case.test_files]

    raw, contained, empty = [], [], []
    with (
        worktree(case.mirror, case.commit, scratch / "raw") as tree,
        backend.session(environment, case.mirror, case.commit, scratch / "run") as session,
    ):
        env = {
            "PATH": f"{local_python.parent}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "src")]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(scratch),
        }
        for index in range(runs):
            started = time.perf_counter()
            subprocess.run(command, cwd=tree, env=env, capture_output=True, check=False)
            raw.append(time.perf_counter() - started)
            log = scratch / "logs" / f"run-{index}.log"
            started = time.perf_counter()
            session.run(command, log, timeout_s=600)
            contained.append(time.perf_counter() - started)
            started = time.perf_counter()
            session.run(["true"], scratch / "logs" / f"true-{index}.log", timeout_s=60)
            empty.append(time.perf_counter() - started)
    figures["raw_run_median_s"] = statistics.median(raw)
    figures["container_run_median_s"] = statistics.median(contained)
    figures["per_run_overhead_s"] = figures["container_run_median_s"] - figures["raw_run_median_s"]
    figures["empty_container_run_median_s"] = statistics.median(empty)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repetitions of each test command")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--repos-dir", type=Path, help="git histories of real repositories")
    parser.add_argument("--data", type=Path, help="SWE-bench-format JSONL (with --repos-dir)")
    parser.add_argument("--instance", default="marshmallow-code__marshmallow-1359")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="swt-bench-docker-") as tmp:
        scratch = Path(tmp)
        cases = [demo_case(scratch)]
        if args.repos_dir and args.data:
            cases.append(real_case(args.data, args.repos_dir, args.instance))
        for index, case in enumerate(cases):
            try:
                results[case.name] = measure(case, args.runs, scratch / f"case{index}")
            except DockerUnavailable as error:
                raise SystemExit(f"{error} (start dockerd first)") from None
    names = list(next(iter(results.values())))
    width = max(map(len, names))
    print(f"{'':<{width}}  " + "  ".join(f"{name[:28]:>28}" for name in results))
    for name in names:
        print(f"{name:<{width}}  " + "  ".join(f"{r[name]:28.3f}" for r in results.values()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
