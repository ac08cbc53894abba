"""Names a project declared in its history up to a commit, and only those."""

from tests.support.git import GitRepo
from validation.environments.declared import declared_names, is_declared

WORKFLOW = """\
jobs:
  test:
    steps:
      - run: python -m pip install numpy
      - run: pytest -p no:xdist
"""


def test_names_from_any_declaring_file_at_any_commit_up_to_the_base(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.commit({"requirements-dev.txt": "pytest-xdist>=2\nPyYAML  # config\n"})
    repo.commit({"requirements-dev.txt": "pytest\n"})  # removed later: still declared
    repo.commit({".github/workflows/ci.yml": WORKFLOW, "setup.cfg": "[options]\n"})
    base = repo.commit({"tox.ini": "[testenv]\ndeps =\n    hypothesis[zoneinfo]\n"})
    later = repo.commit({"requirements-dev.txt": "bump-changelog\n"})
    names = declared_names(repo.path, base)
    assert {"pytest-xdist", "pyyaml", "numpy", "hypothesis"} <= names
    assert "xdist" not in names  # a part of pytest-xdist, and no:xdist is no name
    assert not is_declared("bump_changelog", repo.path, base)
    assert is_declared("bump_changelog", repo.path, later)


def test_a_file_that_declares_nothing_adds_no_names(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"pkg/doesnotexist.py": "import doesnotexist\n", "README": "xdist\n"})
    assert not is_declared("doesnotexist", repo.path, base)
    assert not is_declared("xdist", repo.path, base)


def test_what_a_golden_patch_adds_to_a_requirement_file_is_declared():
    """A fix that starts using a package declares it in the patch itself (pylint-4661's
    appdirs, in setup.cfg): the environment commit installs it, so its import may be met."""
    from validation.environments.declared import patch_names

    patch = (
        "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n"
        "@@ -1,2 +1,3 @@\n install_requires =\n+    appdirs>=1.4.0\n     astroid\n"
        "diff --git a/pylint/config.py b/pylint/config.py\n--- a/pylint/config.py\n"
        "+++ b/pylint/config.py\n@@ -1 +1,2 @@\n+import doesnotexist\n import os\n"
    )
    names = patch_names(patch)
    assert "appdirs" in names
    assert "doesnotexist" not in names and "import" not in names
