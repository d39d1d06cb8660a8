"""``structural:local`` loads its model when the judge is built, before any arm runs (as ``structural:hf``
does): a model that cannot load is one ``error:`` line and exit 2, with no call made or stored, even in a
run whose blind arm would ask the model nothing. The HaluEval QA entailment fallback (``--nli local``) too."""

from __future__ import annotations

import sys
import types

import pytest
from typer.testing import CliRunner
from world_fixtures import tiny_items

import judgeaudit.judges.local as local
from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge

WHY = "Failed to load model from file: /nowhere/gemma.gguf"


@pytest.fixture
def unloadable(monkeypatch):
    """The embedded model cannot load (llama.cpp's own error for a missing or unreadable file)."""
    calls = {"n": 0}

    def fails(*a, **kw):
        calls["n"] += 1
        raise ValueError(WHY)

    monkeypatch.setattr(local, "load_model", fails)
    return calls


def test_building_the_judge_loads_the_model_and_fails_in_one_line(unloadable):
    with pytest.raises(InputError) as e:
        make_judge("structural:local")
    assert unloadable["n"] == 1
    assert e.value.field == "judge" and str(e.value) == f"field 'judge': the local NLI model could not be loaded ({WHY})"


def test_a_world_run_fails_before_any_arm(tmp_path, monkeypatch, unloadable):
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    out = tmp_path / "w"
    r = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "structural:local", "--arm", "blind",
                                 "--votes", "1", "--bootstrap", "20", "--permutations", "9", "--out", str(out)])
    assert isinstance(r.exception, InputError), r.output
    assert "the local NLI model could not be loaded" in str(r.exception)
    assert not (out / "calls.sqlite").exists() and not (out / "result.json").exists()


def test_the_entailment_fallback_loads_before_any_check(unloadable):
    from judgeaudit.structural.answer_entailment import make_fallback

    with pytest.raises(InputError, match="the local NLI model could not be loaded"):
        make_fallback("local")
