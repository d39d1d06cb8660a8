"""The typed validation-power result: a ``result.json`` written before the schema was versioned reads with every
key kept; the run writes a superset of those keys (``schema_version``, each applicable row's ``unit``); a key
renamed in a file is an error at the reader (the card's), not an empty row."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from judgeaudit.analyses.validation_power.schema import SCHEMA_VERSION, VpFile, VpRows, reader
from judgeaudit.errors import InputError

SCHEMA0 = Path(__file__).parent / "data" / "vp_result_schema0.json"
SPEC = "jsonl:{}?prompt=q&response_a=ra&response_b=rb&label=pref"


def _paths(x, p=""):
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out |= {f"{p}/{k}"} | _paths(v, f"{p}/{k}")
    return out


def test_a_schema_0_file_reads_with_every_value_and_key_kept():
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    f = VpRows.read(SCHEMA0)
    assert f.schema_version == 0 and isinstance(reader(raw), VpRows) and not isinstance(reader(raw), VpFile)
    assert json.dumps(f.to_json(), sort_keys=True) == json.dumps(raw, sort_keys=True)
    assert [(s, m) for s, m, _, _ in f.rows()] == [("pairs", "item"), ("pairs", "paired")]
    e = f.a_imp("pairs", "item")
    row = raw["sets"]["pairs"]["item"]
    assert (e.value, list(e.ci)) == (row["a_imp"], row["a_imp_ci"])
    # the unit, read from the schema-0 keys: the 40 groups the bootstrap resampled, 1,000 times
    assert (e.unit.resampled, e.unit.n, e.unit.resamples, e.unit.level) == ("group", 40, 1000, 0.95)
    assert VpFile.read(SCHEMA0).to_json() == f.to_json()   # a schema-0 file has every key a run writes


@pytest.mark.parametrize(("versioned", "key", "field"), [
    (False, "a_imp", "sets.pairs.item"),        # what a card reads: required of any file
    (True, "a_imp", "sets.pairs.item"),
    (True, "a_hum_source", "sets.pairs.item"),  # a versioned file is read whole
])
def test_a_renamed_key_is_an_error_naming_it_not_an_empty_row(tmp_path, versioned, key, field):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    if versioned:
        raw["schema_version"] = SCHEMA_VERSION
    raw["sets"]["pairs"]["item"][f"{key}_renamed"] = raw["sets"]["pairs"]["item"].pop(key)
    p = tmp_path / "result.json"
    p.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError) as e:
        reader(raw, path=p)
    assert e.value.field == field and repr(key) in str(e.value) and str(p) in str(e.value)


def test_the_run_writes_a_superset_of_the_schema_0_keys_with_each_rows_unit(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from testkit import length_pairs_file

    pairs = length_pairs_file(tmp_path)
    r = CliRunner().invoke(app, ["vp", "audit", "--set", SPEC.format(pairs), "--permutations", "5", "--jobs", "1",
                                 "--seed", "0", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    new = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    old = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    # every key path but the input files' (keyed by the spec as given: here an absolute path)
    assert {p for p in _paths(old) - _paths(new) if not p.startswith("/inputs/files/")} == set()
    assert new["schema_version"] == SCHEMA_VERSION
    f = reader(new)
    assert isinstance(f, VpFile)
    for mode in ("item", "paired"):   # the same numbers as the earlier code on the same pairs and seed
        a, b = f.a_imp("pairs", mode), VpRows.of(old).a_imp("pairs", mode)
        assert (a.value, a.ci, a.unit) == (b.value, b.ci, b.unit)
        assert new["sets"]["pairs"][mode]["unit"] == {"resampled": "group", "n": 40, "resamples": 1000,
                                                       "level": 0.95}


def test_the_card_reads_the_rows_through_the_type(tmp_path):
    from judgeaudit.card.build import build_card
    from judgeaudit.card.sources import collect

    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    (tmp_path / "vp").mkdir()
    (tmp_path / "vp" / "result.json").write_text(json.dumps(raw), encoding="utf-8")
    rows = build_card("local", collect([tmp_path])).to_json()["sections"]["vp"]["rows"]
    assert [(r["set"], r["mode"], r["a_imp"]) for r in rows] == [
        ("pairs", m, raw["sets"]["pairs"][m]["a_imp"]) for m in ("item", "paired")]
    assert rows[0]["unit"] == {"resampled": "group", "n": 40, "resamples": 1000, "level": 0.95}
    raw["sets"]["pairs"]["paired"]["a_imp_"] = raw["sets"]["pairs"]["paired"].pop("a_imp")
    (tmp_path / "vp" / "result.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError) as e:
        build_card("local", collect([tmp_path]))
    assert e.value.field == "sets.pairs.paired" and "'a_imp'" in str(e.value)
