"""The import graph of ``src/judgeaudit``: no cycles, and no import from a lower layer to a higher one.

Every ``import`` and ``from … import`` in every module is read with ``ast`` — at module level, inside
functions and inside ``if TYPE_CHECKING:`` blocks alike — together with ``importlib.import_module``
calls on a literal ``judgeaudit.…`` name, and resolved to the module it names. The layer order is the
one the package docstring of ``judgeaudit`` writes down (``LAYERS`` below must match it).

Run as a script (``python tests/test_layers.py [SRC]``) it prints the cycles and the upward imports.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Low → high. A unit is a subpackage of ``judgeaudit`` or a top-level module; units in one layer may
#: import each other (without a cycle), a unit imports nothing from a layer above its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "records", "io", "yamlfile", "families", "stats", "runinfo", "runfolder", "options", "validate",
     "registry", "consent", "_startup", "specs"),
    ("datasets", "checkers"),
    ("judges",),
    ("runtime",),
    ("probes",),
    ("analyses",),
    ("world", "loop", "structural", "interop"),
    ("card", "ledger", "gate"),
    ("report",),
    ("commands", "demo", "experiment"),
    ("cli",),
)

#: Imports that break the rules today, each (importer, imported). The list may only shrink: the test
#: fails when an entry no longer exists, so the change that removes an import deletes its entry.
KNOWN: frozenset[tuple[str, str]] = frozenset()


# ----------------------------------------------------------------------------- the graph


def module_names(src: Path) -> dict[str, Path]:
    """Every module under ``src/judgeaudit``, by its dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted((src / "judgeaudit").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def parsed(path: Path) -> ast.Module:
    """The syntax tree of the module at ``path``, parsed once per text (the checks below read every module)."""
    return _parse(str(path), path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _parse(filename: str, text: str) -> ast.Module:
    return ast.parse(text, filename=filename)


def _resolve(name: str, modules: Iterable[str]) -> str | None:
    """The longest known module that ``name`` is or lies inside (``a.b.func`` → ``a.b``)."""
    mods = set(modules)
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in mods:
            return cand
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The judgeaudit modules ``module`` imports anywhere in its body."""
    tree = parsed(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    # The root package re-exports the public names lazily (its ``__getattr__``): a facade above every
    # layer, so only its module-level imports are edges.
    nodes = tree.body if module == "judgeaudit" else ast.walk(tree)
    for node in nodes:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` where there is one
            names = [f"{stem}.{a.name}" for a in node.names] or [stem]
            names = [n if _resolve(n, modules) == n else stem for n in names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            names = [node.args[0].value]
        for n in names:
            if n.split(".")[0] != "judgeaudit":
                continue
            target = _resolve(n, modules)
            if target is not None and target != module:
                found.add(target)
    return found


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = module_names(src)
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def unit_of(module: str) -> str:
    """The layer unit of a module: its subpackage of ``judgeaudit`` (or top-level module)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "judgeaudit"


def layer_of(unit: str) -> int | None:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    return None


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member (each a cycle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def without(graph: dict[str, set[str]], edges: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    drop = set(edges)
    return {a: {b for b in bs if (a, b) not in drop} for a, bs in graph.items()}


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between layer units (imports inside one unit left out). The root package
    ``judgeaudit`` (its lazily re-exported public names) stands above every unit and is left out."""
    out: dict[str, set[str]] = {}
    for a, bs in graph.items():
        ua = unit_of(a)
        if ua == "judgeaudit":
            continue
        out.setdefault(ua, set())
        out[ua] |= {unit_of(b) for b in bs if unit_of(b) not in (ua, "judgeaudit")}
    return out


def cycles(graph: dict[str, set[str]]) -> dict[str, list[list[str]]]:
    """Cycles between modules and between layer units."""
    return {"modules": strongly_connected(graph), "units": strongly_connected(unit_graph(graph))}


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (importer, imported) pair whose imported module sits in a higher layer."""
    out = []
    for a, bs in graph.items():
        la = layer_of(unit_of(a))
        for b in bs:
            lb = layer_of(unit_of(b))
            if la is not None and lb is not None and lb > la:
                out.append((a, b))
    return sorted(out)


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_unit_has_a_layer(graph):
    units = {unit_of(m) for m in graph} - {"judgeaudit"}
    assert sorted(u for u in units if layer_of(u) is None) == []
    listed = [u for layer in LAYERS for u in layer]
    assert len(listed) == len(set(listed)), "a unit is listed in two layers"


def test_the_written_order_is_the_package_docstring():
    import judgeaudit

    doc = " ".join((judgeaudit.__doc__ or "").split())
    for units in LAYERS:
        line = ", ".join(units)
        assert line in doc, f"the package docstring does not list the layer {line!r}"


def test_no_import_points_up(graph):
    assert [e for e in upward(graph) if e not in KNOWN] == []


def test_no_cycles(graph):
    rest = without(graph, KNOWN)
    assert cycles(rest) == {"modules": [], "units": []}


def test_known_violations_still_exist(graph):
    """KNOWN may only shrink: an entry that no longer exists must be deleted."""
    gone = sorted((a, b) for a, b in KNOWN if b not in graph.get(a, set()))
    assert gone == []


def test_the_graph_reads_every_kind_of_import(tmp_path):
    pkg = tmp_path / "judgeaudit"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("")
    (pkg / "high" / "top.py").write_text("X = 1\n")
    (pkg / "low" / "__init__.py").write_text("from . import a\n")
    (pkg / "low" / "a.py").write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from judgeaudit.errors import E\n"
        "def f():\n    from judgeaudit.high.top import X\n    return X\n"
        "def g():\n    return importlib.import_module('judgeaudit.high')\n"
        "from .b import y\n")
    (pkg / "low" / "b.py").write_text("from judgeaudit.low import a\ny = 1\n")
    g = import_graph(tmp_path)
    assert g["judgeaudit.low.a"] == {"judgeaudit.errors", "judgeaudit.high.top", "judgeaudit.high",
                                     "judgeaudit.low.b"}
    assert g["judgeaudit.low"] == {"judgeaudit.low.a"}
    assert cycles(g)["modules"] == [["judgeaudit.low.a", "judgeaudit.low.b"]]


def test_upward_and_unit_cycles_are_found():
    g = {"judgeaudit.errors": {"judgeaudit.cli"}, "judgeaudit.cli": {"judgeaudit.errors"},
         "judgeaudit.judges.a": {"judgeaudit.judges.b"}, "judgeaudit.judges.b": set()}
    assert upward(g) == [("judgeaudit.errors", "judgeaudit.cli")]
    assert cycles(g) == {"modules": [["judgeaudit.cli", "judgeaudit.errors"]], "units": [["cli", "errors"]]}
    assert cycles(without(g, KNOWN | {("judgeaudit.errors", "judgeaudit.cli")})) == {"modules": [], "units": []}


def report(src: Path = SRC) -> str:
    g = import_graph(src)
    c = cycles(g)
    up = upward(g)
    lines = [f"modules: {len(g)}, imports: {sum(map(len, g.values()))}",
             f"cycles between modules: {len(c['modules'])}"]
    lines += [f"  {' ↔ '.join(comp)}" for comp in c["modules"]]
    lines.append(f"cycles between units: {len(c['units'])}")
    lines += [f"  {' ↔ '.join(comp)}" for comp in c["units"]]
    lines.append(f"upward imports: {len(up)}")
    lines += [f"  {a} → {b}" for a, b in up]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else SRC))


#: Names starting with ``_`` imported from another unit (``from judgeaudit.judges.api import _redact``), each
#: (importer, imported module, name). The list may only shrink: a package's private name is its own to change,
#: so another package that needs it needs it made public.
KNOWN_PRIVATE: frozenset[tuple[str, str, str]] = frozenset()


def private_imports(src: Path = SRC) -> set[tuple[str, str, str]]:
    """Every private name (not a module) imported from another unit, anywhere in a module's body."""
    modules = module_names(src)
    found = set()
    for module, path in modules.items():
        for node in ast.walk(parsed(path)):
            if not (isinstance(node, ast.ImportFrom) and node.module and not node.level
                    and node.module.startswith("judgeaudit")):
                continue
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if private and f"{node.module}.{a.name}" not in modules and unit_of(node.module) != unit_of(module):
                    found.add((module, node.module, a.name))
    return found


def test_no_new_private_import_across_units():
    found = private_imports()
    assert found - KNOWN_PRIVATE == set(), "import a public name (or make the name public)"
    assert KNOWN_PRIVATE - found == set(), "a listed private import is gone: delete its entry"


def _two_unit_package(root: Path) -> Path:
    """An empty ``judgeaudit`` package of two units, ``low`` and ``high``, below ``root``, for the checks' own tests."""
    pkg = root / "judgeaudit"
    for d in ("low", "high"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    return pkg


def test_a_private_name_imported_from_another_unit_is_found(tmp_path):
    pkg = _two_unit_package(tmp_path)
    (pkg / "low" / "a.py").write_text("_X = 1\n__version__ = 1\ndef _f():\n    return 1\n")
    (pkg / "low" / "_mod.py").write_text("")
    (pkg / "low" / "b.py").write_text("from judgeaudit.low.a import _X\n")          # the same unit: its own
    (pkg / "high" / "c.py").write_text(
        "from judgeaudit.low.a import __version__\n"                                    # a dunder: public
        "from judgeaudit.low import _mod\n"                                             # a module, not a name
        "def g():\n    from judgeaudit.low.a import _f\n    return _f()\n")
    assert private_imports(tmp_path) == {("judgeaudit.high.c", "judgeaudit.low.a", "_f")}


def test_no_unit_reaches_into_the_validity_analysis_privately():
    assert {f for f in private_imports() if f[1].startswith("judgeaudit.analyses.validity")} == set()


# ----------------------------------------------------------------------------- private attributes
#
# ``from X import _name`` is one way to reach another package's private name; ``x._name`` is the other: a private
# attribute of another unit's module (``generic._paired`` where ``generic`` is ``judgeaudit.datasets.generic``)
# or of an object another unit made (``judge._lock`` where ``judge = LocalJudge(...)``). Read with ``ast`` in every
# module: ``x._name`` (a dunder is public) is reaching in when ``x``
#
# * names a module of another unit (bound by ``import``/``from … import``, anywhere in the module);
# * is a name bound in the enclosing functions to an object of another unit: a parameter or variable annotated with
#   a name imported from another unit (``judge: Judge``), or assigned the result of calling one
#   (``judge = LocalJudge(spec)``);
# * is any other expression (not ``self``/``cls``) and ``_name`` is a private method or attribute of classes of
#   other units only: no class of the module's own unit has it (``caller._http_reply`` with ``caller: Any``).
#
# ``self._x`` and ``cls._x`` are a class's own; a private name of the module's own unit is its own to use.

#: Private attributes reached from another unit, each (module, expression). The list may only shrink, as
#: KNOWN_PRIVATE: a name another package needs is made public on its owner.
KNOWN_PRIVATE_ATTRIBUTES: frozenset[tuple[str, str]] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_members(tree: ast.Module) -> set[str]:
    """The private methods and attributes the classes of a module define (``def _m``, ``self._a = …``, ``_c = …``
    in the class body)."""
    out: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.add(node.name)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                out.add(node.attr)
        for node in cls.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in out if _is_private(n)}


def _imported_names(module: str, path: Path, tree: ast.Module) -> dict[str, str]:
    """Each name a module binds by an import of judgeaudit, anywhere in its body, to the dotted name it stands
    for (``LocalJudge`` → ``judgeaudit.judges.local.LocalJudge``, ``generic`` → ``judgeaudit.datasets.generic``,
    ``judgeaudit`` for ``import judgeaudit.x``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "judgeaudit":
                    out[a.asname or "judgeaudit"] = a.name if a.asname else "judgeaudit"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                stem = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            if stem.split(".")[0] == "judgeaudit":
                out |= {a.asname or a.name: f"{stem}.{a.name}" for a in node.names if a.name != "*"}
    return out


class _Reach(ast.NodeVisitor):
    """The private attributes one module reaches in another unit (see the comment above)."""

    def __init__(self, module: str, names: dict[str, str], modules: set[str], members: dict[str, set[str]]):
        self.module, self.unit, self.names, self.modules, self.members = module, unit_of(module), names, modules, members
        self.scopes: list[set[str]] = [set()]
        self.found: set[tuple[str, str]] = set()

    def dotted(self, node: ast.AST) -> str | None:
        """The judgeaudit name an expression stands for through the module's imports (None: not one)."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def foreign(self, node: ast.AST | None) -> bool:
        """An annotation or a callee naming something of another unit (``X | None`` and ``Optional[X]`` too)."""
        if node is None:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str):   # a quoted annotation
            try:
                return self.foreign(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return False
        if isinstance(node, ast.BinOp):
            return self.foreign(node.left) or self.foreign(node.right)
        if isinstance(node, ast.Subscript):
            return self.foreign(node.slice)
        name = self.dotted(node)
        return name is not None and unit_of(name) != self.unit

    def bound_foreign(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                  *([a.kwarg] if a.kwarg else [])]
        self.scopes.append({p.arg for p in params if self.foreign(p.annotation)})
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call) and self.foreign(node.value.func):
            self.scopes[-1] |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and (self.foreign(node.annotation) or (
                isinstance(node.value, ast.Call) and self.foreign(node.value.func))):
            self.scopes[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        if not _is_private(node.attr):
            return
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            return
        owner = self.dotted(v)
        if owner is not None and owner in self.modules:                      # a module's private name
            reach = unit_of(owner) != self.unit
        elif isinstance(v, ast.Name) and self.bound_foreign(v.id):          # an object another unit made
            reach = True
        else:                                                               # a member only other units define
            units = self.members.get(node.attr, set())
            reach = bool(units) and self.unit not in units
        if reach:
            self.found.add((self.module, ast.unparse(node)))


def private_attributes(src: Path = SRC) -> set[tuple[str, str]]:
    """Every private attribute a module reaches in another unit: (module, expression)."""
    modules = module_names(src)
    trees = {m: parsed(p) for m, p in modules.items()}
    members: dict[str, set[str]] = {}
    for m, tree in trees.items():
        for name in _private_members(tree):
            members.setdefault(name, set()).add(unit_of(m))
    found: set[tuple[str, str]] = set()
    for m, tree in trees.items():
        reach = _Reach(m, _imported_names(m, modules[m], tree), set(modules), members)
        reach.visit(tree)
        found |= reach.found
    return found


def test_no_new_private_attribute_across_units():
    found = private_attributes()
    assert found - KNOWN_PRIVATE_ATTRIBUTES == set(), "use a public name (or make the name public on its owner)"
    assert KNOWN_PRIVATE_ATTRIBUTES - found == set(), "a listed private attribute is gone: delete its entry"


def test_a_private_attribute_reached_in_another_unit_is_found(tmp_path):
    pkg = _two_unit_package(tmp_path)
    (pkg / "low" / "a.py").write_text(
        "import threading\n"
        "def _helper():\n    return 1\n"
        "class Judge:\n"
        "    _kind = 'x'\n"
        "    def __init__(self):\n        self._lock = threading.Lock()\n        self.public = 1\n"
        "    def _reply(self):\n        return self._lock\n")
    (pkg / "low" / "b.py").write_text(                                   # the same unit: its own
        "from judgeaudit.low import a\nfrom judgeaudit.low.a import Judge\n"
        "def f(j: Judge):\n    return a._helper(), j._lock, Judge()._reply()\n")
    (pkg / "high" / "own.py").write_text("class Own:\n    def _mine(self):\n        return 1\n")
    (pkg / "high" / "c.py").write_text(
        "import os\n"
        "import judgeaudit.low.a as low_a\n"
        "from judgeaudit.low import a\n"
        "from judgeaudit.low.a import Judge\n"
        "from judgeaudit.high.own import Own\n"
        "class Mine:\n"
        "    def __init__(self):\n        self._lock = None\n"
        "    def go(self, caller, judge: 'Judge | None', other: Own):\n"
        "        made = Judge()\n"
        "        def inner():\n            return made._lock\n"                # an object another unit made
        "        return (a._helper(), low_a._helper, judge._lock, caller._reply(), inner(),\n"
        "                self._lock, os._exit, a.__name__, a.Judge.public, other._mine(), caller._mine(),\n"
        "                Mine()._lock)\n")
    assert private_attributes(tmp_path) == {
        ("judgeaudit.high.c", "a._helper"), ("judgeaudit.high.c", "low_a._helper"),
        ("judgeaudit.high.c", "judge._lock"), ("judgeaudit.high.c", "caller._reply"),
        ("judgeaudit.high.c", "made._lock")}


# ----------------------------------------------------------------------------- run-time calls
#
# The import graph says which module may *name* which; these tests say which module *calls* which while a run
# runs. Every Python call between two judgeaudit modules is recorded under ``sys.setprofile`` (and
# ``threading.setprofile`` for threads a run starts) as an edge from the nearest judgeaudit frame below the
# callee (frames of other packages in between — importlib, asyncio, pandas — are skipped) to the callee's
# module, and mapped to layers with ``LAYERS``. A call from a lower layer into a higher one — a registry
# filled from above importing its plug-ins, a planner of the command edge called by the card, a function of
# the world package handed down to the runtime — is an edge that points up. The root package (the public
# names' facade, which composes the program: it declares judgeaudit's own plug-ins) stands above every layer.


def _module_of_file(root: Path) -> dict[str, str]:
    return {str(p.resolve()): m for m, p in module_names(root).items()}


def traced_edges(run, root: Path | None = None) -> dict[tuple[str, str], int]:
    """``run()`` under a profiler: the number of calls of each (caller module, callee module) pair, both
    judgeaudit modules, the caller the nearest judgeaudit frame below the callee."""
    import threading
    from collections import Counter

    import judgeaudit

    files = _module_of_file(root or Path(judgeaudit.__file__).resolve().parents[1])
    cache: dict[str, str | None] = {}

    def module(code) -> str | None:  # noqa: ANN001 - a code object
        fn = code.co_filename
        if fn not in cache:
            cache[fn] = files.get(str(Path(fn).resolve())) if fn.endswith(".py") else None
        return cache[fn]

    edges: Counter = Counter()

    def profile(frame, event, arg):  # noqa: ANN001, ANN202 - the profiler's signature
        if event != "call":
            return
        callee = module(frame.f_code)
        if callee is None:
            return
        f = frame.f_back
        while f is not None and (caller := module(f.f_code)) is None:
            f = f.f_back
        if f is not None and caller != callee:
            edges[(caller, callee)] += 1

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return dict(edges)


def upward_calls(edges: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """The edges whose callee sits in a higher layer than its caller (the root package left out)."""
    return {e: n for e, n in edges.items() if upward({e[0]: {e[1]}}) and "judgeaudit" not in map(unit_of, e)}


def test_the_call_tracer_finds_a_call_that_points_up():
    from judgeaudit.errors import InputError

    def run():
        InputError("x", field="f")      # a lower layer's own work: no edge up

    assert upward_calls(traced_edges(run)) == {}
    assert upward_calls({("judgeaudit.card.make", "judgeaudit.commands.card_missing"): 7}) == {
        ("judgeaudit.card.make", "judgeaudit.commands.card_missing"): 7}
    assert upward_calls({("judgeaudit.cli", "judgeaudit.commands.card"): 1}) == {}
    assert upward_calls({("judgeaudit.registry", "judgeaudit"): 1}) == {}


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("traced")


def test_a_validity_run_calls_no_layer_above_the_callers(runs_root):
    from judgeaudit.commands.validity import run_validity
    from testkit import small_probes

    probes = small_probes(runs_root, n_bases=2)
    edges = traced_edges(lambda: run_validity(str(probes), ["reference:length"], out=runs_root / "validity",
                                              n_boot=50, n_regrade=0))
    assert any(a == "judgeaudit.commands.validity" and b.startswith("judgeaudit.analyses.validity") for a, b in edges)
    assert upward_calls(edges) == {}


def _world_run(root: Path) -> None:
    from judgeaudit.commands.world import run_world_cmd
    from world_fixtures import tiny_items

    run_world_cmd("tiny:x", ["reference:oracle"], ["blind", "informed"], out=root / "world", votes=1,
                  items=tiny_items(), n_boot=50, permutations=99, progress=False)


def test_a_world_run_calls_no_layer_above_the_callers(runs_root):
    edges = traced_edges(lambda: _world_run(runs_root))
    assert any(b.startswith("judgeaudit.world.") for _, b in edges)
    assert upward_calls(edges) == {}


def test_a_card_run_missing_calls_no_layer_above_the_callers(runs_root):
    import json

    from typer.testing import CliRunner

    from judgeaudit.cli import app

    vp = runs_root / "vp"
    vp.mkdir()
    (vp / "result.json").write_text(json.dumps({"sets": {}, "transfer": {}, "run_id": "x", "created_at": "2026"}))
    if not (runs_root / "world" / "result.json").exists():
        _world_run(runs_root)
    out = runs_root / "card"
    args = ["card", "--judge", "reference:oracle", "--run-missing", "--yes", "--bootstrap", "50",
            "--from", str(vp), "--from", str(runs_root / "world"), "--out", str(out)]
    res = {}
    edges = traced_edges(lambda: res.setdefault("r", CliRunner().invoke(app, args)))
    assert res["r"].exit_code == 0, res["r"].output
    assert "card --run-missing for reference:oracle" in res["r"].output
    assert upward_calls(edges) == {}
    assert json.loads((out / "card.json").read_text())["sections"]["world"]["measured"]
    assert ("judgeaudit.commands.card_missing", "judgeaudit.card.make") in edges
