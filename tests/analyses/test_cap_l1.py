"""CAP within-family L1 (conditional-accuracy-profiles.txt Appendix J, Table 17): over the conditions of
each set's main table, C8 included where reported; families from real judge specs; the same model
under two prompt modes, unknown families and reference instruments are not within-family pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses.cap import _l1_table, cap_profile, l1_summary
from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell
from judgeaudit.judges import make_judge

SPECS = {
    "GPT-4o": "api:openai/gpt-4o", "GPT-4o-mini": "api:openai/gpt-4o-mini",
    "Claude Sonnet 4.5": "api:anthropic/claude-sonnet-4-5", "Claude Haiku 4.5": "api:anthropic/claude-haiku-4-5",
    "Gemini 2.5 Flash": "api:gemini/gemini-2.5-flash", "Gemini 2.5 Pro": "api:gemini/gemini-2.5-pro",
    "Llama-3.3-70B": "api:together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
}
# CAP Table 3 (judgerEva Hard-Empirical, C1..C8, %) and Table 5 (JudgeBench: C1≈, C2≈, C7)
TABLE3 = {
    "GPT-4o": [40.5, 53.1, 63.2, 64.1, 36.7, 20.4, 25.2, 66.7],
    "GPT-4o-mini": [12.5, 53.1, 48.7, 62.8, 15.9, 10.6, 14.8, 75.0],
    "Claude Sonnet 4.5": [92.4, 86.7, 89.5, 59.2, 84.7, 84.7, 86.0, 85.7],
    "Claude Haiku 4.5": [82.2, 65.6, 96.1, 70.5, 71.8, 69.0, 73.4, 91.7],
    "Gemini 2.5 Flash": [76.3, 78.1, 72.4, 56.4, 71.4, 66.4, 63.4, 44.4],
    "Gemini 2.5 Pro": [73.2, 78.1, 90.8, 61.5, 77.5, 70.6, 62.3, 83.3],
    "Llama-3.3-70B": [57.2, 75.0, 73.7, 66.7, 73.9, 32.2, 34.7, 46.2],
}
TABLE5 = {
    "GPT-4o": [60.7, 62.8, 51.1], "GPT-4o-mini": [60.7, 52.0, 35.7], "Claude Sonnet 4.5": [78.8, 74.5, 68.3],
    "Claude Haiku 4.5": [73.1, 70.4, 66.4], "Gemini 2.5 Flash": [77.6, 92.0, 81.6],
    "Gemini 2.5 Pro": [84.8, 93.5, 86.8], "Llama-3.3-70B": [61.5, 54.6, 36.8],
}


def _cells() -> pd.DataFrame:
    rows = []
    for j, vals in TABLE3.items():
        for k, v in enumerate(vals):
            rows.append({"set": "jE", "judge_id": j, "condition": f"C{k + 1}", "metric": "value", "value": v,
                         "coverage": "direct"})
    for j, (c1, c2, c7) in TABLE5.items():
        for code, v, cov in (("C1", c1, "approx"), ("C2", c2, "approx"), ("C7", c7, "direct"),
                             # augmented C5/C6 and an unreported C8 are not in JudgeBench's main table
                             ("C5", 50.0 + len(j), "augmented"), ("C6", 10.0 * len(j) % 97, "augmented"),
                             ("C8", np.nan, "direct")):
            rows.append({"set": "JB", "judge_id": j, "condition": code, "metric": "value", "value": v,
                         "coverage": cov})
    return pd.DataFrame(rows)


def test_table17_within_and_cross_family_l1_from_the_main_tables():
    families = {j: make_judge(s).spec.family for j, s in SPECS.items()}
    models = {j: make_judge(s).spec.model for j, s in SPECS.items()}
    l1 = _l1_table(_cells(), families, models)
    summ = l1_summary(l1).set_index(["set", "pair"])["l1"]
    # OpenAI on judgerEva: 84.8 over C1-C7 plus 8.3 for C8 = 93.1 (Table 17)
    assert summ[("jE", "openai (WF)")] == pytest.approx(93.1)
    assert summ[("jE", "anthropic (WF)")] == pytest.approx(96.4)
    assert summ[("jE", "cross-family avg.")] == pytest.approx(208.1, abs=0.05)
    assert summ[("JB", "openai (WF)")] == pytest.approx(26.2)
    assert summ[("JB", "anthropic (WF)")] == pytest.approx(11.7)
    assert summ[("JB", "cross-family avg.")] == pytest.approx(63.3, abs=0.05)
    n = l1_summary(l1).set_index(["set", "pair"])["n_pairs"]
    assert n[("jE", "cross-family avg.")] == 18  # 21 pairs of 7 judges minus the 3 within-family ones
    row = l1[(l1["set"] == "jE") & (l1["judge_a"] == "GPT-4o") & (l1["judge_b"] == "GPT-4o-mini")].iloc[0]
    assert row["conditions"] == "C1,C2,C3,C4,C5,C6,C7,C8"


COV = {"C1": CoverageCell("direct", "all items; PA"), "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
       "C5": UNAVAILABLE, "C6": UNAVAILABLE, "C7": CoverageCell("direct", "A/B and B/A; BC"),
       "C8": CoverageCell("direct", "evaluator")}


def _pairs(n: int) -> pd.DataFrame:
    return pd.DataFrame({
        "pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "a", "response_b": "b",
        "label": "A", "group": None, "source_set": "jE", "subset": "s", "condition_a": None,
        "condition_b": None, "meta": [{}] * n,
    })


def _table(spec: str, ab: str, ba: str, judge_id: str | None = None) -> pd.DataFrame:
    j = make_judge(spec)  # family as the CAP command records it for a live judge
    n = len(ab)
    return pd.DataFrame({
        "pair_id": [f"p{i}" for i in range(n)], "judge_id": judge_id or j.id, "family": j.spec.family,
        "choice_ab": list(ab), "choice_ba": list(ba), "rationale_ab": "because", "rationale_ba": "because",
        "failure_ab": None, "failure_ba": None, "model": j.spec.model,
    })


def test_cap_profile_l1_counts_c8_and_refuses_unknown_and_reference_pairs():
    pairs = _pairs(8)
    tables = {
        # C1 PA = (8 + 6)/16, C7 BC = 6/8, C8 = 6/8 (supported on items 0-5 of the 8 correct A/B verdicts)
        "api:openai/gpt-4o": _table("api:openai/gpt-4o", "AAAAAAAA", "AAAAAABB"),
        # C1 PA = (6 + 3)/16, C7 BC = 3/8, C8 = 3/6 (items 0-2 of the 6 correct A/B verdicts)
        "api:openai/gpt-4o-mini": _table("api:openai/gpt-4o-mini", "AAAAAABB", "AAABBBBB"),
        # two models the table does not know (an OpenAI-compatible server): no family
        "api:openai/acme-judge-1": _table("api:openai/acme-judge-1", "AAAAAAAA", "AAAAAAAA"),
        "api:openai/acme-judge-2": _table("api:openai/acme-judge-2", "BBBBBBBB", "AAAAAAAA"),
        # C1 PA = (4 + 8)/16, C7 BC = 4/8, no C8 labels
        "api:anthropic/claude-3-5-haiku-20241022": _table("api:anthropic/claude-3-5-haiku-20241022", "AAAABBBB",
                                                          "AAAAAAAA"),
        "reference:constant": _table("reference:constant", "AAAAAAAA", "BBBBBBBB"),
        "reference:random": _table("reference:random", "ABABABAB", "BABABABA"),
    }
    labels = pd.DataFrame(
        [{"pair_id": f"p{i}", "judge_id": "api:openai/gpt-4o", "supports": i < 6} for i in range(8)]
        + [{"pair_id": f"p{i}", "judge_id": "api:openai/gpt-4o-mini", "supports": i < 3} for i in range(6)])
    r = cap_profile(pairs, tables, {"jE": COV}, rationale_labels=labels, n_boot=20, seed=0)
    assert r.value("jE", "api:openai/gpt-4o", "C8") == pytest.approx(0.75)
    assert r.value("jE", "api:openai/gpt-4o-mini", "C8") == pytest.approx(0.5)
    l1 = r.l1.set_index(["judge_a", "judge_b"])
    # |14/16 - 9/16| + |6/8 - 3/8| over C1, C7 = 0.6875, plus |6/8 - 3/6| = 0.25 for C8
    assert l1.loc[("api:openai/gpt-4o", "api:openai/gpt-4o-mini"), "l1"] == pytest.approx(0.6875 + 0.25)
    summ = l1_summary(r.l1).set_index("pair")
    assert list(summ.index) == ["openai (WF)", "cross-family avg."]
    assert summ.loc["openai (WF)", "l1"] == pytest.approx(0.9375) and summ.loc["openai (WF)", "n_pairs"] == 1
    # cross-family: Claude vs gpt-4o |.875-.75| + |.75-.5|, vs gpt-4o-mini |.5625-.75| + |.375-.5| (no C8)
    assert summ.loc["cross-family avg.", "l1"] == pytest.approx((0.375 + 0.3125) / 2)
    assert summ.loc["cross-family avg.", "n_pairs"] == 2
    # the two unknown models are no within-family pair, nor is any pair with them cross-family
    unk = l1.loc[("api:openai/acme-judge-1", "api:openai/acme-judge-2")]
    assert not unk["same_family"] and unk["relation"] == "family unknown"
    assert set(r.l1.loc[r.l1[["judge_a", "judge_b"]].isin(["api:openai/acme-judge-1"]).any(axis=1),
                        "relation"]) == {"family unknown"}
    # reference instruments are never in the L1 table
    assert not r.l1[["judge_a", "judge_b"]].isin(["reference:constant", "reference:random"]).any().any()
    # the report gives Table 17's points: 93.75 within OpenAI, 34.4 cross-family
    from judgeaudit.report.cap import cap_sections

    body = next(s.body for s in cap_sections(r) if s.title == "CAP cross-benchmark tables")
    assert "93.8" in body and "34.4" in body


def test_one_model_under_two_prompt_modes_is_not_a_within_family_pair(data_dir):
    from judgeaudit.datasets import llmbar, published

    root = data_dir / "llmbar"
    wanted = ["GPT-4/Vanilla", "GPT-4/CoT", "ChatGPT/Vanilla", "PaLM2/Vanilla"]
    tables = {j: t for j, t in published.published_judges(root).items() if j in wanted}
    assert sorted(tables) == sorted(wanted)
    pairs = llmbar.load_pairs(root)
    pairs = pairs[pairs["source_set"] == "llmbar"]
    r = cap_profile(pairs, tables, {"llmbar": llmbar.COVERAGE["llmbar"]}, n_boot=10, seed=0)
    l1 = r.l1.set_index(["judge_a", "judge_b"])
    key = next(k for k in (("GPT-4/Vanilla", "GPT-4/CoT"), ("GPT-4/CoT", "GPT-4/Vanilla")) if k in l1.index)
    assert l1.loc[key, "relation"] == "same model" and not l1.loc[key, "same_family"]
    wf = r.l1[r.l1["relation"] == "within family"]
    # ChatGPT vs GPT-4 (each mode) are the within-family pairs; PaLM2 pairs are cross-family
    assert sorted(map(sorted, zip(wf["judge_a"], wf["judge_b"]))) == [["ChatGPT/Vanilla", "GPT-4/CoT"],
                                                                       ["ChatGPT/Vanilla", "GPT-4/Vanilla"]]
    summ = l1_summary(r.l1).set_index("pair")
    assert summ.loc["openai (WF)", "n_pairs"] == 2
    assert summ.loc["openai (WF)", "l1"] == pytest.approx(wf["l1"].mean())
    assert summ.loc["cross-family avg.", "n_pairs"] == 3
