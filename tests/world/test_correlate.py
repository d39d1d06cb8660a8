"""Spearman ρ with permutation p in the world run: per-answer gains and false alarms against a
covariate (hand-computed on the tiny set, planted relation and null on simulated judges, bad
covariates as input errors)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from world_fixtures import ScriptedJudge, tiny_items

from judgeaudit.analyses.world.correlate import answer_false_alarms, answer_gains, correlations, covariate_table
from judgeaudit.analyses.world.scoring import decisions_frame
from judgeaudit.commands.world import run_world_cmd, write_report
from judgeaudit.errors import InputError
from judgeaudit.stats.tests import spearman_test

HINT = [1, 5, 2, 6, 3, 7, 4, 8]   # tiny items in order q0-right, q0-wrong, q1-right, …: the wrong answers rank 5–8


def _items():
    return [it.model_copy(update={"meta": {"hint": h}}) for it, h in zip(tiny_items(), HINT, strict=True)]


def _oracle_with_a_false_alarm(request):
    # the oracle, plus one false alarm on the clean answer q3-right when blind
    g, shown = request.meta["gold"], request.meta["world_shown"]
    fa = request.request_id.startswith("q3-right") and not shown
    return json.dumps({"defective": (bool(g["defective"]) and shown) or fa})


def test_gain_and_false_alarms_against_a_meta_covariate_by_hand(tmp_path, monkeypatch):
    monkeypatch.setattr("judgeaudit.commands.common.make_judge",
                        lambda spec, **kw: ScriptedJudge(_oracle_with_a_false_alarm, spec))
    r = run_world_cmd("tiny:x", ["oracle"], ["blind", "informed"], out=tmp_path / "o", votes=1, n_boot=50,
                      items=_items(), progress=False, covariates=["hint", "world_chars"])
    sp = {(x["quantity"], x["a"], x["covariate"]): x for x in r.result["spearman"]}
    g = sp[("gain", "blind", "hint")]
    # per-answer gains: +1 on the 4 wrong answers (hints 5–8) and on q3-right (hint 4: its blind false alarm
    # is gone when informed), 0 on q0–q2 right (hints 1–3). Ranks: x = the hints; y = 2 for the three 0s and
    # 6 for the five 1s. Centred: Σxy = −2.5·(−3.5 − 2.5 − 1.5) + 1.5·(0.5 + 1.5 + 2.5 − 0.5 + 3.5) = 30,
    # Σx² = 42, Σy² = 3·6.25 + 5·2.25 = 30 → ρ = 30 / √(42·30) = √(30/42).
    x = np.array(HINT, float) - 4.5
    y = np.array([2, 6, 2, 6, 2, 6, 6, 6], float) - 4.5
    assert (x @ y, x @ x, y @ y) == (30, 42, 30)
    assert g["rho"] == pytest.approx(np.sqrt(30 / 42)) and g["answers"] == 8 and g["exact"]
    assert g["n_perm"] == 40320
    # ρ depends only on where the three zeros land; the observed {hints 1, 2, 3} is the one placement of the
    # C(8,3) = 56 as extreme: one-sided p = 1/56 (the default: one-sided in the predicted direction, ρ > 0),
    # two-sided (2 × the smaller tail) 2/56
    assert g["alternative"] == "greater" and g["p"] == pytest.approx(1 / 56)
    # false alarms per clean answer in the blind arm: only q3-right (hint 4) has one; the informed arm none
    fa = sp[("false_alarms", "blind", "hint")]
    assert fa["answers"] == 4
    # x = hints of the clean answers (1, 2, 3, 4), y = (0, 0, 0, 1), ranks (2, 2, 2, 4)
    assert fa["rho"] == pytest.approx(np.corrcoef([1, 2, 3, 4], [2, 2, 2, 4])[0, 1])
    assert fa["p"] == pytest.approx(6 / 24)      # q3-right's false alarm on the top hint: 6 of 24 pairings
    assert sp[("false_alarms", "informed", "hint")]["rho"] is None   # constant (no false alarms): NaN → null
    # world_chars: the two answers of a question share a world, so the gain is tested with ties
    assert sp[("gain", "blind", "world_chars")]["answers"] == 8
    write_report(r, tmp_path / "o")
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Rank correlations over answers" in html and "gain blind → informed" in html


def _decisions(u: np.ndarray, p_informed: np.ndarray, rng) -> pd.DataFrame:
    """One labelled answer per row (half defective); blind right at chance, informed right w.p. p_informed."""
    n = len(u)
    gold = np.arange(n) % 2 == 0
    right_b = rng.random(n) < 0.5
    right_i = rng.random(n) < p_informed
    ids = np.array([f"a{i}" for i in range(n)])
    frames = [pd.DataFrame({"judge": "sim", "arm": arm, "item_id": ids, "group": ids, "unit": ids, "gold": gold,
                            "flagged": np.where(right, gold, ~gold), "complaints": np.where(right, gold, ~gold) * 1,
                            "parsed_votes": 1, "votes": 1, "ties": 0, "kinds": ""})
              for arm, right in (("blind", right_b), ("informed", right_i))]
    return pd.concat(frames, ignore_index=True)[list(decisions_frame([]).columns)]


def test_planted_gain_relation_is_found_and_null_rejects_at_nominal_rate():
    rng = np.random.default_rng(5)
    n = 120
    u = rng.random(n)
    cov = pd.DataFrame({"u": u}, index=pd.Index([f"a{i}" for i in range(n)], name="item_id"))
    # planted: the informed judge is right with probability 0.5 + 0.5u → per-answer gain rises with u
    def gain_p(p_informed, n_perm, alternative):
        g = answer_gains(_decisions(u, p_informed, rng), "sim", "blind", "informed")
        return spearman_test(cov["u"].reindex(g.index), g, n_perm=n_perm, seed=rng, alternative=alternative).p

    assert np.mean([gain_p(0.5 + 0.5 * u, 199, "greater") <= 0.05 for _ in range(30)]) >= 0.8
    # null: informed right with probability 0.8 whatever u → rejection near 0.05 (99% band for 200 tests)
    ps = np.array([gain_p(np.full(n, 0.8), 99, "two-sided") for _ in range(200)])
    assert 0.015 <= np.mean(ps <= 0.05) <= 0.10
    # and the result rows carry the same test
    rows = correlations(_decisions(u, 0.5 + 0.5 * u, rng), cov, ["sim"], ["blind", "informed"], n_perm=199, seed=1)
    assert [(r["quantity"], r["a"]) for r in rows] == [("gain", "blind"), ("false_alarms", "blind"),
                                                       ("false_alarms", "informed")]
    assert rows[0]["answers"] == n and rows[1]["answers"] == n // 2 and rows[0]["rho"] > 0


def test_per_answer_quantities_on_sentence_units():
    # one summary, 2 sentences (one defective): blind flags both, informed only the defective one
    rows = []
    for arm, flags in (("blind", (True, True)), ("informed", (False, True))):
        for j, (gold, fl) in enumerate(zip((False, True), flags, strict=True)):
            rows.append({"judge": "j", "arm": arm, "item_id": "s1", "group": "s1", "unit": f"s1.{j}", "gold": gold,
                         "flagged": fl, "complaints": int(fl), "parsed_votes": 1, "votes": 1, "ties": 0})
    dec = decisions_frame(rows)
    assert answer_gains(dec, "j", "blind", "informed")["s1"] == 0.5     # (2/2 right) − (1/2 right)
    assert answer_false_alarms(dec, "j", "blind").empty                 # s1 is not an error-free answer


def test_unknown_or_non_numeric_covariate_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no item has the covariate 'variety'") as e:
        run_world_cmd("tiny:x", ["reference:oracle"], ["blind", "informed"], out=tmp_path / "o", items=_items(),
                      progress=False, covariates=["variety"])
    assert e.value.field == "--correlate" and not (tmp_path / "o" / "calls.sqlite").exists()
    bad = [it.model_copy(update={"meta": {"hint": "high"}}) for it in tiny_items()]
    with pytest.raises(InputError, match="not a number") as e:
        covariate_table(bad, ["hint"])
    assert e.value.field == "--correlate"


def test_spearman_options_are_checked_before_any_call(tmp_path):
    for kw, field in (({"alternative": "up"}, "--alternative"), ({"permutations": -1}, "--permutations")):
        with pytest.raises(InputError) as e:
            run_world_cmd("tiny:x", ["reference:oracle"], ["blind", "informed"], out=tmp_path / "o", items=_items(),
                          progress=False, **kw)
        assert e.value.field == field and not (tmp_path / "o" / "calls.sqlite").exists()
