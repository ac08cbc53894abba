"""Tests for recipes/recipe.py: the recipe file schema, its dates and the bundled recipes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from recipes.patch_split import DEFAULT_TEST_PATTERNS
from recipes.recipe import Recipe, RecipeError, load_recipe

BUNDLED = sorted((Path(__file__).resolve().parents[2] / "recipes" / "repos").glob("*.toml"))
UTC = dt.timezone.utc


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_recipes_are_valid(path: Path) -> None:
    recipe = load_recipe(path)
    assert path.stem == recipe.repo.replace("/", "__")
    assert recipe.since is not None and recipe.max_prs


def test_bundled_recipes_include_the_demo_and_a_real_repository() -> None:
    assert {p.stem for p in BUNDLED} >= {"swt-demo__calc", "marshmallow-code__marshmallow"}


def test_minimal_recipe_gets_the_defaults(tmp_path: Path) -> None:
    recipe = load_recipe(_write(tmp_path, 'repo = "octo-org/octo-repo"\n'))
    assert recipe.paths.tests == DEFAULT_TEST_PATTERNS
    assert recipe.paths.require_python_code is True
    assert recipe.limits.max_files == 50
    assert recipe.linking.graphql and recipe.linking.commit_messages
    assert recipe.since_utc is None and recipe.until_utc is None and recipe.max_prs is None
    assert recipe.path_rules.is_test("pkg/tests/test_a.py")


def test_dates_since_inclusive_and_until_a_whole_day(tmp_path: Path) -> None:
    recipe = load_recipe(_write(tmp_path, 'repo = "o/r"\nsince = 2024-01-15\nuntil = 2024-01-31\n'))
    assert recipe.in_range(dt.datetime(2024, 1, 15, tzinfo=UTC))
    assert not recipe.in_range(dt.datetime(2024, 1, 14, 23, 59, 59, tzinfo=UTC))
    assert recipe.in_range(dt.datetime(2024, 1, 31, 23, 59, 59, tzinfo=UTC))
    assert not recipe.in_range(dt.datetime(2024, 2, 1, tzinfo=UTC))


def test_datetime_bounds_are_inclusive(tmp_path: Path) -> None:
    text = 'repo = "o/r"\nsince = 2024-01-15T12:00:00Z\nuntil = 2024-01-16T12:00:00Z\n'
    recipe = load_recipe(_write(tmp_path, text))
    assert recipe.in_range(dt.datetime(2024, 1, 16, 12, 0, 0, tzinfo=UTC))
    assert not recipe.in_range(dt.datetime(2024, 1, 16, 12, 0, 1, tzinfo=UTC))
    assert not recipe.in_range(dt.datetime(2024, 1, 15, 11, 59, 59, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('repo = "not a repo"\n', "repo"),
        ('repo = "o/r"\nsurprise = 1\n', "surprise"),
        ('repo = "o/r"\n[paths]\ntest = ["tests/"]\n', "test"),
        ('repo = "o/r"\nsince = 2024-02-01\nuntil = 2024-01-01\n', "until must be after since"),
        ('repo = "o/r"\nmax_prs = 0\n', "max_prs"),
        ('repo = "o/r"\n[paths]\ntests = ["/"]\n', "invalid test path pattern"),
        ('repo = "o/r"\n[limits]\nmax_files = 0\n', "max_files"),
        ("repo = \n", "not valid TOML"),
        ("", "repo"),
    ],
)
def test_invalid_recipes_name_the_file_and_problem(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_missing_recipe_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="does not exist"):
        load_recipe(tmp_path / "nope.toml")


def test_fingerprint_ignores_the_range_but_not_the_rules() -> None:
    base = Recipe(repo="o/r")
    assert Recipe(repo="o/r", since=dt.date(2024, 1, 1), max_prs=5).fingerprint() == (
        base.fingerprint()
    )
    other = Recipe.model_validate({"repo": "o/r", "paths": {"tests": ["spec/"]}})
    assert other.fingerprint() != base.fingerprint()


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_recipes_name_their_repos_environment_spec(path: Path) -> None:
    from validation.environments.specs import load_spec

    recipe = load_recipe(path)
    assert Path(recipe.environment).is_absolute()
    assert load_spec(Path(recipe.environment)).repo == recipe.repo


SPEC_OF_O_R = 'repo = "o/r"\n[defaults]\npackages = ["pytest"]\n'


def test_a_recipes_environment_must_exist(tmp_path: Path) -> None:
    path = _write(tmp_path, 'repo = "o/r"\nenvironment = "env.toml"\n')
    with pytest.raises(RecipeError, match="not found") as caught:
        load_recipe(path)
    assert str(path) in str(caught.value)


def test_a_recipes_environment_resolves_relative_to_the_recipe(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "r.toml").write_text(SPEC_OF_O_R)
    path = _write(tmp_path, 'repo = "o/r"\nenvironment = "specs/r.toml"\n')
    assert load_recipe(path).environment == str(tmp_path / "specs" / "r.toml")
