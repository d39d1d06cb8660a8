"""``judgeaudit.registry.Registry``: the one registry type (judge backends, executor backends, replay formats,
template families, the card's missing-run maker). Registering, the overwrite rule, lookups that name the known
entries, and lazy loading: a declared name loads its own module only; other packages' entry points load on a
miss; judgeaudit's own installed entry points are never imported from the registry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import judgeaudit
from judgeaudit import registry as R
from judgeaudit.registry import Registry

SRC = Path(judgeaudit.__file__).resolve().parents[1]


@pytest.fixture
def group(request):
    """A fresh entry-point group name with nothing declared (its declarations removed after)."""
    name = f"judgeaudit.test.{request.node.name}"
    yield name
    R._DECLARED.pop(name, None)
    R._EXTERNAL_LOADED.discard(name)


def test_register_get_names_and_the_decorator():
    reg: Registry[int] = Registry("number")
    assert reg.register("one", 1) == 1

    @reg.register("f")
    def f():
        return 2

    assert reg.get("one") == 1 and reg.get("f") is f and f() == 2
    assert reg.names() == ["f", "one"] and reg.items() == {"f": f, "one": 1}
    assert "one" in reg and "two" not in reg


def test_the_same_object_again_is_a_no_op_and_another_is_refused():
    reg: Registry[object] = Registry("judge backend")
    a, b = object(), object()
    reg.register("x", a)
    reg.register("x", a)
    with pytest.raises(ValueError, match="judge backend 'x' is already registered"):
        reg.register("x", b)
    assert reg.get("x") is a


def test_override_replaces_for_a_block_only():
    reg: Registry[int] = Registry("number")
    reg.register("x", 1)
    with reg.override("x", 2):
        assert reg.get("x") == 2
    with reg.override("y", 3):
        assert reg.names() == ["x", "y"]
    assert reg.get("x") == 1 and reg.names() == ["x"]


def test_an_unknown_name_raises_the_registry_error_naming_the_known_ones():
    reg: Registry[int] = Registry("replay format", error=lambda msg: KeyError(msg))
    reg.register("inspect", 1)
    reg.register("promptfoo", 2)
    with pytest.raises(KeyError, match=r"unknown replay format 'nope'; known: inspect, promptfoo"):
        reg.get("nope")
    with pytest.raises(LookupError, match=r"unknown thing 'a'; known: none"):
        Registry("thing").get("a")


def test_a_declared_name_loads_its_own_module_only_and_once(group):
    reg: Registry[str] = Registry("thing", group)
    loaded: list[str] = []

    def loader(name):
        def load():
            loaded.append(name)
            reg.register(name, name.upper())
        return load

    R.declare(group, "a", loader("a"))
    R.declare(group, "b", loader("b"))
    assert loaded == []                      # declaring imports nothing
    assert reg.get("a") == "A" and loaded == ["a"]
    assert reg.get("a") == "A" and loaded == ["a"]
    assert reg.names() == ["a", "b"] and loaded == ["a", "b"]   # the whole table loads every declared one


def test_a_loader_that_fails_is_tried_again_on_the_next_lookup(group):
    reg: Registry[int] = Registry("thing", group)
    calls = []

    def load():
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("first time")
        reg.register("a", 1)

    R.declare(group, "a", load)
    with pytest.raises(ImportError):
        reg.get("a")
    assert reg.get("a") == 1 and len(calls) == 2


def _python(code: str, *paths: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *map(str, paths)])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env)


def _distribution(root: Path, name: str, group: str, entries: dict[str, str]) -> None:
    info = root / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    body = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{body}")


def test_entry_points_of_other_packages_load_lazily_on_a_miss(tmp_path):
    _distribution(tmp_path, "fake_plugin", "judgeaudit.test_group", {"fake": "fake_plugin_mod"})
    (tmp_path / "fake_plugin_mod.py").write_text(textwrap.dedent("""
        from judgeaudit.registry import Registry
        import reg_holder
        reg_holder.REG.register("fake", "from the fake package")
    """))
    (tmp_path / "reg_holder.py").write_text(
        "from judgeaudit.registry import Registry\nREG = Registry('thing', 'judgeaudit.test_group')\n")
    p = _python("""
        import sys
        import reg_holder
        reg_holder.REG.register("own", "own")
        assert reg_holder.REG.get("own") == "own"
        assert "fake_plugin_mod" not in sys.modules, "loaded before a miss"
        assert reg_holder.REG.get("fake") == "from the fake package"
        print("ok")
    """, tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_a_broken_plug_in_of_another_package_is_a_warning_naming_it(tmp_path):
    _distribution(tmp_path, "broken_plugin", "judgeaudit.test_group", {"broken": "broken_plugin_mod"})
    (tmp_path / "broken_plugin_mod.py").write_text("raise ImportError('no')\n")
    p = _python("""
        import warnings
        from judgeaudit.registry import Registry
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as w:
            reg = Registry("thing", "judgeaudit.test_group")
            try:
                reg.get("x")
            except LookupError as e:
                assert "unknown thing 'x'; known: none" in str(e), e
        msgs = [str(x.message) for x in w]
        assert any("plug-in 'broken' (broken_plugin_mod) of judgeaudit.test_group could not be loaded" in m
                   for m in msgs), msgs
        print("ok")
    """, tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_judgeaudit_declares_its_own_plug_ins_from_the_top():
    """Every own plug-in of the five registries is declared by the top package (``ENTRY_POINTS``)."""
    for group, table in judgeaudit.ENTRY_POINTS.items():
        assert set(R.declared(group)) == set(table), group


def test_the_five_registries_are_registry_instances():
    from judgeaudit.card.make import MAKERS
    from judgeaudit.judges.base import BACKENDS
    from judgeaudit.judges.forms import FAMILIES
    from judgeaudit.judges.replay import FORMATS
    from judgeaudit.runtime.backends import BACKENDS as EXECUTORS

    regs = {r.group: r for r in (MAKERS, BACKENDS, FAMILIES, FORMATS, EXECUTORS)}
    assert all(isinstance(r, Registry) for r in regs.values())
    assert set(regs) == set(judgeaudit.ENTRY_POINTS)
