"""The import rules of docs/architecture.md, read from the source: layers import downward only,
and no module imports another that imports it back (lazy imports inside functions count)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.layers import LAYERS
from tests.support.source import modules

MODULES = modules()


def _imports(name: str, path: Path) -> set[str]:
    """Our modules that ``name`` imports, anywhere in its body."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        found.update(target for target in targets if target in MODULES and target != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> str:
    for prefix in LAYERS:
        if name == prefix or name.startswith(prefix + "."):
            return prefix
    raise AssertionError(f"{name} is in no layer")


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_imports_only_its_own_layer_and_those_below(name: str) -> None:
    layer = _layer(name)
    allowed = (layer, *LAYERS[layer])
    wrong = sorted(
        target
        for target in GRAPH[name]
        if not any(_within(target, prefix) for prefix in allowed)
        # the package itself and builder/__init__ (the version) sit with their layer
        and target not in ("builder",)
    )
    assert not wrong, f"{name} ({layer}) imports {wrong}, above or beside it"


def test_the_ground_floor_imports_nothing_of_ours_above_it() -> None:
    for name in MODULES:
        if _within(name, "builder.core"):
            assert all(_within(target, "builder.core") for target in GRAPH[name]), name


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components: every component is one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    assert not cycles, f"modules that import each other: {cycles}"


def test_the_rules_see_real_imports() -> None:
    """The reader itself: a lazy import inside a function and a relative import are edges."""
    assert "builder.core.records" in GRAPH["builder.core.store"]
    assert "builder.release.export" in GRAPH["builder.release.manifest"]
    assert GRAPH["builder.cli"] or GRAPH.get("builder.cli.__main__")
