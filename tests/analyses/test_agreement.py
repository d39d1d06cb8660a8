"""Direction agreement per slot and axis (construct-validity.txt §4.2 Table 3, App. C), against
values computed by hand on a small fixed label table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses.agreement import direction_agreement
from judgeaudit.stats.agreement import rater_pair_agreement

E, O, N, C = "edited", "original", "neither", "cannot_tell"

HEDGING = [[E, E, E], [E, E, N], [E, N, C], [N, N, N]]
REGISTER = [[N, N, N], [N, N, N], [N, N, N], [N, N, E]]
FACTS = [[False, True, False], [False] * 3, [False] * 3, [False] * 3]
VERIFIER = [True, False, True, False]


def table() -> pd.DataFrame:
    rows = []
    for i, lab in enumerate(HEDGING):
        rows.append({"probe_id": f"h{i}", "slot": "hedging_removal", "labels": lab,
                     "meta": {"facts_differ": FACTS[i], "verifier_report": {"second_claims_more": VERIFIER[i]}}})
    for i, lab in enumerate(REGISTER):
        rows.append({"probe_id": f"r{i}", "slot": "register_shift", "labels": lab, "meta": {}})
    rows.append({"probe_id": "u", "slot": "register_shift", "labels": None, "meta": {}})
    return pd.DataFrame(rows)


def test_hand_computed_slot_values():
    res = direction_agreement(table())
    h = res.per_slot.set_index("slot").loc["hedging_removal"]
    # pairs agreeing: 3 + 1 + 0 + 3 of 12
    assert h["agree"] == pytest.approx(7 / 12)
    # Fleiss: P̄ = (1 + 1/3 + 0 + 1)/4 = 7/12; p = (6, 0, 5, 1)/12 -> Pe = 62/144; κ = 22/82
    assert h["fleiss_kappa"] == pytest.approx(22 / 82)
    assert [h["agree_1_2"], h["agree_1_3"], h["agree_2_3"]] == pytest.approx([0.75, 0.5, 0.5])
    assert (h["pair_min"], h["pair_max"]) == (0.5, 0.75)
    assert h["all_differ"] == 1 and h["no_majority"] == 1
    assert h["usable"] == 2 and h["yield"] == 0.5
    assert h["cannot_tell_rate"] == pytest.approx(1 / 12)
    assert h["facts_differ_rate"] == pytest.approx(1 / 12)
    assert h["verifier_agree"] == pytest.approx(2 / 3)
    assert not h["measurable"] and "below bar" in h["note"]
    assert not h["dominance_flag"]

    r = res.per_slot.set_index("slot").loc["register_shift"]
    assert r["n"] == 4 and r["agree"] == pytest.approx(10 / 12)
    # P̄ = 10/12, Pe = (11/12)² + (1/12)² = 122/144 -> κ = -2/22 although raw agreement is 0.83
    assert r["fleiss_kappa"] == pytest.approx(-2 / 22)
    assert r["dominance_flag"] and r["dominant"] == N and r["dominant_share"] == pytest.approx(11 / 12)
    assert r["measurable"] and r["usable"] == 4 and r["yield"] == 1.0
    assert np.isnan(r["facts_differ_rate"]) and np.isnan(r["verifier_agree"])


def test_axes_overall_bar_and_exclusion():
    res = direction_agreement(table())
    ax = res.per_axis.set_index("axis")
    assert set(ax.index) == {"strength", "control"}
    assert ax.loc["strength", "agree"] == pytest.approx(7 / 12)
    assert res.overall["agree"] == pytest.approx(17 / 24) and res.overall["n"] == 8
    assert res.n_unlabelled == 1 and res.n_raters == 3
    assert res.not_measurable() == {"slots": ["hedging_removal"], "axes": ["strength"]}
    assert res.excluded_slots() == ["hedging_removal"]
    # the bar is a parameter: at 0.5 both slots are measurable
    assert direction_agreement(table(), bar=0.5).excluded_slots() == []
    t3 = res.table3()
    assert list(t3.columns) == ["slot", "axis", "n", "agree", "usable", "note"]
    d = res.to_dict()
    assert d["per_slot"][0]["slot"] == "hedging_removal" and d["overall"]["n"] == 8
    assert len(res.to_frame()) == 2 + 2 + 1


def test_rater_pair_agreement_matrix_with_missing():
    m = rater_pair_agreement([["a", "a", None], ["a", "b", "b"], ["c", "c", "c"]])
    assert m[0, 1] == pytest.approx(2 / 3)
    assert m[0, 2] == pytest.approx(1 / 2) and m[1, 2] == pytest.approx(1.0)
    assert np.allclose(np.diag(m), 1.0) and np.allclose(m, m.T)
