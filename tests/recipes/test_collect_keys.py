"""The collect stage's cache key names the GitHub the PRs are on, not the URL that reached it."""

from __future__ import annotations

import contextlib
import io

import pytest

from builder.cli import main
from builder.core.store import ResultStore
from recipes.demo.github_demo import RECIPE
from recipes.demo.github_replay import ReplayServer
from recipes.demo.make import generate_demo
from recipes.demo.serve import LOOPBACK_TOKEN
from recipes.github.collect import github_instance


@pytest.mark.parametrize(
    ("url", "instance"),
    [
        ("https://api.github.com", "github.com"),
        ("https://api.github.com/", "github.com"),
        ("https://GHE.example.com/api/v3", "ghe.example.com"),
        ("https://ghe.example.com:8443/api/v3", "ghe.example.com"),
        ("http://127.0.0.1:36959", "127.0.0.1"),
        ("http://127.0.0.1:41001", "127.0.0.1"),
    ],
)
def test_github_instance_is_the_host_without_scheme_port_or_path(url, instance) -> None:
    assert github_instance(url) == instance


def test_enterprise_and_github_com_stay_apart() -> None:
    assert github_instance("https://ghe.example.com/api/v3") != github_instance(
        "https://api.github.com"
    )


def test_a_rerun_against_a_new_loopback_port_computes_nothing(tmp_path) -> None:
    """The demo's GitHub is served on a fresh port each run: the second run reuses every PR."""
    demo = generate_demo(tmp_path / "demo")
    work = tmp_path / "work"
    argv = ["collect", "--recipe", str(RECIPE), "--output", str(tmp_path / "candidates.jsonl")]
    argv += ["--work-dir", str(work), "--no-progress"]
    argv += ["--set", f'repos={{"swt-demo/calc" = "{demo.github_repo}"}}']
    printed, ports = [], set()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GITHUB_TOKEN", LOOPBACK_TOKEN)
        env.delenv("GITHUB_TOKENS", raising=False)
        for _ in range(2):
            with ReplayServer.from_json(demo.github_fixtures) as server:
                ports.add(server.url)
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    assert main([*argv, "--base-url", server.url]) == 0
                printed.append(buffer.getvalue())
            if len(printed) == 1:
                stored = sorted(ResultStore(work / "store").keys("collect"))
    assert len(ports) == 2, "the two runs were served on the same port: nothing was tested"
    assert "0 already in the store" in printed[0]
    assert "13 PRs in range" in printed[1] and "13 already in the store" in printed[1]
    assert "incremental listing" in printed[1] and "GitHub API calls: 1" in printed[1]
    assert sorted(ResultStore(work / "store").keys("collect")) == stored
