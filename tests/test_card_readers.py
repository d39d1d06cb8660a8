"""Which modules still read a validity card (``card.json``, or the card's dict) by literal key instead of through
``card.schema.CardFile`` and its section models: there a key renamed in ``card.build`` reaches a gate, a diff or a
page as an empty value, not as an error naming the file and key.

Every module is read with ``ast``. A module reads a card raw when, in one function, it

* reads a key only a card has (``x["sections"]``, ``x.get("not_measured")``, ``generated_at``);
* parses JSON in a function that names ``card.json`` and reads what it parsed by key;
* takes a card or one of its sections as a dict (a parameter named ``card``, ``sec``, ``section``, or — in a module
  of ``judgeaudit.card`` — ``s``, ``sb``, ``v``, ``w``, ``lp``, annotated ``dict``) and reads it by key; or
* reads by key a name bound to any of these, or to any key of them, or iterating over them (``s = card["sections"]``;
  ``sec = s.get(kind)``; ``for name, sb in sec["sets"].items()``; ``sb["source"]``).

``CARD_RAW`` lists those modules today, each with why it still reads the dict (``NOT_CARDS``: modules whose
``card`` is not a judgeaudit card). The list may only shrink: the test fails when a module not listed reads a card
raw, and when a listed one no longer does (the change that types it deletes its entry).

Run as a script (``python tests/test_card_readers.py [SRC]``) it prints every raw read, by module and line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from test_result_readers import package_modules

SRC = Path(__file__).resolve().parents[1] / "src"

#: The typed reader: it reads the raw object once, to type it.
TYPED = ("judgeaudit.card.schema",)

#: Modules that read a card by literal key today, with the reason. May only shrink.
CARD_RAW: dict[str, str] = {
    "judgeaudit.card.share": "rewrites the paths of any JSON value (a card before it is typed, a checklist's text); "
                             "the one card key it reads is the not-measured line it rewrites",
}

#: Modules whose ``card`` is not a judgeaudit card, with the reason.
NOT_CARDS: dict[str, str] = {
    "judgeaudit.families": "its card is a Hugging Face model card's front matter (base_model)",
}

CARD_ONLY_KEYS = ("sections", "not_measured", "generated_at")
"""Keys only a card writes (no result, policy or report has them)."""

_CARD_PARAMS = ("card", "sec", "section")
_SECTION_PARAMS = ("s", "sb", "v", "w", "lp")   # a section's dict, in the card package


def _keyed(node: ast.AST) -> tuple[ast.AST, str] | None:
    """The object ``node`` reads by a literal key (``x["k"]``, ``x.get("k", …)``) and the key, else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)):
        return node.value, node.slice.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.func.value, node.args[0].value
    return None


