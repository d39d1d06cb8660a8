"""``card diff``: a planted change is detected, and with no change the flag rate is the nominal 5%."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cardshape import whole
from typer.testing import CliRunner

from judgeaudit.card.diff import diff_cards
from judgeaudit.cli import app

N_ITEMS, N_BOOT, N_SIM = 200, 400, 2000


def _cards(p: float, seed: int) -> list[dict]:
    """N_SIM synthetic cards: R is the mean of N_ITEMS Bernoulli(p) flips with a percentile bootstrap
    interval (the bootstrap mean of 0/1 data is Binomial(n, p̂)/n, drawn directly)."""
    rng = np.random.default_rng(seed)
    phat = rng.binomial(N_ITEMS, p, N_SIM) / N_ITEMS
    boot = rng.binomial(N_ITEMS, phat[:, None], (N_SIM, N_BOOT)) / N_ITEMS
    lo, hi = np.quantile(boot, [0.025, 0.975], axis=1)
    empty = {"measured": False, "not_measured": "not measured"}
    return [whole({"judge": "j", "generated_at": str(seed), "sections": {
        "validity": {"measured": True, "tau": 5.0, "metrics": {"R": {"value": float(v), "ci": [float(a), float(b)]}},
                     "per_axis": {}}, "cap": empty, "vp": empty}}) for v, a, b in zip(phat, lo, hi, strict=True)]


def _flag_rate(a: list[dict], b: list[dict]) -> float:
    return float(np.mean([diff_cards(x, y)[0].flagged for x, y in zip(a, b, strict=True)]))


def test_no_change_is_flagged_at_the_nominal_rate_and_a_planted_change_is_detected():
    base = _cards(0.30, seed=1)
    assert 0.03 <= _flag_rate(base, _cards(0.30, seed=2)) <= 0.07
    # a planted change of +0.15 (n = 200 per run): the normal-theory power is ≈ 0.88
    assert _flag_rate(base, _cards(0.45, seed=3)) >= 0.80


def test_card_diff_cli_on_two_cards(tmp_path):
    a, b = _cards(0.30, seed=4)[0], _cards(0.30, seed=5)[0]
    a["sections"]["validity"]["metrics"]["R"] = {"value": 0.30, "ci": [0.24, 0.36]}
    b["sections"]["validity"]["metrics"]["R"] = {"value": 0.45, "ci": [0.38, 0.52]}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "card.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    res = CliRunner().invoke(app, ["card", "diff", str(tmp_path / "a"), str(tmp_path / "b.json")])
    assert res.exit_code == 0, res.output
    # half-width 1.96·√((0.06/1.96)² + (0.07/1.96)²) = √(0.06² + 0.07²) = 0.0922
    assert "| validity.R | 0.300 | 0.450 | +0.150 | [+0.058, +0.242] | **changed** |" in res.output
    assert "1 of 1 compared quantities changed" in res.output


def test_each_quantity_appears_once_in_a_diff():
    """The per-axis R of a card is R_scope / R_strength: compared once, not again as validity.scope.R."""
    a, b = _cards(0.30, seed=6)[:2]
    for c in (a, b):
        v = c["sections"]["validity"]
        v["metrics"]["R_scope"] = dict(v["metrics"]["R"])
        v["per_axis"] = {"scope": {"R": dict(v["metrics"]["R"]),
                                   "R_plus": {"value": 0.1, "ci": [0.05, 0.15]}}}
    names = [c.quantity for c in diff_cards(a, b)]
    assert sorted(names) == ["validity.R", "validity.R_scope", "validity.scope.R_plus"]


def _vp_card(judge: str, run_id: str | None, a_imp: float = 0.40, ci: tuple[float, float] = (0.30, 0.50)) -> dict:
    row = {"set": "s", "mode": "pair", "n": 200, "a_imp": a_imp, "a_imp_ci": list(ci),
           "source": {"path": "/runs/vp/result.json", "run_id": run_id, "created_at": None}}
    return whole({"judge": judge, "sections": {"vp": {"measured": True, "rows": [row]}}})


def test_two_judges_cards_reading_one_vp_run_carry_one_measurement_not_two():
    """The label-set audit does not depend on the judge: two judges' cards built from one VP run read the same
    a_imp, and their difference is exactly 0 with no width, not an unpaired interval of ±0.14 around it."""
    (c,) = diff_cards(_vp_card("j1", "vp-run-1"), _vp_card("j2", "vp-run-1"))
    assert c.quantity == "vp.s.pair.a_imp"
    assert (c.diff, c.ci, c.flagged) == (0.0, (0.0, 0.0), False)
    assert c.how == "the same run (vp-run-1): one measurement, read by both cards"


def test_vp_rows_of_two_runs_or_of_runs_without_an_id_are_compared_unpaired():
    # half-width 1.96·√((0.10/1.96)² + (0.10/1.96)²) = 0.1414
    for ra, rb in (("vp-run-1", "vp-run-2"), (None, None), ("", "")):
        (c,) = diff_cards(_vp_card("j1", ra), _vp_card("j2", rb, a_imp=0.45, ci=(0.35, 0.55)))
        assert c.how == "unpaired (stored intervals)", (ra, rb)
        assert c.diff == pytest.approx(0.05) and c.ci == pytest.approx((0.05 - 0.14142, 0.05 + 0.14142), abs=1e-4)


def test_a_diff_says_how_many_rows_were_read_from_the_same_run(tmp_path):
    a, b = _vp_card("j1", "vp-run-1"), _vp_card("j2", "vp-run-1")
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    res = CliRunner().invoke(app, ["card", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert res.exit_code == 0, res.output
    assert "| vp.s.pair.a_imp | 0.400 | 0.400 | +0.000 | [+0.000, +0.000] |  | the same run (vp-run-1)" in res.output
    assert ("0 of 1 compared quantities changed (interval of the difference excludes zero); 0 paired over shared "
            "units, 0 unpaired, 1 read from the same run by both cards; 0 not comparable.") in res.output
