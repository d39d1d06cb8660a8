"""``card diff``: a planted change is detected, and with no change the flag rate is the nominal 5%."""

from __future__ import annotations

import json

import numpy as np
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
