"""Which modules outside ``judgeaudit.analyses`` still read a run's ``result.json`` as a raw dict, by literal key,
instead of through its analysis's typed reader (``analyses.<analysis>.schema``, ``loop.schema``): there a key
renamed in the writer reaches a card or a report as an empty value, not as an error naming the file and key.

Every module is read with ``ast``. A module reads a result raw when it

* reads a collected run's object by key (``run.data["judges"]``, ``r.data.get("sets")``, ``d = r.data; d["sets"]``:
  ``card.sources.Run``, ``ledger.score``'s runs);
* reads ``runinfo.read_result``'s dict (or the dict ``runinfo.read_stamped`` returns beside the stamp) by key;
* parses JSON in a function that names ``result.json`` and reads what it parsed by key; or
* takes a result (a parameter named ``result``, ``res``, ``run_result``, ``r`` or ``data`` annotated ``dict``) and
  reads it by key.

``RAW`` lists those modules today (``NOT_RESULTS``: modules whose ``result`` is another tool's, not a
judgeaudit result). The list may only shrink: the test fails when a module not listed reads a
result raw, and when a listed one no longer does (the change that types it deletes its entry).

A clause of the prediction ledger (``ledger.score``) names its metric by a path the user writes (``judges.x.S``,
``/sets/...``): it reads any key of any result, by that path, not by a literal key of judgeaudit's (a typed result's
``model_dump()`` walked by the same path would be the same read), and an absent path is its verdict *not run*. It
reads the run's stamp through ``runinfo.RunStamp``.

Run as a script (``python tests/test_result_readers.py [SRC]``) it prints every raw read, by module and line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Where the typed readers live: these read the raw object once, to type it.
TYPED = ("judgeaudit.analyses", "judgeaudit.loop.schema")

#: Modules that read a result by literal key today (see the module docstring). May only shrink.
RAW: frozenset[str] = frozenset()

#: Modules whose ``result``-named objects are not judgeaudit results, with the reason.
NOT_RESULTS: dict[str, str] = {
    "judgeaudit.interop.promptfoo": "its rows are a promptfoo eval's results (promptfoo's own JSON)",
}

_RESULT_PARAMS = ("result", "res", "run_result", "r", "data")


def _keyed(node: ast.AST) -> ast.AST | None:
    """The object ``node`` reads by a literal key (``x["k"]``, ``x.get("k", …)``), else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.func.value
    return None


def _names_result_json(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "result.json" in n.value
               for n in ast.walk(fn))


def _is_call(node: ast.AST, *names: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id in names) or (isinstance(f, ast.Attribute) and f.attr in names)


def _is_dict(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    return text == "dict" or text.startswith(("dict[", "Mapping["))


def raw_reads(path: Path) -> list[tuple[int, str]]:
    """Every (line, source) where the module at ``path`` reads a result by literal key."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for fn in [tree, *functions]:
        loaded: set[str] = set()   # names bound to a parsed result in this function
        if fn is not tree:
            args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
            loaded |= {a.arg for a in args if a.arg in _RESULT_PARAMS and _is_dict(a.annotation)}
            json_here = _names_result_json(fn)
            for n in ast.walk(fn):
                if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple)
                        and _is_call(n.value, "read_stamped") and isinstance(n.targets[0].elts[-1], ast.Name)):
                    loaded.add(n.targets[0].elts[-1].id)   # (stamp, result)
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    v = n.value
                    if (_is_call(v, "read_result") or (json_here and _is_call(v, "loads", "load"))
                            or (isinstance(v, ast.Attribute) and v.attr == "data")):   # ``d = run.data``
                        loaded.add(n.targets[0].id)
        body = ast.walk(fn) if fn is not tree else (n for s in tree.body if not isinstance(
            s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in ast.walk(s))
        for n in body:
            obj = _keyed(n)
            if obj is None:
                continue
            if isinstance(obj, ast.Attribute) and obj.attr == "data":   # a collected run's object
                out.append((n.lineno, ast.unparse(n)))
            elif isinstance(obj, ast.Name) and obj.id in loaded:
                out.append((n.lineno, ast.unparse(n)))
            elif _is_call(obj, "read_result") or (fn is not tree and _names_result_json(fn)
                                                    and _is_call(obj, "loads", "load")):
                out.append((n.lineno, ast.unparse(n)))
    return sorted(set(out))


def package_modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package below ``src``, by its dotted name (a package by its own)."""
    out = {}
    for path in sorted((src / "judgeaudit").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def modules(src: Path = SRC) -> dict[str, Path]:
    return {name: path for name, path in package_modules(src).items()
            if not any(name == t or name.startswith(t + ".") for t in TYPED) and name not in NOT_RESULTS}


def raw_readers(src: Path = SRC) -> dict[str, list[tuple[int, str]]]:
    """Every module outside the typed readers that reads a result by literal key, with its reads."""
    found = {m: raw_reads(p) for m, p in modules(src).items()}
    return {m: r for m, r in found.items() if r}


def test_no_module_reads_a_result_raw_beyond_the_known_ones():
    found = raw_readers()
    new = {m: found[m] for m in sorted(set(found) - RAW)}
    assert not new, ("read a result.json by literal key; read it through its analysis's typed reader "
                     f"(analyses.<analysis>.schema): {new}")


def test_the_known_raw_readers_are_still_there():
    gone = sorted(RAW - set(raw_readers()))
    assert not gone, f"no longer read a result raw: delete them from RAW ({gone})"


def test_the_scanner_finds_each_kind_of_raw_read(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import json\n"
        "def a(r):\n    return r.data.get('judges')\n"
        "def b(p):\n    d = read_result(p)\n    return d['sets']\n"
        "def c(folder):\n    d = json.loads((folder / 'result.json').read_text())\n    return d.get('arms')\n"
        "def d(result: dict):\n    return result['provenance']\n"
        "def e(card: dict, result):\n    return card['sections'], result['x']\n"   # neither: a card, untyped
        "def f(folder):\n    return json.loads((folder / 'card.json').read_text())['sections']\n"
        "def g(p):\n    stamp, d = read_stamped(p)\n    return stamp.run_id, d['judges']\n"
        "def h(run):\n    d = run.data\n    return d.get('judge')\n",
        encoding="utf-8")
    assert [line for line, _ in raw_reads(f)] == [3, 6, 9, 11, 18, 21]


if __name__ == "__main__":
    for m, reads in sorted(raw_readers(Path(sys.argv[1]) if len(sys.argv) > 1 else SRC).items()):
        print(m)
        for line, text in reads:
            print(f"  {line}: {text}")
