"""A setuptools-scm fixture project: its version comes from its git tags, and its package imports
the ``_version.py`` that setuptools-scm writes at install (untracked): a checkout without that
file cannot import it, an install without ``.git`` cannot compute the version."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.git import GitRepo

REPO = "fixture/scm"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "scmfix"
dynamic = ["version"]

[tool.setuptools]
packages = ["scmfix"]

[tool.setuptools_scm]
version_file = "scmfix/_version.py"
"""
INIT = "from scmfix._version import version as __version__\n\n\ndef sub(a, b):\n    return a + b\n"
FIXED = INIT.replace("return a + b", "return a - b")
TESTS = """\
import scmfix


def test_version_is_the_tags():
    assert scmfix.__version__.startswith("0.1.")


def test_import():
    assert scmfix.sub
"""
GOLDEN = TESTS + "\n\ndef test_sub():\n    assert scmfix.sub(5, 3) == 2\n"
FAIL_TO_PASS = ["tests/test_scmfix.py::test_sub"]
PASS_TO_PASS = [
    "tests/test_scmfix.py::test_import",
    "tests/test_scmfix.py::test_version_is_the_tags",
]


def project(root: Path) -> tuple[GitRepo, str]:
    """The repository (tag ``v0.1.0``, then the base commit) and its base commit."""
    repo = GitRepo(root / "scm-repo")
    repo.commit({"pyproject.toml": PYPROJECT, ".gitignore": "scmfix/_version.py\n",
                 "scmfix/__init__.py": "def sub(a, b):\n    return a + b\n"})  # fmt: skip
    repo.git("tag", "v0.1.0")
    base = repo.commit({"scmfix/__init__.py": INIT, "tests/test_scmfix.py": TESTS})
    return repo, base


def record(repo: GitRepo, base: str) -> dict:
    """The SWE-bench-format record of the fix: ``test_sub`` fails before it, passes after."""
    return {
        "instance_id": "fixture__scm-1",
        "repo": REPO,
        "base_commit": base,
        "patch": repo.diff({"scmfix/__init__.py": FIXED}),
        "test_patch": repo.diff({"tests/test_scmfix.py": GOLDEN}),
        "problem_statement": "sub adds instead of subtracting\n",
        "created_at": "2024-01-02T00:00:00Z",
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps(FAIL_TO_PASS),
        "PASS_TO_PASS": json.dumps(PASS_TO_PASS),
    }


def config(root: Path, backend: str = "local") -> Path:
    """A configuration building the fixture's one record on ``backend`` (Python 3.11, pytest)."""
    repo, base = project(root)
    records = root / "records.jsonl"
    records.write_text(json.dumps(record(repo, base)) + "\n")
    path = root / "swt-builder.toml"
    path.write_text(
        f'name = "scm"\n[source]\nkind = "swe-bench"\npath = "{records}"\n'
        f'[repos]\n"{REPO}" = "{repo.path}"\n[text]\nenabled = false\n'
        f'[validation]\nbackend = "{backend}"\npython = "3.11"\npackages = ["pytest"]\n'
        "repetitions = 1\ntimeout_s = 120\n"
    )
    return path
