"""Environment spec files: schema validation, entries per version range, and resolution."""

import json
import textwrap
from pathlib import Path

import pytest
import tomllib

from builder.core.config import ValidationConfig, packaged_spec_dir
from recipes.swe_bench import to_candidate
from tests.support.records import swe_record
from validation.environments.resolution import EnvironmentResolver, resolve
from validation.environments.specs import (
    RepoSpec,
    Settings,
    SpecError,
    SpecLibrary,
    load_spec,
    spec_file_name,
)

SPEC = textwrap.dedent(
    """
    repo = "acme/widgets"

    [version]
    digits = 2
    rules = [{ kind = "metadata" }, { kind = "git-tag" }]
    setup_commits = { "2.0" = "SETUP" }

    [defaults]
    python = "3.9"
    packages = ["pytest==8.3.5", "hypothesis"]
    env = { WIDGETS_MODE = "test" }

    [[environments]]
    versions = "<2.0"
    python = "3.8"
    packages = ["pytest==7.4.4"]
    runner = "unittest"

    [[environments]]
    versions = ">=2.0"
    extras = ["test"]
    """
)


def _write(tmp_path, text, name="acme__widgets.toml"):
    directory = tmp_path / "specs"
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(text)
    return directory


def test_entries_by_version_range_merge_over_defaults(tmp_path):
    spec = load_spec(_write(tmp_path, SPEC) / "acme__widgets.toml")
    old = spec.settings("1.4")
    assert isinstance(old, Settings)
    assert old.python == "3.8" and old.packages == ["pytest==7.4.4"]
    assert old.runner == "unittest" and old.env == {"WIDGETS_MODE": "test"}
    new = spec.settings("2.1")
    assert new.python == "3.9" and new.extras == ["test"]
    assert new.packages == ["pytest==8.3.5", "hypothesis"]
    # what no layer sets comes from the model's own defaults
    assert new.runner == "pytest" and new.install == "project" and new.install_command == ""
    assert new.requirements == [] and new.test_command is None and new.dated is None


def test_an_entry_setting_a_default_value_still_overrides_the_defaults(tmp_path):
    text = textwrap.dedent(
        """
        repo = "acme/widgets"

        [defaults]
        install = "none"
        runner = "unittest"

        [[environments]]
        versions = "<2.0"

        [[environments]]
        versions = ">=2.0"
        install = "project"
        """
    )
    spec = load_spec(_write(tmp_path, text) / "acme__widgets.toml")
    assert spec.settings("1.4").install == "none" and spec.settings("1.4").runner == "unittest"
    assert spec.settings("2.1").install == "project" and spec.settings("2.1").runner == "unittest"
    again = load_spec(_write(tmp_path, spec.to_toml(), "again.toml") / "again.toml")
    assert again.settings("2.1") == spec.settings("2.1")
    assert again.settings("1.4") == spec.settings("1.4")


@pytest.mark.parametrize(
    "change, message",
    [
        (('python = "3.9"', 'pythn = "3.9"'), "pythn"),
        (('versions = "<2.0"', 'versions = "2.0 or older"'), "not a version specifier"),
        (('runner = "unittest"', 'runner = "nose"'), "runner"),
        (('runner = "unittest"', 'test_command = ["pytest", "-x"]'), "must start with python"),
        (('runner = "unittest"', "test_command = []"), "test_command"),
        (("digits = 2", "digits = 7"), "digits"),
        (('repo = "acme/widgets"', 'repo = "widgets"'), "repo"),
    ],
)
def test_invalid_specs_name_the_file_and_field(tmp_path, change, message):
    directory = _write(tmp_path, SPEC.replace(*change))
    with pytest.raises(SpecError) as error:
        SpecLibrary([directory])
    assert "acme__widgets.toml" in str(error.value) and message in str(error.value)


def test_no_entry_for_a_version(tmp_path):
    spec = load_spec(
        _write(tmp_path, SPEC.replace('versions = ">=2.0"', 'versions = ">=2.0,<3"'))
        / "acme__widgets.toml"
    )
    with pytest.raises(SpecError, match="no environment entry for version 3.1"):
        spec.settings("3.1")


