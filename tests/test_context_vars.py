"""Every ``ContextVar`` in ``src/judgeaudit``, pinned by name with the reason it is one.

A run's configuration (call options, backend, batch sink, ``--api-base``) is no ContextVar: a command builds
one ``runtime.context.RunContext`` and passes it down. What stays a ContextVar is per-block mutable state whose
scope is dynamic by design, and its module docstring says why (``Why a ``ContextVar````). A new one fails here
until it is added to ``PINNED`` with its reason, or made an argument.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: (module, variable) -> (the ContextVar's name, why it is a dynamic scope and not an argument)
PINNED: dict[tuple[str, str], tuple[str, str]] = {
    ("judgeaudit.runtime.failures", "_ACTIVE"):
        ("judgeaudit_call_recorder", "the open recording() blocks nest; each collects the verdicts returned "
                                     "inside it and hands them to the enclosing one"),
    ("judgeaudit.judges.templates.sandbox", "_BUDGET"):
        ("judgeaudit_template_budget", "per-render mutable budget that Jinja2's sandbox hooks call back into, "
                                       "with no argument of ours"),
    ("judgeaudit.validate", "_CLAIMED"):
        ("judgeaudit_claimed_outputs", "the outputs the running command's guards claimed, recorded once when "
                                       "it ends"),
    ("judgeaudit.runfolder", "_ACTIVE"):
        ("judgeaudit_output_sets", "the output_set blocks open now, which a nested block joins"),
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_contextvar(call: ast.Call, names: set[str], modules: set[str]) -> bool:
    f = call.func
    return (isinstance(f, ast.Name) and f.id in names) or \
        (isinstance(f, ast.Attribute) and f.attr == "ContextVar" and isinstance(f.value, ast.Name)
         and f.value.id in modules)


def declared() -> dict[tuple[str, str], str | None]:
    """(module, variable) -> the ContextVar's name, for every ``ContextVar(...)`` made anywhere in the package
    (whatever ``contextvars`` or ``ContextVar`` is imported as); a call not assigned to a name is keyed
    ``<unassigned>``."""
    found: dict[tuple[str, str], str | None] = {}
    for path in sorted((SRC / "judgeaudit").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names, modules = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "contextvars":
                names |= {a.asname or a.name for a in node.names if a.name == "ContextVar"}
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name == "contextvars"}
        assigned: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) \
                    and _is_contextvar(node.value, names, modules):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                arg = node.value.args[0] if node.value.args else None
                found[(_module(path), getattr(target, "id", ast.unparse(target)))] = \
                    arg.value if isinstance(arg, ast.Constant) else None
                assigned.add(id(node.value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_contextvar(node, names, modules) and id(node) not in assigned:
                found[(_module(path), "<unassigned>")] = None
    return found


def test_the_package_declares_only_the_pinned_context_vars():
    found = declared()
    assert len(found) == len(PINNED) == 4
    assert found == {key: name for key, (name, _) in PINNED.items()}


def test_each_remaining_context_var_says_why_in_its_module_docstring():
    for module, variable in PINNED:
        path = SRC / Path(*module.split(".")).with_suffix(".py")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert f"Why a ``ContextVar`` (``{variable}``" in doc, module


def test_the_count_sees_each_spelling_of_a_declaration(tmp_path, monkeypatch):
    """The scan finds a ContextVar however it is imported: a new one in any spelling fails the pin."""
    pkg = tmp_path / "judgeaudit"
    pkg.mkdir()
    (pkg / "a.py").write_text("from contextvars import ContextVar as CV\nX: CV[int] = CV('x', default=0)\n")
    (pkg / "b.py").write_text("import contextvars as c\nY = c.ContextVar('y')\nfoo(c.ContextVar('z'))\n")
    (pkg / "c.py").write_text("class ContextVar: ...\nZ = ContextVar()\n")   # not the stdlib's: not counted
    monkeypatch.setitem(globals(), "SRC", tmp_path)
    assert declared() == {("judgeaudit.a", "X"): "x", ("judgeaudit.b", "Y"): "y",
                          ("judgeaudit.b", "<unassigned>"): None}
