"""Benchmark: a no-op rebuild of the demo against its cold build (target: at most 5 %)."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.05


def _overrides(source: str, out: Path, work: Path, base_url: str | None) -> list[str]:
    overrides = [f'output_dir="{out}"', f'work_dir="{work}"', f'source.kind="{source}"']
    if base_url:
        overrides.append(f'source.base_url="{base_url}"')
    return overrides


@contextlib.contextmanager
def _github(demo: Path, source: str):
    """The demo's loopback GitHub when the source is github (as `make build-dataset` serves)."""
    if source != "github":
        yield None
        return
    from recipes.demo.github_replay import ReplayServer
    from recipes.demo.serve import LOOPBACK_TOKEN

    saved = os.environ.get("GITHUB_TOKEN")
    os.environ["GITHUB_TOKEN"] = LOOPBACK_TOKEN
    try:
        with ReplayServer.from_json(demo / "github" / "fixtures.json") as server:
            yield server.url
    finally:
        if saved is None:
            os.environ.pop("GITHUB_TOKEN", None)
        else:
            os.environ["GITHUB_TOKEN"] = saved


def _in_process(config_path: Path, overrides: list[str]) -> float:
    from builder.build import build
    from builder.core.config import load_config

    start = time.perf_counter()
    build(load_config(config_path, overrides), progress=False, echo=lambda _: None)
    return time.perf_counter() - start


def _cli(config_path: Path, overrides: list[str], env_url: str | None) -> float:
    command = [sys.executable, "-m", "builder.cli", "build", "--config", str(config_path)]
    for override in overrides:
        command += ["--set", override]
    command.append("--no-progress")
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=Path(__file__).parents[1])
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", choices=["swe-bench", "github"], default="swe-bench")
    args = parser.parse_args(argv)
    from builder.cli import main as cli_main

    with tempfile.TemporaryDirectory(prefix="swt-bench-rebuild-") as scratch:
        root = Path(scratch)
        demo = root / "demo"
        with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115
            cli_main(["demo", str(demo)])
        config = demo / "swt-builder.toml"
        with _github(demo, args.source) as url:
            first = _overrides(args.source, root / "dist", root / "work", url)
            cold = _in_process(config, first)
            noop = _in_process(config, first)
            second = _overrides(args.source, root / "dist2", root / "work2", url)
            cold_cli = _cli(config, second, url)
            noop_cli = _cli(config, second, url)
    ratio, ratio_cli = noop / cold, noop_cli / cold_cli
    print(f"source: {args.source}")
    print(f"in-process: cold build {cold:.2f} s, no-op rebuild {noop:.3f} s = {ratio:.1%} of cold")
    print(f"CLI process: cold build {cold_cli:.2f} s, no-op rebuild {noop_cli:.2f} s = "
          f"{ratio_cli:.1%} of cold (includes interpreter start and imports)")  # fmt: skip
    verdict = "meets" if ratio <= TARGET else "MISSES"
    print(f"{verdict} the target: no-op rebuild ≤ {TARGET:.0%} of the cold build (in-process)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
