"""What the card's verdict reads: intervals of κ inside κ's range; "above its permutation null" only
on the Benjamini–Hochberg-adjusted p the validation-power report prints; a sentence for the world
run's paired arm difference and for the loop's arms; "Not measured" only for what was not run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from judgeaudit.analyses.validation_power import a_imp_interval
from judgeaudit.card.build import build_card
from judgeaudit.card.sources import collect

J = "api:acme/judge-1"


def _write(folder: Path, data: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps({**data, "run_id": f"run-{folder.name}",
                                                    "created_at": "2026-09-02T00:00:00+00:00"}))


# --- a_imp's interval stays in κ's range -------------------------------------------------------------------


def test_a_imp_interval_stays_inside_kappas_range_near_its_ends():
    """Few groups, members near κ = 1 (a label set that length reproduces almost exactly) and near
    κ = −1: the studentised band κ̂ ± c·se ran past ±1 (a_imp 1.00 [0.75, 1.25] on the demo)."""
    rng = np.random.default_rng(0)
    for s in range(20):
        n = 24
        y = rng.integers(0, 2, n).astype(str)
        flip = lambda acc: np.where(rng.random(n) < acc, y, np.where(y == "0", "1", "0"))  # noqa: E731
        for preds in ([flip(0.96), flip(0.9)], [flip(0.04)], [flip(0.97), flip(0.5), flip(0.6)]):
            lo, hi = a_imp_interval(y, preds, np.arange(n), n_boot=300, seed=s)
            assert -1.0 <= lo <= hi <= 1.0, (s, lo, hi)


# --- the p the report's test uses ---------------------------------------------------------------------------


def _vp_row(p: float, **extra) -> dict:
    return {"applicable": True, "n": 120, "a_imp": 0.12, "a_imp_ci": [0.03, 0.21], "a_imp_member": "length_only",
            "a_imp_null": {"n": 999, "p_value": p, "p95": 0.05, "clears_null": p < 0.05, **extra},
            "a_hum": None, "a_hum_ci": None, "vp": None, "resolvable": None}


def test_above_the_null_is_read_on_the_bh_adjusted_p(tmp_path):
    # raw p 0.04, 0.045 and 0.30 over the run's three rows: BH-adjusted 0.0675, 0.0675, 0.30
    _write(tmp_path / "vp", {"config": {}, "transfer": [], "sets": {
        "a": {"meta": {}, "item": _vp_row(0.04)}, "b": {"meta": {}, "item": _vp_row(0.045)},
        "c": {"meta": {}, "item": _vp_row(0.30)}}})
    lines = build_card(J, collect([tmp_path])).verdict
    assert not [x for x in lines if "above its permutation null" in x and "is not" not in x], lines
    assert any("Recovery of a (item)" in x and "not established" in x and "adjusted p = 0.068" in x for x in lines)


def test_a_recorded_bh_p_is_the_one_read(tmp_path):
    _write(tmp_path / "vp", {"config": {}, "transfer": [], "sets": {
        "a": {"meta": {}, "item": _vp_row(0.01, p_value_bh=0.127)}}})
    lines = build_card(J, collect([tmp_path])).verdict
    assert any("not established" in x and "adjusted p = 0.13" in x for x in lines), lines
    _write(tmp_path / "vp", {"config": {}, "transfer": [], "sets": {
        "a": {"meta": {}, "item": _vp_row(0.01, p_value_bh=0.01)}}})
    lines = build_card(J, collect([tmp_path])).verdict
    assert any("reproduces part of its validation set a" in x and "adjusted p = 0.01" in x for x in lines), lines


# --- world and loop findings ----------------------------------------------------------------------------------


def _world(gain: float, ci: list[float], p: float) -> dict:
    """A world run's result with every key the run writes beside the rates (the card reads it as ``WorldAnalysis``)."""
    counts = {"n": 14, "n_defective": 7, "n_clean": 7, "no_verdict": 0, "answers": 14, "ties": 0,
              "parse_failures": 0, "unit": "answer", "scored": "per-answer labels"}
    return {"arms": ["blind", "informed"], "tie_rule": "any", "form": "label", "n_boot": 2000, "seed": 0,
            "spearman": [],
            "judges": {J: {"arms": {"blind": {**counts, "recall": 0.286, "ci": {"recall": [0.07, 0.5]}},
                                    "informed": {**counts, "recall": 0.714, "ci": {"recall": [0.5, 0.93]}}}}},
            "paired": [{"judge": J, "a": "blind", "b": "informed", "metric": "recall", "unit": "answer",
                        "matcher": None, "n": 14, "bootstrap": {"unit": "group", "n": 7}, "a_value": 0.286,
                        "b_value": 0.714, "gain": gain, "ci": ci,
                        "mcnemar": {"b": 6, "c": 0, "p": p, "stratum": "defective", "units": 7,
                                    "b_is": "defective units a missed and b found",
                                    "c_is": "defective units a found and b missed"}}]}


def test_the_world_runs_paired_difference_gets_a_sentence(tmp_path):
    _write(tmp_path / "w", _world(0.429, [0.214, 0.643], 0.031))
    lines = build_card(J, collect([tmp_path])).verdict
    assert ("In the world run its recall is higher when informed than when blind (informed − blind recall "
            "+0.43 [+0.21, +0.64] on 14 paired answers; exact McNemar p = 0.031).") in lines, lines
    _write(tmp_path / "w", _world(0.2, [0.01, 0.4], 0.12))      # interval and test disagree: no claim
    lines = build_card(J, collect([tmp_path])).verdict
    assert any("difference in recall is not established" in x for x in lines), lines
    assert not any("is higher when" in x for x in lines)


def test_a_loop_that_ran_is_not_listed_as_not_measured(tmp_path):
    _write(tmp_path / "l", {"judge": J, "judge2": None, "calls": {J: {"calls": 2, "failed_calls": 0,
                                                                       "parse_failures": 2, "usable": 0}},
                            "regulators": {"none": {"net": -0.04, "net_ci": [-0.08, -0.01]},
                                           "blind": {"net": 0.0, "net_ci": [0.0, 0.0], "status": "no usable report"}}})
    card = build_card(J, collect([tmp_path])).to_json()
    lines = card["verdict"]
    absent = next(x for x in lines if x.startswith("Not measured"))
    assert "loop" not in absent
    assert any("gave no usable verdict" in x and "2 calls: 0 failed, 2 did not parse" in x for x in lines), lines
    assert any(x.startswith("In the loop, arm none breaks more than it fixes (net -0.04") for x in lines), lines
    assert card["sections"]["loop"]["regulators"]["blind"]["net"] is None
