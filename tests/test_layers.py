"""The packages of `src/atrium` import downward only, and no two depend on each other.

The layers, lowest first, are the ones docs/design.md#layout draws. A package may import from a
lower layer only (not from its own layer: features do not lean on each other sideways unless
one is placed above the other here). Imports are read with `ast`, the lazy ones inside
functions included.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import atrium

ROOT = Path(atrium.__file__).parent
# Lowest first. A lower layer that must call up gets a callable passed in (the webhook sender's
# payload renderer, the runtime's `RunSink`).
LAYERS: list[set[str]] = [
    {"errors", "settings"},
    {"kit", "outbound", "process_tuning", "secrets_at_rest"},
    {"db", "observability", "ratelimit", "client", "phpshort"},
    {"auth"},
    {"http"},
    {"providers"},
    {"accounts", "agents", "domains", "spaces", "dashboard", "files", "memory"},
    {"analytics", "runtime", "serving"},
    {"webhooks", "traces"},
    {"runs"},
    {"schedules", "evals"},
    {"worker", "threads"},
    {"app"},
    {"operations"},
    {"cli"},
]
LAYER_OF = {name: index for index, layer in enumerate(LAYERS) for name in layer}


def _package_of(path: Path) -> str:
    relative = path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level atrium package) of every import of the module."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.extend(
            (node.lineno, name.split(".")[1])
            for name in names
            if name.startswith("atrium.") and len(name.split(".")) > 1
        )
    return found


def _edges() -> dict[str, dict[str, str]]:
    """package -> imported package -> where (the first such import)."""
    edges: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(ROOT.rglob("*.py")):
        package = _package_of(path)
        if package in {"__init__", "__main__"}:
            continue
        for line, target in _imported(ast.parse(path.read_text(), str(path))):
            if target != package:
                edges[package].setdefault(target, f"{path.relative_to(ROOT)}:{line}")
    return edges


def test_every_package_has_a_layer() -> None:
    packages = {_package_of(path) for path in ROOT.rglob("*.py")} - {"__init__", "__main__"}
    assert packages - LAYER_OF.keys() == set(), "place the new package in LAYERS"
    assert LAYER_OF.keys() - packages == set(), "a package in LAYERS no longer exists"


def test_no_import_runs_upward_or_sideways() -> None:
    wrong = [
        f"{where}: {package} (layer {LAYER_OF[package]}) imports {target} "
        f"(layer {LAYER_OF[target]})"
        for package, targets in _edges().items()
        for target, where in targets.items()
        if LAYER_OF[target] >= LAYER_OF[package]
    ]
    assert wrong == []


def test_no_two_packages_depend_on_each_other() -> None:
    edges = _edges()
    # Depth-first search for a cycle among packages (a stricter check than the layers alone,
    # should two packages ever share a layer and import each other).
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(package: str, path: list[str]) -> None:
        state[package] = 1
        for target in edges.get(package, {}):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[package] = 2

    for package in sorted(edges):
        if package not in state:
            visit(package, [package])
    assert cycles == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The parser finds imports in every form the source uses (so the checks above can fail)."""
    tree = ast.parse(
        "from atrium.runs import service\n"
        "import atrium.worker.pool\n"
        "def later():\n    from atrium.app import create_app\n"
        "from . import sibling\n"
    )
    assert [target for _line, target in _imported(tree)] == ["runs", "worker", "app"]
