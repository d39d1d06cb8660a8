"""The typed CAP result: a ``result.json`` written before the schema was versioned reads through ``CapFile`` with
every key kept; the run writes a superset of those keys (``schema_version``, ``settings.level``, each set's
``n_units``, each judge's ``identity``); and a key renamed in a file is an error at every reader (the card, the
gate, the register), not an empty value."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cardshape import whole

import judgeaudit
from judgeaudit.analyses.cap.schema import SCHEMA_VERSION, CapFile, Estimate
from judgeaudit.errors import InputError

SCHEMA0 = Path(__file__).parent / "data" / "cap_result_schema0.json"
DATA = Path(judgeaudit.__file__).parent / "data"
POSITIONAL = "arena_hard/fixture-judge-positional"


def _paths(x, p=""):
    """Every key path of a JSON object (lists' items left out)."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out |= {f"{p}/{k}"} | _paths(v, f"{p}/{k}")
    return out


def _raw():
    return json.loads(SCHEMA0.read_text(encoding="utf-8"))


def test_a_schema_0_file_reads_with_every_value_and_key_kept():
    raw = _raw()
    f = CapFile.read(SCHEMA0)
    assert f.schema_version == 0 and f.to_json() == raw
    assert set(f.sets) == {"judgebench", "llmbar", "llmbar_mtbench"}
    for s, sb in raw["sets"].items():
        for j, jb in sb["judges"].items():
            for c, cell in [*jb["conditions"].items(), ("overall", jb["overall"])]:
                e = f.estimate(s, j, c)
                assert (e.value, list(e.ci)) == (cell["value"], cell["ci"])
                assert (e.unit.resampled, e.unit.n, e.unit.resamples, e.unit.level) == ("base_id", None, 50, 0.95)
                for m in ("strict", "consistency", "acc_AB", "acc_BA", "q0", "q1"):
                    if m in cell:
                        assert f.estimate(s, j, c, m).value == cell[m]["value"]
    c7 = raw["sets"]["judgebench"]["judges"]["reference:length"]["conditions"]["C7"]
    assert f.estimate("judgebench", "reference:length", "C7", "consistency").ci == tuple(c7["consistency"]["ci"])
    ident = f.identity("judgebench", "reference:length")
    assert (ident.family, ident.model, ident.template, ident.scale) == ("reference", None, None, None)


def test_a_cell_has_only_the_metrics_its_operator_gives():
    f = CapFile.read(SCHEMA0)
    assert isinstance(f.estimate("judgebench", POSITIONAL, "C7", "acc_BA"), Estimate)
    with pytest.raises(KeyError):
        f.estimate("judgebench", POSITIONAL, "C1", "acc_BA")     # a content cell has no per-ordering accuracy
    with pytest.raises(KeyError):
        f.estimate("judgebench", POSITIONAL, "C3")               # unavailable on the set: no cell


@pytest.mark.parametrize(("rename", "field"), [
    (("sets", "judgebench", "judges", POSITIONAL, "conditions", "C7", "value"), f"sets.judgebench.judges.{POSITIONAL}"
                                                                               ".conditions.C7.value"),
    (("sets", "llmbar", "judges", "reference:length", "overall"), "sets.llmbar.judges.reference:length.overall"),
    (("settings", "n_boot"), "settings.n_boot"),
    (("sets", "judgebench", "coverage", "C1", "status"), "sets.judgebench.coverage.C1.status"),
    (("sets", "judgebench", "judges", POSITIONAL, "conditions", "C1", "coverage"),
     f"sets.judgebench.judges.{POSITIONAL}.conditions.C1.coverage"),
    (("sets", "judgebench", "judges"), "sets.judgebench.judges"),
])
def test_a_renamed_key_is_an_error_naming_it_not_an_empty_value(tmp_path, rename, field):
    raw = _raw()
    at = raw
    for k in rename[:-1]:
        at = at[k]
    at[rename[-1] + "_renamed"] = at.pop(rename[-1])
    p = tmp_path / "result.json"
    p.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError) as e:
        CapFile.read(p)
    assert e.value.field == field and str(p) in str(e.value)


