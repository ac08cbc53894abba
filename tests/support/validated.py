"""A fixture repository's one instance, validated as the toolkit validates (local backend,
coverage on) and released under several ids: the dataset evaluation tests score."""

from __future__ import annotations

from pathlib import Path

from builder.core.config import Config, ValidationConfig
from builder.core.records import Instance
from recipes.swe_bench import to_candidate
from tests.support.git import GitRepo
from tests.support.instances import make_release
from tests.support.records import swe_record
from validation.stage import ValidateStage


def validated_release(
    root: Path, repo_name: str, files: dict[str, str], fixed: str, golden: str, ids: list[str]
) -> tuple[Path, Config, Instance]:
    """``files`` committed in a repository named ``repo_name`` (``pkg/__init__.py`` and
    ``tests/test_pkg.py`` among them); the instance whose fix makes ``pkg/__init__.py``
    ``fixed`` and whose test patch makes ``tests/test_pkg.py`` ``golden``, validated with
    coverage and released under ``ids``: the dataset dir, a config that evaluates it, and the
    validated instance."""
    repo = GitRepo(root / "repo")
    base = repo.commit(files)
    patch = repo.diff({"pkg/__init__.py": fixed})
    test_patch = repo.diff({"tests/test_pkg.py": golden})
    settings = ValidationConfig(
        backend="local", python="3.11", packages=["pytest"], timeout_s=60, repetitions=1
    )
    candidate = to_candidate(swe_record(repo_name, 1, base, patch, test_patch))
    stage = ValidateStage(settings, root / "validate", {repo_name: str(repo.path)})
    outcome = stage.process(candidate)
    assert outcome.verdict.kept, outcome.verdict
    validated = outcome.output
    instances = [validated.model_copy(update={"instance_id": name}) for name in ids]
    release, _ = make_release(root / "dist", instances, size=0)
    config = Config(
        work_dir=root / "work",
        output_dir=root / "out",
        repos={repo_name: str(repo.path)},
        jobs=2,
        validation=settings,
    )
    return release.dataset_dir, config, validated
