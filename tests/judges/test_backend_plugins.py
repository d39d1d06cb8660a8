"""The judge-backend registry reaches backends defined above it (``structural:``) or in other packages
through the registry ``judges.base.BACKENDS`` (``judgeaudit.registry``): judgeaudit's own are declared by the
top package, other packages' are entry points of the group ``judgeaudit.judges``; never by importing them:
``judgeaudit.judges`` does not import ``judgeaudit.structural``, and ``make_judge("structural:lexical")``
still works, with or without installed metadata that lists the plug-in."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import judgeaudit

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(judgeaudit.__file__).resolve().parents[1]   # the sources under test (first on the path)


def _python(code: str, *paths: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *map(str, paths)])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env)


def test_importing_the_judges_does_not_import_structural_and_the_lookup_finds_it():
    p = _python("""
        import sys
        import judgeaudit.judges as j
        assert not any(m.startswith("judgeaudit.structural") for m in sys.modules), "imported on import"
        judge = j.make_judge("structural:lexical")
        assert type(judge).__name__ == "StructuralJudge" and judge.spec.backend == "structural"
        assert "structural" in j.registered()
        print("ok")
    """)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr



def test_the_built_in_table_is_the_pyproject_entry_points():
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    ours = {g: dict(v) for g, v in eps.items() if g.startswith("judgeaudit.")}
    assert ours == judgeaudit.ENTRY_POINTS
    assert ours["judgeaudit.judges"]["structural"] == "judgeaudit.structural.judge"


def _distribution(root: Path, name: str, entry: str, module: str, source: str | None) -> Path:
    """An installed distribution on ``root`` (a .dist-info with entry_points.txt) and its module."""
    info = root / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[judgeaudit.judges]\n{entry} = {module}\n")
    if source is not None:
        (root / f"{module}.py").write_text(textwrap.dedent(source))
    return root


def test_another_package_adds_a_backend_through_its_entry_point(tmp_path):
    _distribution(tmp_path / "a", "echo_judge", "echo", "echo_judge_plugin", """
        from judgeaudit.judges.base import register

        @register("echo", "a plug-in backend from another package")
        def make(argument, options):
            from judgeaudit.judges import make_judge
            return make_judge("reference:constant", id=options["id"])
    """)
    _distribution(tmp_path / "b", "broken_judge", "broken", "broken_judge_plugin", "raise ImportError('no')\n")
    p = _python("""
        import warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as w:
            from judgeaudit.judges import make_judge, registered
            j = make_judge("echo:anything")
            assert j.id == "echo:anything", j.id
            assert "echo" in registered() and "structural" in registered()
        msgs = [str(x.message) for x in w]
        assert any("plug-in 'broken' (broken_judge_plugin)" in m and "could not be loaded" in m for m in msgs), msgs
        print("ok")
    """, tmp_path / "a", tmp_path / "b")
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_an_installed_entry_point_naming_the_built_in_plug_in_is_the_declared_one(tmp_path):
    """An installed entry point naming one of judgeaudit's own modules is never imported by the registry (the
    top package declares that plug-in), and a lookup of another name does not import it."""
    _distribution(tmp_path, "judgeaudit_copy", "structural", "judgeaudit.structural.judge", None)
    p = _python("""
        import sys
        from judgeaudit.registry import declared, external_entry_points
        assert "structural" not in {ep.name for ep in external_entry_points("judgeaudit.judges")}
        assert "structural" in declared("judgeaudit.judges")
        from judgeaudit.judges import make_judge
        make_judge("reference:constant")
        assert not any(m.startswith("judgeaudit.structural") for m in sys.modules), "imported by another lookup"
        print("ok")
    """, tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
