"""The units a bar's floor counts and the interval a difference is read on, from the runs themselves.

A world result is analysed from planted label verdicts on the ``--full`` demo's world design (16 HaluEval
questions, each a right and a hallucinated answer, one source item: 32 answers, 16 defective, 16 clean) and
built into a card; a validity run is replayed on 4 base items (28 construct edits, 20 control edits). The gate
must count the units each interval resamples — source items holding a defective answer for recall, a clean
one for specificity, base items for the validity profile — and read a difference of two world arms on the
paired interval the run writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgeaudit.commands.gate import _card_from_runs
from judgeaudit.gate import evaluate, load_policy
from judgeaudit.records import WorldItem
from judgeaudit.world.requests import SEP
from judgeaudit.world.run import analyse


def halueval_items(questions: int = 16) -> list[WorldItem]:
    """One right and one hallucinated answer per question, grouped by question."""
    items = []
    for q in range(questions):
        for bad in (False, True):
            items.append(WorldItem(item_id=f"q{q}-{'h' if bad else 'r'}", task="qa", output=f"answer {q} {bad}",
                                   world=f"knowledge {q}", question=f"question {q}", defective=bad, group=f"q{q}"))
    return items


def label_verdicts(items: list[WorldItem], flags: dict[str, set[str]], judge: str = "j") -> pd.DataFrame:
    """One parsed label vote per (arm, item): flagged exactly when the item id is in ``flags[arm]``."""
    rows = [{"judge_id": judge, "request_id": f"{it.item_id}{SEP}{arm}", "epoch": 0, "parse_ok": True,
             "error": None, "label": it.item_id in ids, "unit_labels": None, "defect_ids": None, "score": None,
             "defects": None} for arm, ids in flags.items() for it in items]
    return pd.DataFrame(rows)


def world_card(tmp_path: Path, flags: dict[str, set[str]], questions: int = 16) -> dict:
    items = halueval_items(questions)
    an = analyse(items, label_verdicts(items, flags), form="label", arms=list(flags), n_boot=2000, seed=0,
                 n_perm=99)
    run = tmp_path / "world"
    run.mkdir()
    (run / "result.json").write_text(json.dumps(an.result))
    return _card_from_runs([run], "j")


def gate(tmp_path: Path, text: str, card: dict):
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    return evaluate(load_policy(p), card)


def _found(q: range) -> set[str]:
    return {f"q{i}-h" for i in q}


def test_world_rates_count_the_source_items_of_their_own_denominator(tmp_path):
    """Informed finds every hallucination and flags no right answer: recall and specificity are 1 [1, 1], but each
    is read on 16 source items, not on the 32 answers; ``min_units: 30`` is BLIND, 16 PASS."""
    card = world_card(tmp_path, {"blind": set(), "informed": _found(range(16))})
    arm = card.sections.world.arms["informed"]
    assert (arm["recall"].n, arm["specificity"].n, arm["recall"].unit) == (16, 16, "group")
    r = gate(tmp_path, "min_units: 30\nbars:\n  - world.informed.recall >= 0.5\n"
                       "  - world.informed.specificity >= 0.5\n", card)
    assert [b.outcome for b in r.bars] == ["BLIND", "BLIND"], r.to_dict()
    assert r.bars[0].checks[0].why == "16 source items resampled, fewer than the 30 the bar needs"
    r = gate(tmp_path, "min_units: 16\nbars:\n  - world.informed.recall >= 0.5\n", card)
    assert r.outcome == "PASS" and "(16 source items resampled)" in r.bars[0].checks[0].why


def test_world_difference_is_read_on_the_runs_paired_interval(tmp_path):
    """Blind finds 4 of 16 hallucinations, informed the same 4 and 6 more (no right answer flagged): gain 0.375,
    paired interval ≈ [0.19, 0.62] clears 0.10, where the unpaired bound [lo_I − hi_B, hi_I − lo_B] reaches
    below 0 (BLIND)."""
    card = world_card(tmp_path, {"blind": _found(range(4)), "informed": _found(range(10))})
    w = card.sections.world
    row = next(p for p in w.paired if p.metric == "recall" and p.b == "informed")
    assert row.gain == pytest.approx(0.375) and row.n == 16
    inf, bl = w.arms["informed"]["recall"].ci, w.arms["blind"]["recall"].ci
    assert inf[0] - bl[1] < 0.10                                        # the unpaired bound cannot decide
    r = gate(tmp_path, "bars:\n  - world.informed.recall - world.blind.recall >= 0.10\n"
                       "  - world.blind.recall - world.informed.recall <= -0.10\n", card)
    assert [b.outcome for b in r.bars] == ["PASS", "PASS"], r.to_dict()
    (c,) = r.bars[0].checks
    assert c.ci == pytest.approx(tuple(row.ci)) and c.n == 16 and "paired interval" in c.why
    (c2,) = r.bars[1].checks
    assert c2.value == pytest.approx(-0.375) and c2.ci == pytest.approx((-row.ci[1], -row.ci[0]))


def test_world_difference_at_zero_gain_can_fail(tmp_path):
    """The two arms agree on every answer: the paired gain is 0 [0, 0], wholly below 0.10 (FAIL); the unpaired
    bound straddles 0.10 whatever the arms, so a judge that gains nothing could never fail it."""
    same = _found(range(8))
    card = world_card(tmp_path, {"blind": same, "informed": same})
    r = gate(tmp_path, "bars:\n  - world.informed.recall - world.blind.recall >= 0.10\n", card)
    assert r.outcome == "FAIL", r.to_dict()
    assert r.bars[0].checks[0].ci == (0.0, 0.0)


def test_world_difference_without_a_paired_row_uses_the_unpaired_bound(tmp_path):
    """Paired rows are written against the first arm only: placebo − informed falls back to the unpaired bound,
    and says so."""
    card = world_card(tmp_path, {"blind": set(), "informed": _found(range(16)), "placebo": set()})
    r = gate(tmp_path, "bars:\n  - world.informed.recall - world.placebo.recall >= 0.10\n", card)
    (c,) = r.bars[0].checks
    w = card.sections.world.arms
    assert c.ci == pytest.approx((w["informed"]["recall"].ci[0] - w["placebo"]["recall"].ci[1],
                                  w["informed"]["recall"].ci[1] - w["placebo"]["recall"].ci[0]))
    assert "unpaired bound" in c.why and c.n == 16


def test_validity_floors_count_base_items_not_edits(replayed_validity_run, tmp_path):
    """4 base items carry 28 construct and 20 control edits: the interval resamples the 4 base items, so a
    floor of 20 is BLIND for every validity quantity."""
    card = _card_from_runs([replayed_validity_run], "perfect")
    v = card.sections.validity
    assert (v.bootstrap.unit, v.bootstrap.n, v.n.construct_edits) == ("base_id", 4, 28)
    r = gate(tmp_path, "min_units: 20\nbars:\n  - R >= 0.30 at S >= 0.90\n  - S >= 0.5\n", card)
    assert [b.outcome for b in r.bars] == ["BLIND", "BLIND"], r.to_dict()
    assert r.bars[0].checks[0].why == "4 base items resampled, fewer than the 20 the bar needs"
    r = gate(tmp_path, "min_units: 4\nbars:\n  - R >= 0.30 at S >= 0.90\n", card)
    assert r.outcome == "PASS" and "(4 base items resampled)" in r.bars[0].checks[0].why