def _is_dict(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    return any(t.strip().startswith(("dict", "Mapping")) for t in text.split("|"))


def _names_card_json(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "card.json" in n.value
               for n in ast.walk(fn))


def _is_loads(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("loads", "load"))


def raw_reads(path: Path, in_card_package: bool = False) -> list[tuple[int, str]]:
    """Every (line, source) where the module at ``path`` reads a card by literal key."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[tuple[int, str]] = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        params = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        names = _CARD_PARAMS + (_SECTION_PARAMS if in_card_package else ())
        cardish = {a.arg for a in params if a.arg in names and _is_dict(a.annotation)}
        json_here = _names_card_json(fn)

        def is_card(node: ast.AST) -> bool:
            if isinstance(node, ast.Name):
                return node.id in cardish
            if json_here and _is_loads(node):
                return True
            if isinstance(node, ast.BoolOp):   # ``sec.get("sets") or {}``
                return any(is_card(v) for v in node.values)
            if isinstance(node, ast.IfExp):
                return is_card(node.body) or is_card(node.orelse)
            k = _keyed(node)
            if k is not None:
                return k[1] in CARD_ONLY_KEYS or is_card(k[0])
            if isinstance(node, ast.Subscript):   # by a key held in a name: ``s[k]``
                return is_card(node.value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):   # ``s.get(k)``, ``d.items()``
                return node.func.attr in ("get", "items", "values") and is_card(node.func.value)
            return False

        def bind(target: ast.AST) -> None:
            for t in ast.walk(target):
                if isinstance(t, ast.Name):
                    cardish.add(t.id)

        for _ in range(3):   # names bound to a card read, then names bound to those
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign) and len(n.targets) == 1:
                    t, v = n.targets[0], n.value
                    pairs = (zip(t.elts, v.elts, strict=False) if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple)
                             else [(t, v)])
                    for tt, vv in pairs:
                        if isinstance(tt, ast.Name) and is_card(vv):
                            cardish.add(tt.id)
                elif isinstance(n, ast.For | ast.comprehension) and is_card(n.iter):
                    bind(n.target)
        for n in ast.walk(fn):
            k = _keyed(n)
            if k is not None and (k[1] in CARD_ONLY_KEYS or is_card(k[0])):
                out.add((n.lineno, ast.unparse(n)))
    return sorted(out)


def modules(src: Path = SRC) -> dict[str, Path]:
    return {name: path for name, path in package_modules(src).items() if name not in TYPED and name not in NOT_CARDS}


def raw_readers(src: Path = SRC) -> dict[str, list[tuple[int, str]]]:
    """Every module outside the typed reader that reads a card by literal key, with its reads."""
    found = {m: raw_reads(p, m.startswith("judgeaudit.card.")) for m, p in modules(src).items()}
    return {m: r for m, r in found.items() if r}


def test_no_module_reads_a_card_raw_beyond_the_known_ones():
    found = raw_readers()
    new = {m: found[m] for m in sorted(set(found) - set(CARD_RAW))}
    assert not new, f"read a card by literal key; read it through card.schema.CardFile and its sections: {new}"


def test_the_known_raw_card_readers_are_still_there():
    gone = sorted(set(CARD_RAW) - set(raw_readers()))
    assert not gone, f"no longer read a card raw: delete them from CARD_RAW ({gone})"


def test_every_listed_module_exists():
    assert sorted(set(CARD_RAW) | set(NOT_CARDS)) == sorted(m for m in {*CARD_RAW, *NOT_CARDS}
                                                            if (SRC / Path(*m.split("."))).with_suffix(".py").is_file())


def test_the_scanner_finds_each_kind_of_raw_card_read(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import json\n"
        "def a(c):\n    return c['sections']['vp']\n"                                 # a card-only key
        "def b(folder):\n    d = json.loads((folder / 'card.json').read_text())\n    return d['judge']\n"
        "def c(card: dict, k):\n    s = card['judge']\n    return s\n"                  # a card parameter
        "def d(card: dict):\n    s = card.get('sections') or {}\n    sec = s['vp']\n    return sec.get('rows')\n"
        "def e(sb: dict):\n    return sb['conditions']\n"                              # a section, in the card package
        "def f(result: dict, card):\n    return result['judges'], card.sections.vp\n"  # neither: a result, a typed card
        "def g(card: dict, kind):\n    sec = card.get('x').get(kind)\n"
        "    for n, sb in (sec.get('sets') or {}).items():\n"
        "        yield sb['source']\n",
        encoding="utf-8")
    assert sorted({line for line, _ in raw_reads(f)}) == [3, 6, 8, 11, 12, 13, 19, 20, 21]
    assert sorted({line for line, _ in raw_reads(f, in_card_package=True)}) == [3, 6, 8, 11, 12, 13, 15, 19, 20, 21]


if __name__ == "__main__":
    for m, reads in sorted(raw_readers(Path(sys.argv[1]) if len(sys.argv) > 1 else SRC).items()):
        print(m)
        for line, text in reads:
            print(f"  {line}: {text}")
