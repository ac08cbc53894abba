"""In an image's checkout the placer puts the files the install generated (setuptools-scm's
``_version.py``), never a file the environment commit tracks, as a run's start does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import scm_project
from validation.environments.environment import EnvironmentSpec
from validation.environments.generated import GENERATED_PLACER
from validation.environments.interpreters import Interpreters
from validation.environments.runtime import OLDEST_PYTHON
from validation.runs.backends.local import LocalBackend

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
PLACED = "placed (generated, not in the environment commit): {}\n"


@pytest.mark.slow
def test_the_generated_files_are_placed_and_the_environment_commits_never(tmp_path):
    repo, _ = scm_project.project(tmp_path)
    environment_commit = repo.git("rev-list", "-n", "1", "v0.1.0").strip()
    backend = LocalBackend(
        tmp_path / "work", env_dir=tmp_path / "envs", python_search_paths=[sys.executable]
    )
    spec = EnvironmentSpec(HERE, project=repo.path / ".git", project_commit=environment_commit)
    python = backend.prepare(spec)  # setuptools-scm writes scmfix/_version.py at the install
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(repo.path), str(checkout)], check=True)
    probe = [str(python), "-c", "import scmfix; print(scmfix.__version__)"]
    hidden = subprocess.run(probe, cwd=checkout, capture_output=True, text=True)
    assert "No module named 'scmfix._version'" in hidden.stderr
    tracked = checkout / "tests" / "test_scmfix.py"
    tracked.unlink()  # not in the checkout, not installed: nothing to place
    source = checkout / "scmfix" / "__init__.py"
    kept = source.read_text()
    source.unlink()  # installed, but tracked by the environment commit: source, never placed
    folder = GENERATED_PLACER.place(tmp_path / "tools")
    command = [str(python), str(folder / GENERATED_PLACER.script), environment_commit]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == PLACED.format("scmfix/_version.py")
    assert not source.exists() and not tracked.exists()
    source.write_text(kept)
    seen = subprocess.run(probe, cwd=checkout, capture_output=True, text=True)
    assert seen.stdout.strip() == "0.1.0", seen.stderr  # the environment commit's tag
    again = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == ""  # all there now


def test_the_placer_compiles_on_the_oldest_python(tmp_path):
    python = Interpreters().find(OLDEST_PYTHON)
    if python is None:
        pytest.skip(f"no Python {OLDEST_PYTHON} interpreter on this machine")
    folder = GENERATED_PLACER.place(tmp_path)
    code = "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')"
    for name in GENERATED_PLACER.contents:
        done = subprocess.run([python, "-c", code, str(folder / name)], capture_output=True)
        assert done.returncode == 0, done.stderr
