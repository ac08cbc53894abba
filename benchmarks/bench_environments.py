"""Docker environments on the demo repo: image build cold/warm and per-run container overhead.

Measures, with a running Docker daemon (and the base image, built on first use):

- environment image build **cold** (fresh work dir: empty uv cache, a spec hash never built),
  **cold with a warm uv cache** (a new hash in the same work dir), and **warm** (the same spec
  again: the image is found by its hash, nothing is built);
- **per-run overhead**: the demo's test command in a fresh test-run container (copy the
  checkout in, start, wait, read the report back, remove) against the same command run directly
  on this machine in a local venv of the same spec; and an empty command (``true``) in a
  container, the pure container cost.

    .venv/bin/python -m benchmarks.bench_environments [--runs 5] [--json out.json]

The local backend's figures (uv vs pip, worktree overhead): ``benchmarks.bench_environments_local``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from builder.config import DockerConfig
from recipes.demo.generate import generate_demo
from validation.backends.docker import DockerBackend
from validation.docker_engine import connect
from validation.environment import EnvironmentSpec, LocalEnvironments
from validation.images import ensure_base_image

PYTHON = "3.11"
TEST_FILES = ["tests/test_arith.py", "tests/test_parsing.py", "tests/test_stats.py"]


def _spec(marker: str) -> EnvironmentSpec:
    """The demo's environment; ``marker`` makes a hash never built before (a cold build)."""
    return EnvironmentSpec(PYTHON, ("pytest",), env=(("SWT_BENCH_RUN", marker),))


def _timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def measure(runs: int, scratch: Path) -> dict[str, float]:
    client = connect()
    figures: dict[str, float] = {}
    _, figures["base_image_s"] = _timed(
        ensure_base_image, client, PYTHON, DockerConfig(), scratch / "base"
    )
    cold_backend = DockerBackend(scratch / "cold")
    marker = uuid.uuid4().hex
    environment, figures["env_cold_s"] = _timed(cold_backend.prepare, _spec(marker))
    second, figures["env_cold_warm_uv_cache_s"] = _timed(
        cold_backend.prepare, _spec(uuid.uuid4().hex)
    )
    _, figures["env_warm_s"] = _timed(cold_backend.prepare, _spec(marker))
    try:
        figures.update(_runs(cold_backend, environment, runs, scratch, marker))
    finally:
        for built in (environment, second):  # the benchmark's own images, never reused
            client.images.remove(built.image_id, force=True)
    return {name: round(value, 3) for name, value in figures.items()}


def _runs(backend, environment, runs: int, scratch: Path, marker: str) -> dict[str, float]:
    figures: dict[str, float] = {}

    demo = generate_demo(scratch / "demo")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=demo.repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    local_python = LocalEnvironments(scratch / "local-envs").python(_spec(marker))
    command = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *TEST_FILES]

    raw, contained, empty = [], [], []
    with backend.session(environment, demo.repo / ".git", commit, scratch / "run") as session:
        for index in range(runs):
            env = {
                "PATH": f"{local_python.parent}{os.pathsep}{os.environ['PATH']}",
                "PYTHONPATH": str(session.tree),
                "PYTHONDONTWRITEBYTECODE": "1",
                "HOME": str(scratch),
            }
            started = time.perf_counter()
            subprocess.run(command, cwd=session.tree, env=env, capture_output=True, check=True)
            raw.append(time.perf_counter() - started)
            log = scratch / "logs" / f"run-{index}.log"
            started = time.perf_counter()
            completed = session.run(command, log, timeout_s=300)
            contained.append(time.perf_counter() - started)
            if completed.exit_code != 0:
                raise RuntimeError(f"the demo's tests failed in the container: see {log}")
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
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="swt-bench-docker-") as scratch:
        figures = measure(args.runs, Path(scratch))
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:8.3f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
