"""LLMBar adapter: published statistics.json numbers reproduced from result.json files."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgeaudit.analyses.cap import cap_profile
from judgeaudit.datasets import llmbar

from cap_data import BUNDLED, full


def _raw_counts(path, labels):
    """An independent loop over the raw result file (LLMBar's rule: results[-1])."""
    cf = ct = cb = eq = 0
    for it in json.loads(path.read_text()):
        lab = str(it["label"])
        fin = it["results"][-1]
        wf, wt = fin["swap = False"]["winner"], fin["swap = True"]["winner"]
        cf += wf == lab
        ct += wt == lab
        cb += wf == lab and wt == lab
        eq += wf == wt
    return cf, ct, cb, eq


def test_bundled_tables_match_raw_files():
    root = BUNDLED / "llmbar"
    pairs = llmbar.load_pairs(root)
    assert set(pairs["source_set"]) == {"llmbar", "llmbar_mtbench"}
    files = llmbar.result_files(root)
    assert len(files) >= 40
    for (subset, jid), f in files.items():
        t = llmbar.load_result(f, subset, jid)
        st = llmbar.llmbar_statistics(t, pairs)
        cf, ct, cb, eq = _raw_counts(f, None)
        assert (st["correct_False"][0], st["correct_True"][0], st["correct_both"][0], st["equal"][0]) \
            == (cf, ct, cb, eq), (subset, jid)


def test_labels_and_human_labels():
    p = llmbar.load_pairs(BUNDLED / "llmbar")
    mt = p[p["source_set"] == "llmbar_mtbench"]
    assert (mt["label_source"] == "human_majority").all()
    assert all(h == [lab] for h, lab in zip(mt["human_labels"], mt["label"]))
    assert p[p["source_set"] == "llmbar"]["human_labels"].isna().all()


@pytest.mark.data
def test_full_statistics_json_reproduced():
    """Per-order accuracy, both-correct accuracy and positional agreement from every shipped
    result.json equal the published numbers in the same folder's statistics.json; the CAP
    estimator (failures counted wrong, LLMBar's convention) gives the same per-order and
    both-correct accuracies."""
    root = full("llmbar")
    pairs = llmbar.load_pairs(root)
    files = llmbar.result_files(root)
    assert len(files) == 84
    cov = llmbar.COVERAGE
    checked = 0
    for (subset, jid), f in files.items():
        published = llmbar.published_statistics(f.parent / "statistics.json")
        t = llmbar.load_result(f, subset, jid)
        sub = pairs[pairs["subset"] == subset]
        assert llmbar.llmbar_statistics(t, sub) == published, (subset, jid)
        res = cap_profile(sub.assign(source_set="s", subset=None), {jid: t}, {"s": cov["llmbar_mtbench"]},
                          n_boot=2, failures="wrong")
        n = published["correct_False"][1]
        assert res.value("s", jid, "C7", "acc_AB") == pytest.approx(published["correct_False"][0] / n)
        assert res.value("s", jid, "C7", "acc_BA") == pytest.approx(published["correct_True"][0] / n)
        assert res.value("s", jid, "C7", "strict") == pytest.approx(published["correct_both"][0] / n)
        both_null = int((t["choice_ab"].isna() & t["choice_ba"].isna()).sum())
        assert res.value("s", jid, "C7", "consistency") == pytest.approx(
            (published["equal"][0] - both_null) / n)
        checked += 1
    assert checked == 84
