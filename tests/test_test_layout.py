"""How the tests share code, read from their source: pytest fixtures live in the conftest.py of
the package that uses them, plain helpers and constants in modules under tests/support/, and no
module imports a test module or a conftest (pytest collects those; importing one runs it twice
over, under two names, and ties one test file's edits to another's)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = "tests.support"
"""The one part of ``tests`` that other modules may import."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(source: str, name: str, is_package: bool = False) -> list[str]:
    """Every module name ``source`` (the module ``name``) imports, lazy and relative ones too:
    for ``from X import Y``, ``X.Y`` when X is a package (Y may be a module; otherwise a name
    of X's ``__init__``) and X when it is a module; and the strings of a ``pytest_plugins``
    assignment (plugins pytest imports by name)."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if (ROOT / Path(*base.split("."))).is_dir():  # a package: its names may be modules
                found.extend(f"{base}.{alias.name}" for alias in node.names)
            else:
                found.append(base)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytest_plugins"
            for target in node.targets
        ):
            found.extend(
                item.value
                for item in ast.walk(node.value)
                if isinstance(item, ast.Constant) and isinstance(item.value, str)
            )
    return found


def _forbidden(target: str) -> bool:
    """A module of ``tests`` outside tests/support: a test module, a conftest, a package."""
    if target != "tests" and not target.startswith("tests."):
        return False
    return not (target == SHARED or target.startswith(SHARED + "."))


def _violations(source: str, name: str, is_package: bool = False) -> list[str]:
    return sorted({t for t in _imported(source, name, is_package) if _forbidden(t)})


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    wrong = {}
    for folder in ("tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = _module(path)
            found = _violations(path.read_text(encoding="utf-8"), name, path.name == "__init__.py")
            if found:
                wrong[str(path.relative_to(ROOT))] = found
    assert not wrong, (
        "import shared helpers from tests/support/ and take shared fixtures from a conftest.py "
        f"(pytest provides them by name): {wrong}"
    )


def test_the_rule_sees_every_way_of_importing() -> None:
    """The reader itself, on the forms it must catch and the ones it must let through."""
    caught = {
        "from tests.conftest import GitRepo": "tests.conftest",
        "import tests.validation.test_stage": "tests.validation.test_stage",
        "from tests.validation import test_stage": "tests.validation.test_stage",
        "def f():\n    from tests.builder.core.test_records import x": (
            "tests.builder.core.test_records"
        ),
        "from . import test_stage": "tests.validation.test_stage",
        "from .conftest import make_case": "tests.validation.conftest",
        "from tests.validation import conftest": "tests.validation.conftest",
        "from tests import conftest": "tests.conftest",
        "from ..conftest import GitRepo": "tests.conftest",
        'pytest_plugins = ["tests.validation.test_stage"]': "tests.validation.test_stage",
    }
    for source, target in caught.items():
        assert target in _violations(source, "tests.validation.test_flaky"), source
    allowed = (
        "from tests.support.git import GitRepo",
        "from tests.support import docker as docker_support",
        "from tests import support",
        "import tests.support.records",
        "from ..support.stage_fixtures import CODE",
        "from builder.core.records import Candidate",
        "import pytest",
    )
    for source in allowed:
        assert _violations(source, "tests.validation.test_flaky") == [], source
