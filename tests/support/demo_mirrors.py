"""The offline demo's repository and records laid out as the benchmarks read histories: a
``--repos-dir`` holding ``swt-demo__calc.git``."""

from __future__ import annotations

from pathlib import Path

from recipes.demo.generate import DemoPaths, write_repo_and_records


def demo_mirrors(root: Path) -> tuple[DemoPaths, Path]:
    """The demo written under ``root/demo``, and a repos dir whose ``swt-demo__calc.git`` is it."""
    paths, _ = write_repo_and_records(root / "demo")
    repos = root / "repos"
    repos.mkdir()
    (repos / "swt-demo__calc.git").symlink_to(paths.repo)
    return paths, repos
