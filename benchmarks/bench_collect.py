"""GitHub API calls per candidate PR: a cold collect of a 520-PR replay, then 20 new PRs.

Runs the real PyGithub client against the loopback replay server over a synthetic repository
(recipes/demo/synthetic.py: 65 % of its PRs become candidates, the rest are dropped for the
usual reasons).  Goals (issue 3): at most 3 calls per candidate PR, amortized; at most one
call per 100 already-seen PRs on an incremental rerun.

    .venv/bin/python -m benchmarks.bench_collect [--pulls 520] [--new 20]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path

from builder.core.pipeline import RejectedLog
from builder.core.store import ResultStore
from recipes.demo.github_replay import ReplayServer
from recipes.demo.synthetic import build_world
from recipes.github.client import GitHubClient, RetryPolicy
from recipes.github.collect import collect
from recipes.recipe import Recipe


def _run(server: ReplayServer, world, work: Path):
    client = GitHubClient(server.url, ["bench-token"], RetryPolicy())
    before = len(server.calls)
    started = time.monotonic()
    result = collect(
        [Recipe(repo=world.repo)],
        client,
        work_dir=work,
        state_dir=work / "state",
        repos={world.repo: str(world.mirror)},
        store=ResultStore(work / "store"),
        rejected=RejectedLog(),
        echo=lambda _: None,
    )
    calls = server.calls[before:]
    return result, client, calls, time.monotonic() - started


def _by_endpoint(calls) -> str:
    kinds = collections.Counter(
        "graphql" if c.path == "/graphql"
        else "comments" if c.path.endswith("/comments")
        else "issues" if "/issues/" in c.path
        else "pulls"
        for c in calls
    )  # fmt: skip
    return ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulls", type=int, default=520, help="PRs in the first replay")
    parser.add_argument("--new", type=int, default=20, help="PRs added before the rerun")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as scratch:
        root, work = Path(scratch) / "world", Path(scratch) / "work"
        world = build_world(root, args.pulls)
        with ReplayServer(world.fixtures) as server:
            cold, client, calls, seconds = _run(server, world, work)
            kept = len(cold.candidates)
            print(f"cold collect: {cold.stats.seen} PRs, {kept} candidates, {len(calls)} API calls")
            print(f"  by endpoint: {_by_endpoint(calls)}; {seconds:.1f}s")
            print(f"  calls per candidate PR: {len(calls) / kept:.2f} (goal <= 3)")
            print(f"  calls per listed PR:    {len(calls) / cold.stats.seen:.2f}")

            world = build_world(root, args.pulls + args.new)  # the same PRs plus newer ones
            server.set_fixtures(world.fixtures)
            warm, client, calls, seconds = _run(server, world, work)
            new_numbers = set(world.pull_numbers[args.pulls :])
            new_issues = {n - 1 for n in new_numbers}
            for_new = [
                c for c in calls
                if c.path == "/graphql"
                or any(f"/issues/{n}" in c.path for n in new_issues | new_numbers)
            ]  # fmt: skip
            seen = warm.stats.seen - len(new_numbers)
            listing = len(calls) - len(for_new)
            print(
                f"incremental rerun: {warm.stats.seen} PRs ({args.new} new, "
                f"{warm.stats.cached} from the store), {len(calls)} API calls"
            )
            print(f"  by endpoint: {_by_endpoint(calls)}; {seconds:.1f}s")
            print(f"  calls for the {len(new_numbers)} new PRs: {len(for_new)}")
            print(
                f"  calls for the {seen} already-seen PRs (listing): {listing} = "
                f"{100 * listing / seen:.2f} per 100 seen PRs (goal <= 1)"
            )
            again, client, calls, _ = _run(server, world, work)
            print(f"rerun with nothing new: {len(calls)} API call(s)")


if __name__ == "__main__":
    main()
