"""``judges`` never imports the world package, not even inside a function: the world forms reach it
through the template-family registry (``judges.forms``) that ``world.forms`` fills."""

from __future__ import annotations

import ast
from pathlib import Path

import judgeaudit.judges

JUDGES = Path(judgeaudit.judges.__file__).parent


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module))
    return out


def test_judges_never_import_world():
    found = [f"{p.relative_to(JUDGES.parent)}:{line} imports {name}"
             for p in sorted(JUDGES.rglob("*.py")) for line, name in _imports(p)
             if name == "judgeaudit.world" or name.startswith("judgeaudit.world.")]
    assert not found, found


def test_the_world_family_is_registered_by_the_world_package():
    from judgeaudit.judges.forms import family
    from judgeaudit.records import JudgeRequest
    import judgeaudit.world.requests  # noqa: F401 - building world requests registers the family
    from judgeaudit.world import templates

    fam = family("world")
    r = JudgeRequest(request_id="w", form="label", text="The capital is Lyon.", evidence="Paris is the capital.",
                     meta={"template": "world"})
    from judgeaudit.judges import elicit

    assert elicit.render(r) == templates.render(r) == fam.render(r)
    assert elicit.parse_request(r, '{"defective": true}').label is True
    assert fam.reply_keys["label"] == "defective"
