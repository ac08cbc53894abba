"""Every exception class the toolkit defines derives from SwtError, read from the imported tree."""

from __future__ import annotations

import importlib
import inspect

import pytest

from builder.core.errors import SwtError
from tests.support.source import modules


def _exception_classes() -> dict[str, type[BaseException]]:
    found = {}
    for name in modules():
        if name.endswith(".__main__"):
            continue  # running it is its job; its package is walked anyway
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == name and issubclass(value, BaseException):
                found[f"{name}.{value.__qualname__}"] = value
    return found


EXCEPTIONS = _exception_classes()


def test_the_walk_finds_the_known_errors() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS.values()}
    assert {"ConfigError", "GitError", "SpecError", "UnparsableDiff", "PublishError"} <= names
    assert len(EXCEPTIONS) >= 16


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_every_toolkit_exception_derives_from_swt_error(name: str) -> None:
    assert issubclass(EXCEPTIONS[name], SwtError), f"{name} does not derive from SwtError"


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("builder.core.config.ConfigError", ValueError),
        ("validation.environments.specs.SpecError", ValueError),
        ("recipes.patch_split.UnparsableDiff", ValueError),
        ("builder.core.gitutil.GitError", RuntimeError),
        ("validation.environments.docker_engine.DockerUnavailable", RuntimeError),
    ],
)
def test_errors_keep_their_builtin_base_for_existing_handlers(
    name: str, builtin: type[Exception]
) -> None:
    assert issubclass(EXCEPTIONS[name], builtin)