def test_bundled_specs_are_valid_and_named_after_their_repo():
    library = SpecLibrary([packaged_spec_dir()])
    assert {"marshmallow-code/marshmallow", "sqlfluff/sqlfluff", "pvlib/pvlib-python",
            "pyvista/pyvista", "swt-demo/calc"} <= set(library.specs)  # fmt: skip
    for repo, path in library.files.items():
        assert path.name == spec_file_name(repo)


def test_the_resolver_reads_the_bundled_specs_the_settings_name(tmp_path):
    packaged = EnvironmentResolver(ValidationConfig(), tmp_path / "inferred", list)
    assert "swt-demo/calc" in packaged.library.specs
    assert packaged.library.files["swt-demo/calc"].parent == packaged_spec_dir()
    own = _write(tmp_path, SPEC)
    settings = ValidationConfig(bundled_spec_dir=str(own))
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", list)
    assert set(resolver.library.specs) == {"acme/widgets"}
    off = ValidationConfig(bundled_spec_dir=str(own), bundled_specs=False)
    assert EnvironmentResolver(off, tmp_path / "inferred", list).library.specs == {}
    missing = ValidationConfig(bundled_spec_dir=str(tmp_path / "nowhere"))
    with pytest.raises(SpecError, match="nowhere does not exist"):
        EnvironmentResolver(missing, tmp_path / "inferred", list)


def test_digest_follows_content_per_repository(tmp_path):
    first = SpecLibrary([_write(tmp_path, SPEC)]).digest("acme/widgets")
    assert SpecLibrary([_write(tmp_path, SPEC)]).digest("acme/widgets") == first
    changed = SpecLibrary([_write(tmp_path, SPEC.replace("hypothesis", "hypothesis<6"))])
    assert changed.digest("acme/widgets") != first
    assert changed.digest("acme/other") == ""


def test_editing_one_repos_spec_changes_only_that_repos_result_keys(tmp_path):
    from validation.stage import ValidateStage

    other = 'repo = "acme/other"\n[defaults]\npackages = ["pytest"]\n'
    _write(tmp_path, other, "acme__other.toml")
    spec_dir = _write(tmp_path, SPEC)
    settings = ValidationConfig(backend="local", spec_dirs=[str(spec_dir)], bundled_specs=False)
    widgets = to_candidate(swe_record("acme/widgets", 1, "a" * 40, "p", "t"))
    others = to_candidate(swe_record("acme/other", 2, "b" * 40, "p", "t"))
    before = ValidateStage(settings, tmp_path / "work", {})
    keys = before.key(widgets), before.key(others)
    _write(tmp_path, SPEC.replace("hypothesis", "hypothesis<6"))
    after = ValidateStage(settings, tmp_path / "work", {})
    assert after.key(widgets) != keys[0]
    assert after.key(others) == keys[1]


def test_to_toml_round_trips(tmp_path):
    spec = load_spec(_write(tmp_path, SPEC) / "acme__widgets.toml")
    again = _write(tmp_path, spec.to_toml(), "again.toml") / "again.toml"
    assert load_spec(again) == spec


def test_resolve_record_version_setup_commit_date_and_pins(tmp_path, git_repo):
    old = git_repo.commit({"setup.py": "setup(name='w', version='1.9.0')\n"})
    git_repo.git("tag", "v1.9.0")
    setup = git_repo.commit({"setup.py": "setup(name='w', version='2.0.0')\n"})
    base = git_repo.commit({"w.py": "x = 1\n"})
    spec = RepoSpec.model_validate(tomllib.loads(SPEC.replace("SETUP", setup)))
    resolution = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=["3.9"])
    assert (resolution.version, resolution.version_source) == ("2.0", "metadata")
    assert resolution.environment_commit == setup
    env = resolution.spec
    assert env.python == "3.9" and env.extras == ("test",) and env.project_commit == setup
    assert env.exclude_newer == "2024-01-01T00:00:00Z"  # the environment commit's date
    assert env.pins == ("pytest==8.3.5",) and env.unpinned == ("hypothesis",)
    assert env.env == (("WIDGETS_MODE", "test"),)
    assert resolution.metadata()["version"] == "2.0"
    # the record's version wins; a version's setup commit comes from its first release tag
    older = resolve(spec, mirror=git_repo.path, base_commit=base, record_version="1.9",
                    available_pythons=["3.9"], dated_default=False)  # fmt: skip
    assert older.version_source == "record" and older.detected_version == "2.0"
    assert older.environment_commit == old and older.spec.python == "3.8"
    assert older.spec.exclude_newer == "" and older.spec.runner == "unittest"
    # the record's own environment_setup_commit is used when the spec names none
    given = resolve(spec, mirror=git_repo.path, base_commit=base, record_version="1.9",
                    record_setup_commit=base, available_pythons=["3.9"])  # fmt: skip
    assert given.environment_commit == base


