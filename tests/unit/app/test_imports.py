"""The layering, read from the source: imports run `app -> graph -> tools` and never back, and no two modules
of `app/` need each other (a cycle makes each of them importable only through the other, and hides which one
does the job). Function-level imports count: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LAYERS = {"tools": 0, "graph": 1, "app": 2}  # a module may import its own layer and the ones below


def _modules() -> dict[str, Path]:
    out = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def imports_of(name: str, path: Path) -> set[str]:
    """The project's modules one module imports, anywhere in it (`from a import b` counts `a.b` when b is a
    module, `a` otherwise).
    """
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module or ""
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    out = set()
    for mod in found:
        while mod and mod not in MODULES:
            mod = mod.rpartition(".")[0]
        if mod and mod != name:
            out.add(mod)
    return out


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles (strongly connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_nothing_imports_a_layer_above_its_own():
    layer = {name: LAYERS[name.split(".")[0]] for name in MODULES}
    upward = sorted(f"{a} -> {b}" for a, deps in GRAPH.items() for b in deps if layer[b] > layer[a])
    assert upward == []


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_training_and_the_stack_reach_the_entry_points_only_for_the_settings():
    """app/training/ and app/stack/ lie under the entry points: of the rest of `app` they import app.settings only.
    The Ray Serve replica (app/stack/serving.py) is an entry point of its own: it serves app/web.py's app.
    """
    below = [name for name in GRAPH if name.split(".")[:2] in (["app", "training"], ["app", "stack"])]
    assert "app.training.router_train" in below and "app.stack.services" in below
    outside = sorted(f"{a} -> {b}" for a in below if a != "app.stack.serving" for b in GRAPH[a]
                     if b.startswith("app") and b != "app.settings" and b.split(".")[:2] != a.split(".")[:2])
    assert outside == []


def test_a_function_level_import_is_a_dependency_and_a_cycle_through_it_is_found(tmp_path):
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from app.turn import run_turn\n    from . import ask\n")
    assert imports_of("app.lazy", lazy) == {"app.turn", "app.ask"}
    assert cycles({"app.a": {"app.b"}, "app.b": {"app.c"}, "app.c": {"app.a"}, "app.d": {"app.a"}}) == \
        [["app.a", "app.b", "app.c"]]
