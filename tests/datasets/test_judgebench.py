"""JudgeBench adapter: pairs, swap convention, and the repository's own pair-level score."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import judgebench
from judgeaudit.errors import InputError
from judgeaudit.records import PAIRWISE_COLUMNS

from cap_data import BUNDLED, full


def _check_official(root, expected=None):
    pairs = judgebench.load_pairs(root)
    files = judgebench.output_files(root)
    assert files
    out = {}
    for jid, path in files.items():
        table = judgebench.load_judge_outputs(path, jid)
        recs = judgebench.raw_outputs(path)
        official = judgebench.official_score(recs)
        # the same rule from the two-order table (game 2 flipped back) equals the repository's rule
        assert judgebench.official_score_from_table(table, pairs) == pytest.approx(official)
        out[jid] = round(official, 2)
    if expected is not None:
        assert out == expected
    return out


def test_bundled_pairs_and_columns():
    p = judgebench.load_pairs(BUNDLED / "judgebench")
    assert list(p.columns[: len(PAIRWISE_COLUMNS)]) == list(PAIRWISE_COLUMNS)
    assert set(p["label"]) <= {"A", "B"}
    assert (p["condition_a"] == p["response_model"]).all()
    assert set(p["subset"]) == {"knowledge", "reasoning", "math", "coding"}
    assert (p.groupby(["response_model", "subset"]).size() == 5).all()


def test_second_game_is_flipped_back():
    root = BUNDLED / "judgebench"
    path = judgebench.output_files(root)["arena_hard/o1-mini-2024-09-12"]
    raw = {r["pair_id"]: r for r in judgebench.raw_outputs(path)}
    t = judgebench.load_judge_outputs(path).set_index("pair_id")
    flip = {"A>B": "B", "B>A": "A", "A=B": "tie"}
    for pid, r in raw.items():
        assert t.loc[pid, "choice_ba"] == flip[r["judgments"][1]["decision"]]
    assert t["family"].iloc[0] == "openai"


def test_official_rule_hand_case():
    recs = [
        {"label": "A>B", "judgments": [{"decision": "A>B"}, {"decision": "A=B"}]},  # +1 -> correct
        {"label": "A>B", "judgments": [{"decision": "A>B"}, {"decision": "A>B"}]},  # +1 -1 -> tie
        {"label": "B>A", "judgments": [{"decision": "B>A"}, {"decision": "A>B"}]},  # +2 -> correct
        {"label": "B>A", "judgments": [None, {"decision": "A>A"}]},                 # 0 -> not
    ]
    assert judgebench.official_score(recs) == 50.0


def test_bundled_official_rule_reproduced():
    _check_official(BUNDLED / "judgebench")


@pytest.mark.data
def test_full_official_rule_reproduced():
    # values of the repository's rule (utils/metrics.py) on the shipped outputs, pinned
    _check_official(full("judgebench"), {
        "arena_hard/claude-3-haiku-20240307": 32.22,
        "arena_hard/o1-mini-2024-09-12": 65.71,
        "reward_model/Ray2333_GRM-Gemma-2B-rewardmodel-ft": 59.43,
        "reward_model/Skywork_Skywork-Reward-Gemma-2-27B": 64.29,
        "reward_model/Skywork_Skywork-Reward-Llama-3.1-8B": 62.29,
        "reward_model/internlm_internlm2-20b-reward": 63.43,
        "reward_model/internlm_internlm2-7b-reward": 59.43,
    })
    p = judgebench.load_pairs(full("judgebench"))
    assert p["subset"].value_counts().to_dict() == {"knowledge": 308, "reasoning": 149, "math": 90,
                                                    "coding": 73}


def test_bad_label_names_file_and_line(tmp_path):
    (tmp_path / "data").mkdir()
    f = tmp_path / "data" / "dataset=judgebench,response_model=m.jsonl"
    row = {"pair_id": "x", "source": "livecodebench", "question": "q", "response_model": "m",
           "response_A": "a", "response_B": "b", "label": "A>B"}
    f.write_text(json.dumps(row) + "\n" + json.dumps({**row, "pair_id": "y", "label": "A=B"}) + "\n")
    with pytest.raises(InputError) as e:
        judgebench.load_pairs(tmp_path)
    assert e.value.line == 2 and e.value.field == "label"