def test_python_of_the_era_when_the_spec_names_none(git_repo):
    base = git_repo.commit(
        {"setup.py": "setup(name='w', version='1.0', python_requires='>=3.6')\n"}
    )
    spec = RepoSpec(repo="acme/widgets")
    resolution = resolve(
        spec, mirror=git_repo.path, base_commit=base, available_pythons=["3.8", "3.11", "3.12"]
    )
    assert resolution.spec.python == "3.11"  # 2024-01-01: 3.12 is less than a year old
    with pytest.raises(SpecError, match="no Python available"):
        resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=[])


def test_resolver_infers_and_writes_a_spec_when_none_exists(tmp_path, git_repo):
    base = git_repo.commit(
        {
            "pyproject.toml": '[project]\nname = "w"\nversion = "0.2.0"\n'
            '[project.optional-dependencies]\ntest = ["pytest", "hypothesis>=6"]\n',
        }
    )
    settings = ValidationConfig(bundled_specs=False, packages=["pytest"])
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: ["3.11"])
    candidate = to_candidate(swe_record("acme/widgets", 1, base, "p", "t", version=""))
    resolution = resolver.resolve(candidate, git_repo.path)
    assert resolution.spec_source == "inferred" and resolution.version == "0.2"
    assert set(resolution.spec.packages) == {"pytest", "hypothesis>=6"}
    written = load_spec(tmp_path / "inferred" / "acme__widgets.toml")
    assert written.repo == "acme/widgets" and "Review" in written.note


@pytest.mark.slow
def test_stage_chooses_the_spec_per_candidate_and_records_it(tmp_path, git_repo):
    from validation.stage import ValidateStage

    code = "def add(a, b):\n    return a - b\n"
    tests = "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    # P→F after the fix: kept only because the spec's test_command deselects it
    tests += "\n\ndef test_old_behaviour():\n    assert add(1, 2) == -1\n"
    base = git_repo.commit({"pkg/__init__.py": code, "setup.cfg": "[metadata]\nversion = 1.2.0\n"})
    test_patch = git_repo.diff({"tests/test_pkg.py": tests})
    patch = git_repo.diff({"pkg/__init__.py": code.replace("a - b", "a + b")})
    spec_dir = _write(
        tmp_path,
        'repo = "acme/pkg"\n[defaults]\ninstall = "none"\npackages = ["pytest"]\n'
        'env = { ACME = "1" }\n[[environments]]\nversions = ">=1.0"\ndated = false\n'
        'test_command = ["python", "-m", "pytest", "-k", "not old_behaviour"]\n',
        "acme__pkg.toml",
    )
    settings = ValidationConfig(
        backend="local", spec_dirs=[str(spec_dir)], bundled_specs=False, repetitions=1,
        coverage=False,
    )  # fmt: skip
    stage = ValidateStage(settings, tmp_path / "work", {"acme/pkg": str(git_repo.path)})
    record = swe_record("acme/pkg", 7, base, patch, test_patch, version="",
                        environment_setup_commit="")  # fmt: skip
    outcome = stage.process(to_candidate(record))
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.version == "1.2" and instance.environment_setup_commit == base
    metadata = instance.run_metadata
    assert metadata["version_source"] == "metadata" and metadata["exclude_newer"] == ""
    assert metadata["environment_spec"].endswith("acme__pkg.toml")
    assert metadata["runner"] == "pytest" and metadata["environment_commit"] == base
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    runs = Path(outcome.verdict.evidence["runs"]).read_text().splitlines()
    launcher = ["python", "-m", "pytest", "-k", "not old_behaviour"]
    assert runs and all(json.loads(run)["command"][:5] == launcher for run in runs)
