"""The typed loop result: a ``result.json`` written before the schema was versioned reads through ``LoopFile`` with
every key kept; the run writes a superset of those keys (``schema_version``, the interval ``unit``, the feedback
judges' ``identities``), and a key renamed in a file is an error at the reader, not an empty value on a card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted import Constant, FixNamedUnits

from judgeaudit.errors import InputError
from judgeaudit.loop.schema import SCHEMA_VERSION, LoopFile

SCHEMA0 = Path(__file__).parent / "data" / "loop_result_schema0.json"
ARMS = ("control", "blind", "informed", "certificate")
COMMA = {"defects": [{"quote": "x", "reason": "the response uses a comma", "severity": 2}]}


def _paths(x, p=""):
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out |= {f"{p}/{k}"} | _paths(v, f"{p}/{k}")
    return out


def test_a_schema_0_file_reads_with_every_value_and_key_kept():
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    f = LoopFile.read(SCHEMA0)
    assert f.schema_version == 0 and tuple(f.regulators) == ARMS
    assert json.dumps(f.to_json(), sort_keys=True) == json.dumps(raw, sort_keys=True)   # NaN written as NaN
    for arm in ARMS:
        e = f.net(arm)
        assert (e.value, list(e.ci)) == (raw["regulators"][arm]["net"], raw["regulators"][arm]["net_ci"])
        # the interval's unit, read from the schema-0 keys: 4 responses, 50 resamples
        assert (e.unit.resampled, e.unit.n, e.unit.resamples, e.unit.level) == ("response", 4, 50, 0.95)
    d = f.difference("control", "informed")
    assert d.value == raw["differences"]["control - informed"]["net"]
    assert f.identity("scripted:constant").template is None
    with pytest.raises(KeyError):
        f.identity("scripted:fixer")     # the responder is not a feedback judge


def test_a_renamed_key_is_an_error_naming_it_not_an_empty_value(tmp_path):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    raw["regulators"]["blind"]["net_effect"] = raw["regulators"]["blind"].pop("net")
    p = tmp_path / "result.json"
    p.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError) as e:
        LoopFile.read(p)
    assert e.value.field == "regulators.blind.net" and str(p) in str(e.value)


def test_the_run_writes_a_superset_of_the_schema_0_keys_with_unit_and_identity(ifeval_dir, tmp_path):
    from judgeaudit.commands.loop import run_loop_command

    run_loop_command(task="ifeval", data=ifeval_dir, initial="shipped", responder=FixNamedUnits(),
                     judge=Constant(COMMA), regulators=list(ARMS), out=tmp_path / "run", rounds=2, votes=1,
                     bootstrap=50, seed=0, progress=False)
    new = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    old = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    assert _paths(old) - _paths(new) == set()
    assert new["schema_version"] == SCHEMA_VERSION
    f = LoopFile.read(tmp_path / "run")
    assert f.unit is not None and (f.unit.n, f.unit.resamples) == (4, 50)
    ident = f.identity("scripted:constant")
    assert (ident.family, ident.model) == ("reference", None)
    for arm in ARMS:     # the same numbers as the run of the earlier code on the same data and seed
        assert f.net(arm).value == old["regulators"][arm]["net"] and list(f.net(arm).ci) == \
            old["regulators"][arm]["net_ci"]


def _card_of(tmp_path, raw):
    from judgeaudit.card.build import build_card
    from judgeaudit.card.sources import collect

    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "result.json").write_text(json.dumps(raw), encoding="utf-8")
    return build_card("scripted:constant", collect([tmp_path])).to_json()


def test_the_card_reads_the_loop_through_its_type_with_the_unit_its_intervals_resampled(tmp_path):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    sec = _card_of(tmp_path, raw)["sections"]["loop"]
    assert sec["measured"] and sec["regulators"]["informed"] == {"net": raw["regulators"]["informed"]["net"],
                                                                 "ci": raw["regulators"]["informed"]["net_ci"]}
    assert sec["unit"] == {"resampled": "response", "n": 4, "resamples": 50, "level": 0.95}


def test_a_card_refuses_a_loop_result_whose_net_was_renamed(tmp_path):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    raw["regulators"]["informed"]["net_effect"] = raw["regulators"]["informed"].pop("net")
    with pytest.raises(InputError) as e:
        _card_of(tmp_path, raw)
    assert e.value.field == "regulators.informed.net" and "loop" in str(e.value.path)


def test_a_card_reads_a_versioned_loop_result_whole(tmp_path):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    raw["schema_version"] = SCHEMA_VERSION
    raw["planned"] = raw.pop("planned_calls")    # a key the card itself does not show
    with pytest.raises(InputError) as e:
        _card_of(tmp_path, raw)
    assert e.value.field == "planned_calls"
