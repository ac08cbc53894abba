"""Serve fixture JSON as a GitHub API on 127.0.0.1 while a command runs against it."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from recipes.demo.github_replay import ReplayServer

__all__ = ["LOOPBACK_TOKEN", "main", "serve_while"]

LOOPBACK_TOKEN = "loopback-demo-token"
"""The token the command gets: the replay server wants one for GraphQL; a real one never
goes to the loopback server."""


def serve_while(fixtures: Path, command: list[str]) -> int:
    """Run ``command`` with ``{base_url}`` replaced by the server's URL; return its exit code."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GITHUB_TOKENS")}
    env["GITHUB_TOKEN"] = LOOPBACK_TOKEN
    with ReplayServer.from_json(fixtures) as server:
        argv = [part.replace("{base_url}", server.url) for part in command]
        print(f"serving {fixtures} as a GitHub API at {server.url}", flush=True)
        return subprocess.run(argv, env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fixtures", type=Path, help="fixture JSON (github_objects.make_fixtures)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    return serve_while(args.fixtures, command)


if __name__ == "__main__":
    sys.exit(main())
