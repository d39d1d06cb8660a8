"""The runtime's modules import one another in one direction: the import graph of ``judgeaudit.runtime``
(every ``import`` statement, at module level, inside functions and under ``TYPE_CHECKING``, and every
``importlib.import_module`` of a literal name) has no cycle, and no runtime module imports a layer above it."""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "judgeaudit"
RUNTIME = SRC / "runtime"
BELOW_OR_AT_RUNTIME = {"errors", "records", "io", "families", "stats", "datasets", "probes", "judges", "runtime",
                       "_startup"}
"""The layers (``ARCHITECTURE.md``) that runtime may import: itself and what lies below it."""


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (SRC.parent / rel).with_suffix(".py").is_file() or (SRC.parent / rel / "__init__.py").is_file()


def imported_modules(path: Path) -> set[str]:
    """The judgeaudit modules ``path`` imports anywhere in its text (a ``from package import name`` names
    the submodule when ``name`` is one)."""
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for a in node.names:
                sub = f"{module}.{a.name}"
                out.add(sub if _is_module(sub) else module)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.add(node.args[0].value)
    return {m for m in out if m == "judgeaudit" or m.startswith("judgeaudit.")} - {me}


def runtime_graph() -> dict[str, set[str]]:
    """Module -> the ``judgeaudit.runtime`` modules it imports."""
    graph = {}
    for f in sorted(RUNTIME.glob("*.py")):
        graph[_module_name(f)] = {m for m in imported_modules(f) if m.startswith("judgeaudit.runtime.")}
    return graph


def test_the_runtime_import_graph_has_no_cycle():
    graph = runtime_graph()
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        raise AssertionError(f"import cycle in judgeaudit.runtime: {' -> '.join(e.args[1])}") from None
    assert {"judgeaudit.runtime.backends", "judgeaudit.runtime.executor", "judgeaudit.runtime.raybackend",
            "judgeaudit.runtime.calls"} <= set(graph)
    # the layering inside runtime: one call's machinery, then the backends, then the executor on top
    assert order.index("judgeaudit.runtime.calls") < order.index("judgeaudit.runtime.backends")
    assert order.index("judgeaudit.runtime.backends") < order.index("judgeaudit.runtime.executor")
    assert "judgeaudit.runtime.raybackend" not in graph["judgeaudit.runtime.executor"]
    assert "judgeaudit.runtime.executor" not in graph["judgeaudit.runtime.raybackend"]


def test_runtime_imports_no_higher_layer():
    upward = sorted((_module_name(f), m) for f in RUNTIME.glob("*.py") for m in imported_modules(f)
                    if m != "judgeaudit" and m.split(".")[1] not in BELOW_OR_AT_RUNTIME)
    assert upward == []


def test_the_checker_sees_a_cycle_hidden_in_a_function(tmp_path, monkeypatch):
    """The check itself can fail: a function-level import back up the graph is an edge like any other."""
    pkg = tmp_path / "judgeaudit" / "runtime"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (tmp_path / "judgeaudit" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from judgeaudit.runtime import b\n")
    (pkg / "b.py").write_text("def f():\n    from judgeaudit.runtime.a import x\n")
    (pkg / "c.py").write_text("import importlib\nm = importlib.import_module('judgeaudit.runtime.a')\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "judgeaudit")
    monkeypatch.setattr(sys.modules[__name__], "RUNTIME", pkg)
    graph = runtime_graph()
    assert graph["judgeaudit.runtime.a"] == {"judgeaudit.runtime.b"}
    assert graph["judgeaudit.runtime.b"] == {"judgeaudit.runtime.a"}
    assert graph["judgeaudit.runtime.c"] == {"judgeaudit.runtime.a"}
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError:
        return
    raise AssertionError("the cycle a -> b -> a was not found")
