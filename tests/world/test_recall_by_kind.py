"""Recall by error category (FRANK's RelE, EntE, ...; any unit kind), scored the same way for every
judge: a hand-built FRANK-shaped folder through the real adapter with a scripted judge whose
per-category recall is computed by hand, and the real FRANK file with reference:oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from world_fixtures import ScriptedJudge

from judgeaudit.commands.world import run_world_cmd, write_report
from judgeaudit.datasets.world_corpora import FRANK_KINDS

CLEAN = {k: 1.0 for k in FRANK_KINDS}


def _frank_folder(root: Path) -> None:
    """One article, five systems. Sentence labels are determined (Factuality 0 or 1, or one sentence):
    s1: two sentences, both defective; CircE in both (share 0), EntE in one (share 0.5: not placeable);
    s2: one sentence, RelE and EntE; s3: clean; s4: one sentence, OutE; s5: one sentence, defective
    with no category in every sentence (unplaced)."""
    art = {"hash": "a1", "article": "The council met on Monday. It approved the budget. The mayor spoke."}
    summaries = {"s1": ["The council met on Friday.", "It rejected the budget."],
                 "s2": ["The mayor approved the budget."], "s3": ["The council met on Monday."],
                 "s4": ["The council met in Rome."], "s5": ["Council budget the met."]}
    for s, lines in summaries.items():
        art[s], art[f"{s}_lines"] = " ".join(lines), lines
    (root / "articles.jsonl").write_text(json.dumps(art) + "\n")
    ann = [{"hash": "a1", "model_name": "s1", "Factuality": 0.0, **CLEAN, "CircE": 0.0, "EntE": 0.5},
           {"hash": "a1", "model_name": "s2", "Factuality": 0.0, **CLEAN, "RelE": 0.0, "EntE": 0.0},
           {"hash": "a1", "model_name": "s3", "Factuality": 1.0, **CLEAN},
           {"hash": "a1", "model_name": "s4", "Factuality": 0.0, **CLEAN, "OutE": 0.0},
           {"hash": "a1", "model_name": "s5", "Factuality": 0.0, **CLEAN}]
    (root / "human_annotations.json").write_text(json.dumps(ann))


# informed: the judge flags s1's first sentence, s2, s5 and s3 (a false alarm); blind: nothing
FLAGS = {"frank/a1/s1": [True, False], "frank/a1/s2": [True], "frank/a1/s3": [True], "frank/a1/s4": [False],
         "frank/a1/s5": [True]}


def _reply(request) -> str:
    labels = FLAGS[request.meta["item_id"]] if request.meta["world_shown"] else [False] * len(request.units)
    return json.dumps({"labels": labels})


def test_recall_by_category_on_a_hand_built_frank_folder(tmp_path, monkeypatch):
    _frank_folder(tmp_path)
    monkeypatch.setattr("judgeaudit.commands.common.make_judge", lambda spec, **kw: ScriptedJudge(_reply, spec))
    r = run_world_cmd(f"frank:{tmp_path}", ["scripted"], ["blind", "informed"], out=tmp_path / "o", votes=1,
                      form="sentences", n_boot=200, progress=False)
    inf = r.result["judges"]["scripted"]["arms"]["informed"]
    # defective sentences: s1.0, s1.1 (CircE), s2.0 (RelE, EntE), s4.0 (OutE), s5.0 (no category)
    assert (inf["n_defective"], inf["recall"]) == (5, pytest.approx(3 / 5))
    by = inf["recall_by_kind"]
    assert list(by) == ["CircE", "EntE", "OutE", "RelE"]          # only categories with placed sentences
    assert {k: (v["n"], v["found"], v["recall"]) for k, v in by.items()} == {
        "CircE": (2, 1, 0.5), "EntE": (1, 1, 1.0), "OutE": (1, 0, 0.0), "RelE": (1, 1, 1.0)}
    assert inf["kind_unplaced"] == {"n": 1, "found": 1}
    lo, hi = by["CircE"]["wilson"]
    assert lo == pytest.approx(0.0945, abs=1e-4) and hi == pytest.approx(0.9055, abs=1e-4)   # Wilson 1 of 2
    blind = r.result["judges"]["scripted"]["arms"]["blind"]["recall_by_kind"]
    assert {k: v["recall"] for k, v in blind.items()} == {k: 0.0 for k in by}
    write_report(r, tmp_path / "o")
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Recall by category" in html and "CircE" in html and "0.500 (1/2)" in html
    md = (tmp_path / "o" / "report.md").read_text()
    assert "| judge | arm | CircE | EntE | OutE | RelE | no category |" in md
    assert "| scripted | informed | 0.500 (1/2) | 1.000 (1/1) | 0.000 (0/1) | 1.000 (1/1) | 1/1 found |" in md
    # 3 of 5 defective sentences found; the clean sentence (s3) flagged: specificity 0 of 1
    assert "| scripted | informed | 6 (5/1) | 0.300 [" in md and "| 0.600 [" in md


@pytest.mark.data
def test_oracle_recall_by_category_on_the_real_frank_file(tmp_path, data_dir):
    r = run_world_cmd(f"frank:{data_dir / 'frank'}", ["reference:oracle"], ["blind", "informed"], out=tmp_path, votes=1,
                      form="sentences", n_boot=0, progress=False)
    arms = r.result["judges"]["reference:oracle"]["arms"]
    inf, bl = arms["informed"]["recall_by_kind"], arms["blind"]["recall_by_kind"]
    assert set(inf) == set(FRANK_KINDS) == set(bl)
    # the placed sentences of each category (summaries with determined sentence labels)
    assert {k: v["n"] for k, v in inf.items()} == {"OutE": 551, "EntE": 380, "RelE": 253, "CircE": 250,
                                                   "GramE": 220, "CorefE": 182, "LinkE": 171, "Other": 162}
    assert all(v["recall"] == 1.0 for v in inf.values()) and all(v["recall"] == 0.0 for v in bl.values())
    assert arms["informed"]["kind_unplaced"] == {"n": 127, "found": 127}
