"""Size of a repository's Python code at a commit, read from git without a checkout."""

from __future__ import annotations

from pathlib import Path

from builder.core.gitutil import git


def codebase_size(mirror: Path, commit: str) -> tuple[int, int]:
    """(Python files, their lines) at ``commit``; files with no line count with zero lines."""
    files = [
        line for line in git("ls-tree", "-r", "--name-only", commit, cwd=mirror).splitlines()
        if line.endswith(".py")
    ]  # fmt: skip
    counts = git("grep", "--count", "-I", "-e", "", commit, "--", "*.py", cwd=mirror, check=False)
    lines = sum(int(line.rsplit(":", 1)[1]) for line in counts.splitlines() if ":" in line)
    return len(files), lines