def test_the_run_writes_a_superset_of_the_schema_0_keys_with_units_and_identity(tmp_path):
    """The same command as the fixture's: every key path the earlier code wrote is still written, with the same
    numbers; the new keys give each set's resampled units and each judge's identity."""
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["cap", "run", "--set", f"judgebench:{DATA / 'judgebench_fixture'}", "--set",
                                 f"llmbar:{DATA / 'llmbar'}", "--published", "--judge", "reference:length",
                                 "--bootstrap", "50", "--stress", "llmbar=llmbar_mtbench", "--out", str(out)])
    assert r.exit_code == 0, r.output
    new = json.loads((out / "result.json").read_text(encoding="utf-8"))
    old = _raw()
    files = "/inputs/files/"   # keyed by the sets' paths, which the fixture writes as DATA/…
    assert {k for k in _paths(old) - _paths(new) if not k.startswith(files)} == set()
    assert len([k for k in _paths(old) if k.startswith(files)]) == len([k for k in _paths(new) if k.startswith(files)])
    assert new["schema_version"] == SCHEMA_VERSION == 1
    drop = ("inputs", "run_id", "created_at", "answers", "schema_version")
    strip = copy.deepcopy(new)
    for sb in strip["sets"].values():
        sb.pop("n_units")
        for jb in sb["judges"].values():
            jb.pop("identity")
    strip["settings"].pop("level")
    assert {k: v for k, v in strip.items() if k not in drop} == {k: v for k, v in old.items() if k not in drop}
    f = CapFile.read(out)
    import pandas as pd

    from judgeaudit.datasets import judgebench

    pairs = judgebench.load_pairs(DATA / "judgebench_fixture")
    assert f.sets["judgebench"].n_units == pairs["base_id"].nunique() > 0
    assert f.unit("judgebench").n == f.sets["judgebench"].n_units and f.unit("judgebench").resamples == 50
    ident = f.identity("judgebench", POSITIONAL)
    tables = judgebench.published_judges(DATA / "judgebench_fixture")
    assert ident.family == f.judge("judgebench", POSITIONAL).family
    assert ident.model is not None and ident.model == pd.Series(tables[POSITIONAL]["model"]).dropna().iloc[0]


# --------------------------------------------------------------------------- the readers refuse a renamed key


def _rename_overall_value(d):
    d = copy.deepcopy(d)
    ov = d["sets"]["llmbar"]["judges"]["reference:length"]["overall"]
    ov["val"] = ov.pop("value")
    return d


def test_the_register_reads_the_typed_result():
    from judgeaudit.ledger.register import headlines

    raw = _raw()
    got = dict(headlines("cap", raw))
    assert got["/sets/llmbar/judges/reference:length/overall"] == \
        raw["sets"]["llmbar"]["judges"]["reference:length"]["overall"]["value"]
    with pytest.raises(InputError) as e:
        dict(headlines("cap", _rename_overall_value(raw)))
    assert e.value.field == "sets.llmbar.judges.reference:length.overall.value"


def test_the_card_reads_the_typed_result(tmp_path):
    from judgeaudit.card.build import cap_section
    from judgeaudit.card.sources import Run

    raw = _raw()
    p = tmp_path / "result.json"
    sec = cap_section([Run(p, "cap", raw)], "reference:length")
    cell = raw["sets"]["judgebench"]["judges"]["reference:length"]["conditions"]["C7"]
    assert sec["sets"]["judgebench"]["conditions"]["C7"] == {
        "value": cell["value"], "ci": cell["ci"], "n": cell["n"], "coverage": cell["coverage"],
        "strict": {"value": cell["strict"]["value"], "ci": cell["strict"]["ci"]},
        "consistency": {"value": cell["consistency"]["value"], "ci": cell["consistency"]["ci"]}}
    ov = raw["sets"]["llmbar"]["judges"]["reference:length"]["overall"]
    assert sec["sets"]["llmbar"]["overall"] == {"value": ov["value"], "ci": ov["ci"], "n": ov["n"]}
    with pytest.raises(InputError) as e:
        cap_section([Run(p, "cap", _rename_overall_value(raw))], "reference:length")
    assert e.value.field == "sets.llmbar.judges.reference:length.overall.value" and str(p) in str(e.value)


def test_the_card_verdict_and_the_gate_refuse_a_renamed_cell_key():
    from judgeaudit.card.build import lead
    from judgeaudit.gate.quantities import read

    sb = {"overall": {"value": 0.7, "ci": [0.6, 0.8], "n": 100},
          "conditions": {"C1": {"value": 0.9, "ci": [0.85, 0.95], "n": 50, "coverage": "direct"},
                         "C2": {"value": 0.5, "ci": [0.4, 0.6], "n": 50, "coverage": "direct"}}}
    card = whole({"sections": {"cap": {"measured": True, "sets": {"s": sb}}}})
    assert dict(lead(card)["judge"])["cap"][0].startswith("On s its CAP profile is weakest on C2 (")
    r = read(card, "cap.s.C2")[0]
    assert (r.value, r.ci, r.n) == (0.5, (0.4, 0.6), 50)
    bad = copy.deepcopy(sb)
    bad["conditions"]["C2"]["coverage_status"] = bad["conditions"]["C2"].pop("coverage")
    bad["conditions"]["C1"]["val"] = bad["conditions"]["C1"].pop("value")
    with pytest.raises(InputError) as e:   # the card's sentences read it typed: the renamed key is named
        lead(whole({"sections": {"cap": {"measured": True, "sets": {"s": bad}}}}))
    assert e.value.field == "sections.cap.sets.s.conditions.C1.value" and "malformed card" in str(e.value)
    card["sections"]["cap"]["sets"]["s"] = bad
    with pytest.raises(InputError) as e:
        read(card, "cap.s.C1")
    assert e.value.field == "sections.cap.sets.s.conditions.C1.value" and "malformed card" in str(e.value)
