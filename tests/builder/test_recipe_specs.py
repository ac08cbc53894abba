"""Where recipes and environment specs meet: a recipe's spec must be a valid spec of its repo."""

from pathlib import Path

import pytest

from builder.build import recipe_spec_files
from builder.core.config import ConfigError

SPEC_OF_O_R = 'repo = "o/r"\n[defaults]\npackages = ["pytest"]\n'


def _recipe(tmp_path: Path, spec: str | None) -> Path:
    if spec is not None:
        (tmp_path / "env.toml").write_text(spec, encoding="utf-8")
    path = tmp_path / "recipe.toml"
    path.write_text('repo = "o/r"\nenvironment = "env.toml"\n', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (None, "not found"),
        ('repo = "o/other"\n', "is for o/other, not o/r"),
        ('repo = "o/r"\n[defaults]\nrunner = "nose"\n', "invalid environment spec"),
    ],
)
def test_a_recipes_environment_must_be_a_spec_of_its_repo(
    tmp_path: Path, spec: str | None, message: str
) -> None:
    path = _recipe(tmp_path, spec)
    with pytest.raises(ConfigError, match=message) as caught:
        recipe_spec_files([path])
    assert str(path) in str(caught.value)


def test_a_recipes_valid_spec_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    path = _recipe(tmp_path, SPEC_OF_O_R)
    assert recipe_spec_files([path]) == [str(tmp_path / "env.toml")]
    no_spec = tmp_path / "plain.toml"
    no_spec.write_text('repo = "o/r"\n', encoding="utf-8")
    assert recipe_spec_files([no_spec]) == []
