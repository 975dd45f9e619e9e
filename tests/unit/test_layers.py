"""The package's layers, read from every module's imports (docs/architecture.md states the rule).

Every ``import`` and ``from ... import`` of every module of ``python/ferrotool`` counts: at the
top level, inside functions, and under ``if TYPE_CHECKING:``. The rules:

* no circle: no module imports, even through others, a module that imports it;
* the core (``_values``, ``_schema``, ``_tools``, ``_execution``, ``_permissions``,
  ``_session``, ``_requests``, ``_registry``, ``_definitions``, ``errors.py``, ``telemetry.py``)
  imports no wing (``providers``, ``mcp``, ``skills``, ``builtins``, ``agent``, ``interop``,
  ``cli``), not even under ``TYPE_CHECKING`` or inside a function;
* a wing imports no other wing's private module, and only the command line imports ``cli``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import ferrotool

ROOT: Final = Path(ferrotool.__file__).resolve().parent
CORE: Final = frozenset(
    {
        "_values",
        "_schema",
        "_tools",
        "_execution",
        "_permissions",
        "_session",
        "_requests",
        "_registry",
        "_definitions",
        "errors",
        "telemetry",
    }
)
WINGS: Final = frozenset({"providers", "mcp", "skills", "builtins", "agent", "interop", "cli"})


@dataclass(frozen=True)
class Arrow:
    """One import: from a module to a module of the package, and where it stands."""

    source: str
    target: str
    kind: str  # "top", "function" or "type" (under ``if TYPE_CHECKING:``)
    line: int


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted([*ROOT.rglob("*.py"), *ROOT.rglob("*.pyi")]):
        parts = ["ferrotool", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES: Final = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, kind
        elif isinstance(child, ast.If) and _is_type_checking(child):
            for part in child.body:
                yield from _imports(ast.Module(body=[part], type_ignores=[]), "type")
            for part in child.orelse:
                yield from _imports(ast.Module(body=[part], type_ignores=[]), kind)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _imports(child, "type" if kind == "type" else "function")
        else:
            yield from _imports(child, kind)


def _known(name: str) -> str | None:
    """The package module ``name`` is or is inside (``ferrotool.a.b.Name``: ``ferrotool.a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if MODULES[module].stem != "__init__":
            package.pop()
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    for alias in node.names:
        # ``from pkg import sub`` names the submodule; ``from mod import Name`` the module.
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def arrows() -> list[Arrow]:
    out: list[Arrow] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, kind in _imports(tree, "top"):
            for name in _targets(module, node):
                target = _known(name)
                if target is not None and target != module:
                    out.append(Arrow(module, target, kind, node.lineno))
    return out


def _area(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {module: [] for module in MODULES}
    for source, target in sorted(edges):
        graph[source].append(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


ARROWS: Final = arrows()


def test_the_reader_sees_every_kind_of_import() -> None:
    kinds = {(a.source, a.target): a.kind for a in ARROWS}
    assert kinds["ferrotool.mcp.serve", "ferrotool.mcp._fast"] == "function"
    assert kinds["ferrotool.skills.views", "ferrotool._registry.registry"] == "type"
    assert kinds["ferrotool._registry.toolkit", "ferrotool._registry.table"] == "top"
    assert len(MODULES) > 100


def test_no_circles() -> None:
    assert _circles({(a.source, a.target) for a in ARROWS}) == []


def test_the_core_imports_no_wing() -> None:
    wrong = []
    for arrow in ARROWS:
        if _area(arrow.source) not in CORE or _area(arrow.target) not in WINGS:
            continue
        wrong.append(f"{arrow.source}:{arrow.line} -> {arrow.target} ({arrow.kind})")
    assert wrong == []


def test_a_wing_imports_no_other_wings_private_module() -> None:
    wrong = []
    for arrow in ARROWS:
        source, target = _area(arrow.source), _area(arrow.target)
        if target not in WINGS or source == target:
            continue
        private = any(part.startswith("_") for part in arrow.target.split(".")[2:])
        if (source in WINGS and private) or (target == "cli" and source != "__main__"):
            wrong.append(f"{arrow.source}:{arrow.line} -> {arrow.target}")
    assert wrong == []
