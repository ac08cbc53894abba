"""Config: TOML file or [tool.swt-builder], CLI overrides, path resolution, clear errors."""

import subprocess
import sys
from pathlib import Path

import pytest

import recipes
from builder.core.config import ConfigError, ValidationConfig, load_config, packaged_spec_dir


def test_defaults_without_a_file(tmp_path):
    config = load_config(cwd=tmp_path)
    assert config.name == "swt-dataset"
    assert config.output_dir == (tmp_path / "dist").resolve()
    assert config.work_dir == (tmp_path / ".swt-work").resolve()
    assert config.validation.timeout_s == 900


def test_own_file_paths_are_relative_to_it(tmp_path):
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "records.jsonl").write_text("")
    (folder / "swt-builder.toml").write_text(
        'name = "x"\nwork_dir = "w"\n[source]\npath = "records.jsonl"\n'
        '[repos]\n"o/r" = "clone"\n"o/s" = "https://example.invalid/o/s.git"\n'
        "[validation]\ntimeout_s = 5\n"
    )
    config = load_config(folder / "swt-builder.toml", cwd=tmp_path)
    assert config.work_dir == (folder / "w").resolve()
    assert config.source.path == str((folder / "records.jsonl").resolve())
    assert config.repos == {
        "o/r": str((folder / "clone").resolve()),
        "o/s": "https://example.invalid/o/s.git",
    }
    assert config.validation.timeout_s == 5


def test_found_in_cwd_and_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.swt-builder]\nname = "from-pyproject"\n')
    assert load_config(cwd=tmp_path).name == "from-pyproject"
    (tmp_path / "swt-builder.toml").write_text('name = "own-file"\n')
    assert load_config(cwd=tmp_path).name == "own-file"


def test_overrides_win_and_parse_toml_values(tmp_path):
    (tmp_path / "swt-builder.toml").write_text("[validation]\ntimeout_s = 5\n")
    config = load_config(
        overrides=["validation.timeout_s=7.5", "name=plain-text", 'validation.packages=["a"]'],
        cwd=tmp_path,
    )
    assert config.validation.timeout_s == 7.5
    assert config.name == "plain-text"
    assert config.validation.packages == ["a"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("nonsense = 1\n", "nonsense"),
        ("[validation]\ntimeout_s = -1\n", "timeout_s"),
        ("[validation]\nbackend = 'cloud'\n", "backend"),
        ("name = [\n", "not valid TOML"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, text, message):
    path = tmp_path / "swt-builder.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_bad_override_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load_config(overrides=["timeout"], cwd=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.toml")


def test_no_field_can_hold_a_token(tmp_path):
    with pytest.raises(ConfigError, match="github_token"):
        load_config(overrides=["github_token=secret"], cwd=tmp_path)
    assert "secret" not in str(load_config(cwd=tmp_path).resolved())


def test_a_recipes_environment_spec_wins_in_validation(tmp_path):
    from builder.build import validation_settings
    from validation.environments.resolution import EnvironmentResolver

    for folder, note in (("specs", "from spec_dirs"), ("recipe-specs", "the recipe's")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "o__r.toml").write_text(f'repo = "o/r"\nnote = "{note}"\n')
    (tmp_path / "r.toml").write_text('repo = "o/r"\nenvironment = "recipe-specs/o__r.toml"\n')
    (tmp_path / "swt-builder.toml").write_text(
        '[source]\nkind = "github"\nrecipes = ["r.toml"]\n[validation]\nspec_dirs = ["specs"]\n'
    )
    config = load_config(tmp_path / "swt-builder.toml", cwd=tmp_path)
    settings = validation_settings(config)
    assert settings.spec_files == [str(tmp_path / "recipe-specs" / "o__r.toml")]
    library = EnvironmentResolver(settings, tmp_path / "inferred", list).library
    assert library.get("o/r").note == "the recipe's"
    assert library.files["o/r"] == tmp_path / "recipe-specs" / "o__r.toml"


def test_bundled_specs_default_to_the_installed_recipes_environments(tmp_path):
    packaged = Path(recipes.__file__).parent / "environments"
    assert packaged_spec_dir() == packaged and packaged.is_dir()
    assert ValidationConfig().bundled_spec_path() == packaged
    assert ValidationConfig(bundled_specs=False).bundled_spec_path() is None
    own = ValidationConfig(bundled_spec_dir=str(tmp_path))
    assert own.bundled_spec_path() == tmp_path
    # the default is no machine's absolute path: saved configs and result keys stay portable
    assert ValidationConfig().model_dump()["bundled_spec_dir"] == ""


def test_the_ground_floor_finds_the_bundled_specs_without_importing_recipes():
    code = (
        "import sys; from builder.core.config import ValidationConfig; "
        "path = ValidationConfig().bundled_spec_path(); "
        "assert 'recipes' not in sys.modules, 'recipes was imported'; "
        "assert (path / 'swt-demo__calc.toml').is_file(), path"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(recipes.__file__).parents[1])


def test_a_bundled_spec_dir_in_a_file_is_relative_to_it(tmp_path):
    (tmp_path / "swt-builder.toml").write_text('[validation]\nbundled_spec_dir = "specs"\n')
    config = load_config(tmp_path / "swt-builder.toml", cwd=tmp_path / "elsewhere")
    assert config.validation.bundled_spec_path() == (tmp_path / "specs").resolve()


def test_each_error_is_one_line_with_its_key_its_source_and_a_likely_key(tmp_path):
    path = tmp_path / "swt-builder.toml"
    path.write_text("[validation]\ntimout_s = 5\nrepetitions = 'many'\n")
    overrides = ["validation.covrage=false", "jbos=3"]
    with pytest.raises(ConfigError) as caught:
        load_config(path, overrides=overrides, cwd=tmp_path)
    lines = str(caught.value).removeprefix("invalid configuration: ").splitlines()
    assert sorted(lines) == [
        "jbos: unknown key; did you mean jobs? (--set jbos)",
        "validation.covrage: unknown key; did you mean validation.coverage? "
        "(--set validation.covrage)",
        "validation.repetitions: Input should be a valid integer, unable to parse string as an "
        f"integer ({path})",
        f"validation.timout_s: unknown key; did you mean validation.timeout_s? ({path})",
    ]
