"""Validation result keys hold what can change a result, and nothing that only says where."""

from __future__ import annotations

from builder.core.config import ValidationConfig
from recipes.swe_bench import make_record, to_candidate
from validation.stage import ValidateStage

CANDIDATE = to_candidate(make_record("o/r", 1, "a" * 40, "patch", "test patch"))


def _key(tmp_path, **settings) -> str:
    stage = ValidateStage(ValidationConfig(**settings), tmp_path / "work", {})
    return stage.key(CANDIDATE)


def test_auto_and_the_backend_it_chose_give_the_same_keys(tmp_path) -> None:
    auto = ValidateStage(ValidationConfig(backend="auto"), tmp_path / "work", {})
    chosen = ValidateStage(ValidationConfig(backend=auto.backend.name), tmp_path / "work", {})
    assert chosen.backend.name == auto.backend.name
    assert chosen.fingerprint() == auto.fingerprint()
    assert chosen.key(CANDIDATE) == auto.key(CANDIDATE)


def test_where_things_live_is_not_in_the_key(tmp_path) -> None:
    base = _key(tmp_path, backend="local")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "specs").mkdir(parents=True)
    assert _key(tmp_path, backend="local", env_dir=str(elsewhere / "envs")) == base
    assert _key(tmp_path, backend="local", spec_dirs=[str(elsewhere / "specs")]) == base


def test_settings_that_change_results_change_the_key(tmp_path) -> None:
    base = _key(tmp_path, backend="local")
    assert _key(tmp_path, backend="local", timeout_s=21.0) != base
    assert _key(tmp_path, backend="local", repetitions=2) != base
    assert _key(tmp_path, backend="local", coverage=False) != base
    assert _key(tmp_path, backend="local", limits={"network": True}) != base


def test_the_jobs_setting_is_nowhere_in_the_stage(tmp_path) -> None:
    """Parallelism is the executor's (Config.jobs): the stage never sees it."""
    stage = ValidateStage(ValidationConfig(backend="local"), tmp_path / "work", {})
    assert "jobs" not in repr(stage.fingerprint())


def test_a_spec_letting_the_runs_use_the_network_changes_that_repository_key(tmp_path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "o__r.toml"
    spec.write_text('repo = "o/r"\n')
    offline = _key(tmp_path, backend="local", spec_dirs=[str(specs)])
    spec.write_text('repo = "o/r"\n\n[defaults]\nnetwork = true\n')
    assert _key(tmp_path, backend="local", spec_dirs=[str(specs)]) != offline


def test_a_reference_file_is_in_its_instance_key_and_its_directory_is_not(tmp_path) -> None:
    files = tmp_path / "reference"
    files.mkdir()
    base = _key(tmp_path, backend="local")
    assert _key(tmp_path, backend="local", reference_environments=str(files)) == base  # none
    export = files / "o__r" / "1" / "environment.yml"
    export.parent.mkdir(parents=True)
    export.write_text("dependencies:\n  - python=3.9.20=he870216_1\n  - pip:\n    - six==1.16.0\n")
    with_file = _key(tmp_path, backend="local", reference_environments=str(files))
    assert with_file != base
    export.write_text("dependencies:\n  - python=3.9.20=he870216_1\n  - pip:\n    - six==1.15.0\n")
    assert _key(tmp_path, backend="local", reference_environments=str(files)) != with_file
