"""The audits of a migration beyond S and R: each judge's CAP conditions and world gains, new − old, paired over
the units both runs share, with a two-sided TOST within the audit margin (``card.migrate_audits``).

Planted truth. CAP: 600 pairs of one set, each pair scored once in each of three conditions; the old judge is
right with probability 0.85 in every condition. A new judge that loses one condition (0.55 there, 0.85
elsewhere) is 0.30 below the old on it, three times the 0.10 margin: that cell is decisive and the migration NOT
COMPARABLE naming it; the same judge run twice (independent draws at the same rates) keeps every cell within the
margin. World: 500 clusters (a question with a hallucinated and a right answer); the old judge's recall is 0.50
blind and 0.85 informed (a gain of 0.35), its specificity 0.90 in both arms. A new judge with no gain (recall 0.50
in both arms) loses it; the same judge twice keeps it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses.migrate import migrate
from judgeaudit.analyses.migrate import simulate as sm
from judgeaudit.card.migrate_audits import cap_audits, world_audits
from judgeaudit.card.paired import cap_units, world_units

NINE = {"kind": "integer", "min": 1, "max": 9, "higher": "better"}
CONDS = ("direct", "indirect", "position")


def _cap(rng, judge: str, p: dict[str, float], n: int = 600) -> pd.DataFrame:
    rows = []
    for i in range(n):
        for c in CONDS:
            rows.append({"judge_id": judge, "set": "bench", "metric": "value", "unit": f"pair{i}", "condition": c,
                         "num": float(rng.random() < p[c]), "den": 1.0})
        rows.append({"judge_id": judge, "set": "bench", "metric": "value", "unit": f"pair{i}",
                     "condition": "overall", "num": sum(r["num"] for r in rows[-3:]), "den": 3.0})
    return pd.DataFrame(rows)


def _world(rng, judge: str, recall: dict[str, float], spec: float = 0.90, n: int = 500) -> pd.DataFrame:
    rows = []
    for g in range(n):
        for arm in ("blind", "informed"):
            rows.append({"judge": judge, "arm": arm, "group": f"q{g}", "gold": True,
                         "flagged": bool(rng.random() < recall[arm]), "complaints": 0.0})
            clean_flag = bool(rng.random() >= spec)
            rows.append({"judge": judge, "arm": arm, "group": f"q{g}", "gold": False, "flagged": clean_flag,
                         "complaints": float(clean_flag)})
    return pd.DataFrame(rows)


def _decide(audits):
    return migrate(sm.same_judge(2000, 1), old_scale=NINE, new_scale=NINE, n_boot=200, audits=audits)


def test_a_new_judge_that_loses_one_cap_condition_is_not_comparable():
    rng = np.random.default_rng(3)
    old = cap_units(_cap(rng, "old", dict.fromkeys(CONDS, 0.85)), "old", "bench")
    new = cap_units(_cap(rng, "new", {"direct": 0.85, "indirect": 0.55, "position": 0.85}), "new", "bench")
    qs = {q.name: q for q in cap_audits(old, new, margin=0.10, n_boot=400, seed=1)}
    lost = qs["cap.bench.indirect"]
    assert lost.test == "two_sided" and lost.decisive and lost.status == "not_equivalent"
    assert lost.estimate == pytest.approx(-0.30, abs=0.06) and lost.ci[1] < -0.10
    assert lost.definition.startswith("paired over 600 shared pairs")
    assert {qs[f"cap.bench.{c}"].status for c in ("direct", "position")} == {"equivalent"}
    r = _decide(list(qs.values()))
    assert r.verdict == "NOT_COMPARABLE"
    assert "cap.bench.indirect (worse by" in r.reasons[-1] and "cap.bench.direct" not in r.reasons[-1]


def test_the_same_judge_twice_keeps_its_cap_conditions():
    rng = np.random.default_rng(4)
    rates = dict.fromkeys(CONDS, 0.85)
    a = cap_units(_cap(rng, "j", rates), "j", "bench")
    b = cap_units(_cap(rng, "j", rates), "j", "bench")             # a second, independent run of the same judge
    qs = cap_audits(a, b, margin=0.10, n_boot=400, seed=1)
    assert {q.name for q in qs} == {f"cap.bench.{c}" for c in (*CONDS, "overall")}
    assert all(q.status == "equivalent" and q.tost_interval[0] > -0.10 and q.tost_interval[1] < 0.10 for q in qs)
    same = cap_audits(a, a, margin=0.10, n_boot=200, seed=1)        # the very same verdicts: no difference at all
    assert all(q.estimate == 0.0 and q.ci == [0.0, 0.0] for q in same)
    assert _decide(qs).verdict == "EQUIVALENT"


def test_a_new_judge_that_loses_the_world_gain_is_not_comparable():
    rng = np.random.default_rng(5)
    old = world_units(_world(rng, "old", {"blind": 0.50, "informed": 0.85}), "old")
    new = world_units(_world(rng, "new", {"blind": 0.50, "informed": 0.50}), "new")
    qs = {q.name: q for q in world_audits(old, new, ["blind", "informed"], margin=0.10, n_boot=400, seed=1)}
    assert set(qs) == {"world.gain.informed.recall", "world.gain.informed.specificity"}
    gain = qs["world.gain.informed.recall"]
    assert gain.estimate == pytest.approx(-0.35, abs=0.08) and gain.decisive
    assert gain.definition.startswith("paired over 500 shared clusters")
    assert qs["world.gain.informed.specificity"].status == "equivalent"
    r = _decide(list(qs.values()))
    assert r.verdict == "NOT_COMPARABLE" and "world.gain.informed.recall (worse by" in r.reasons[-1]


def test_the_same_judge_twice_keeps_its_world_gain():
    rng = np.random.default_rng(6)
    recall = {"blind": 0.50, "informed": 0.85}
    a = world_units(_world(rng, "j", recall), "j")
    b = world_units(_world(rng, "j", recall), "j")
    qs = world_audits(a, b, ["blind", "informed"], margin=0.10, n_boot=400, seed=1)
    assert len(qs) == 2 and all(q.status == "equivalent" for q in qs)
    assert _decide(qs).verdict == "EQUIVALENT"


def test_a_cap_condition_far_above_the_old_is_beyond_the_margin_too():
    """A two-sided audit: a new judge far better on one condition grades something else there too."""
    rng = np.random.default_rng(7)
    old = cap_units(_cap(rng, "old", {"direct": 0.85, "indirect": 0.50, "position": 0.85}), "old", "bench")
    new = cap_units(_cap(rng, "new", dict.fromkeys(CONDS, 0.85)), "new", "bench")
    q = next(q for q in cap_audits(old, new, margin=0.10, n_boot=400, seed=1) if q.name == "cap.bench.indirect")
    assert q.decisive and q.estimate > 0.2
    r = _decide([q])
    assert r.verdict == "NOT_COMPARABLE" and "cap.bench.indirect (higher by" in r.reasons[-1]


def test_few_shared_units_give_descriptive_audits():
    rng = np.random.default_rng(8)
    old = cap_units(_cap(rng, "old", dict.fromkeys(CONDS, 0.85), n=6), "old", "bench")
    new = cap_units(_cap(rng, "new", dict.fromkeys(CONDS, 0.85), n=6), "new", "bench")
    qs = cap_audits(old, new, margin=0.10, n_boot=200, seed=1)
    assert all(q.test == "descriptive" and "fewer than 10" in q.definition for q in qs)
