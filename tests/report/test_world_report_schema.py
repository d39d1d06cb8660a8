"""The world report reads its result through ``WorldAnalysis``: the tables hold the run's numbers, and a key
renamed in the result is an error naming the field, not an empty cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeaudit.errors import InputError
from judgeaudit.report.world import arm_table, paired_table, world_sections

SCHEMA0 = Path(__file__).parents[1] / "analyses" / "data" / "world_result_schema0.json"


def _raw() -> dict:
    return json.loads(SCHEMA0.read_text(encoding="utf-8"))


def test_the_tables_hold_the_runs_numbers():
    raw = _raw()
    arms = arm_table(raw).set_index(["judge", "arm"])
    a = raw["judges"]["reference:oracle"]["arms"]["informed"]
    row = arms.loc[("reference:oracle", "informed")]
    assert (row["recall"], row["specificity"], row["n"], row["recall CI"]) == (a["recall"], a["specificity"], a["n"],
                                                                            "[1.000, 1.000]")
    paired = paired_table(raw)
    assert len(paired) == len(raw["paired"])
    first = paired.iloc[0]
    p = raw["paired"][0]
    assert (first["gain b−a"], first["McNemar on"], first["McNemar p"]) == (
        p["gain"], f"{p['mcnemar']['stratum']} units ({p['mcnemar']['units']})", f"{p['mcnemar']['p']:.3g}")
    assert world_sections(raw)


@pytest.mark.parametrize(("edit", "field"), [
    (lambda r: r["judges"]["reference:oracle"]["arms"]["blind"].update(no_answer=r["judges"]["reference:oracle"]
                                                                      ["arms"]["blind"].pop("no_verdict")),
     "judges.reference:oracle.arms.blind.no_verdict"),
    (lambda r: r["paired"][1].update(difference=r["paired"][1].pop("gain")), "paired.1.gain"),
])
def test_a_renamed_key_is_an_error_naming_it(edit, field):
    raw = _raw()
    edit(raw)
    with pytest.raises(InputError) as e:
        world_sections(raw)
    assert e.value.field == field
