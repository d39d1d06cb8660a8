"""The card reads a world run through ``WorldFile``: the arms' rates and the paired gains with the units their
intervals resample, as the run recorded them; a key renamed in the run's ``result.json`` is an error naming the
file and the field, not an empty value on the card."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgeaudit.commands.card import card
from judgeaudit.errors import InputError

SCHEMA0 = Path(__file__).parents[1] / "analyses" / "data" / "world_result_schema0.json"
JUDGE = "reference:oracle"


def _run(tmp_path: Path, edit=None) -> Path:
    run = tmp_path / "w"
    run.mkdir()
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    if edit is not None:
        edit(raw)
    (run / "result.json").write_text(json.dumps(raw), encoding="utf-8")
    return run


def test_the_card_shows_the_world_rates_and_gains_with_their_units(tmp_path):
    c = card(JUDGE, [_run(tmp_path)], tmp_path / "c")
    w = c["sections"]["world"]
    assert w["arms"]["informed"]["recall"] == {"value": 1.0, "ci": [1.0, 1.0], "n": 8, "unit": "group"}
    assert w["arms"]["blind"]["recall"]["value"] == 0.0
    g = next(p for p in w["paired"] if (p["b"], p["metric"]) == ("informed", "recall"))
    assert (g["gain"], g["ci"], g["mcnemar_p"], g["n_pairs"], g["pair_unit"], g["n"], g["unit"]) == (
        1.0, [1.0, 1.0], 0.0078125, 16, "answer", 8, "group")
    assert any("its recall is higher when informed than when blind" in s for s in c["verdict"])


def _rename(raw: dict) -> None:
    p = next(p for p in raw["paired"] if p["judge"] == JUDGE)
    p["mcnemar_test"] = p.pop("mcnemar")


def test_a_renamed_key_of_the_world_run_is_an_error_naming_it(tmp_path):
    run = _run(tmp_path, _rename)
    with pytest.raises(InputError) as e:
        card(JUDGE, [run], tmp_path / "c")
    assert str(run / "result.json") in str(e.value) and e.value.field == "paired.0.mcnemar"
    assert not (tmp_path / "c" / "card.json").exists()
