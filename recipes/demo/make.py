"""Write the whole offline demo: repository, SWE-bench-format records and its GitHub fixtures."""

from __future__ import annotations

import argparse
from pathlib import Path

from recipes.demo.generate import DemoPaths, write_repo_and_records
from recipes.demo.github_demo import generate_github_demo


def generate_demo(out_dir: Path) -> DemoPaths:
    """(Re)create ``out_dir/repo``, ``records.jsonl`` and ``github/``; identical on every run."""
    paths, shas = write_repo_and_records(out_dir)
    generate_github_demo(Path(out_dir).resolve() / "github", paths.repo, shas)
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path, help="where to (re)create the demo")
    paths = generate_demo(parser.parse_args(argv).out_dir)
    print(f"repository: {paths.repo}\nrecords:    {paths.records}")


if __name__ == "__main__":
    main()
