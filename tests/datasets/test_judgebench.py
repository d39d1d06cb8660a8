"""JudgeBench adapter: pairs, swap convention, and the repository's own pair-level score, on the package's
JudgeBench-format fixture (judgeaudit's own pairs and simulated judges) and on the user's copy of JudgeBench
(JUDGEAUDIT_DATA_DIR) for the published numbers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgeaudit.datasets import judgebench, published
from judgeaudit.errors import InputError
from judgeaudit.records import PAIRWISE_COLUMNS

from cap_data import FIXTURE, full


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


def test_fixture_pairs_and_columns():
    p = judgebench.load_pairs(FIXTURE)
    assert list(p.columns[: len(PAIRWISE_COLUMNS)]) == list(PAIRWISE_COLUMNS)
    assert set(p["label"]) <= {"A", "B"}
    assert (p["condition_a"] == p["response_model"]).all()
    assert set(p["subset"]) == {"knowledge", "reasoning", "math", "coding"}
    assert (p.groupby(["response_model", "subset"]).size() == 5).all()


def _flipped_back(path):
    raw = {r["pair_id"]: r for r in judgebench.raw_outputs(path)}
    t = judgebench.load_judge_outputs(path).set_index("pair_id")
    flip = {"A>B": "B", "B>A": "A", "A=B": "tie"}
    for pid, r in raw.items():
        g = r["judgments"][1]
        if g is None or g["decision"] not in flip:
            assert pd.isna(t.loc[pid, "choice_ba"])
        else:
            assert t.loc[pid, "choice_ba"] == flip[g["decision"]]
    return t


def test_second_game_is_flipped_back():
    t = _flipped_back(judgebench.output_files(FIXTURE)["arena_hard/fixture-judge-positional"])
    # the fixture's failed call (null game) and unreadable verdict ("A>A") are failures, not dropped
    assert sorted(t["failure_ba"].dropna()) == ["api", "parse"] and len(t) == 20
    assert t["family"].isna().all()                # fictional model names: no vendor family


@pytest.mark.data
def test_full_second_game_is_flipped_back():
    t = _flipped_back(judgebench.output_files(full("judgebench"))["arena_hard/o1-mini-2024-09-12"])
    assert t["family"].iloc[0] == "openai"


def test_official_rule_hand_case():
    recs = [
        {"label": "A>B", "judgments": [{"decision": "A>B"}, {"decision": "A=B"}]},  # +1 -> correct
        {"label": "A>B", "judgments": [{"decision": "A>B"}, {"decision": "A>B"}]},  # +1 -1 -> tie
        {"label": "B>A", "judgments": [{"decision": "B>A"}, {"decision": "A>B"}]},  # +2 -> correct
        {"label": "B>A", "judgments": [None, {"decision": "A>A"}]},                 # 0 -> not
    ]
    assert judgebench.official_score(recs) == 50.0


def test_fixture_official_rule_reproduced():
    scores = _check_official(FIXTURE)
    assert set(scores) == {"arena_hard/fixture-judge-positional", "arena_hard/fixture-judge-careful",
                           "reward_model/fixture-org_fixture-rm-correctness",
                           "reward_model/fixture-org_fixture-rm-length", "reward_model/fixture-org_fixture-rm-noise"}


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


# --- layouts not in the shipped copy -------------------------------------------------------------

def _pair(i, model, label):
    source = ["mmlu-pro-law", "livebench-math", "livecodebench"][i % 3]
    return {"pair_id": f"p{i}", "original_id": None, "source": source,
            "question": f"q{i}", "response_model": model, "response_A": f"a{i}", "response_B": f"b{i}",
            "label": label}


def _game(decision):
    return {"judgment": {"response": f"verdict {decision}"}, "decision": decision}


def _clone(tmp_path):
    """A JudgeBench-format folder whose pair file and output files are named differently from the
    repository's, plus an extra output file in a sub-folder."""
    root = tmp_path / "jb"
    (root / "data").mkdir(parents=True)
    (root / "outputs" / "mine").mkdir(parents=True)
    pairs = [_pair(i, "my-model", lab) for i, lab in enumerate(["A>B", "B>A", "A>B", "B>A", "B>A"])]
    (root / "data" / "my_pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    (root / "data" / "notes.jsonl").write_text(json.dumps({"note": "not a pair"}) + "\n")
    # the repository's naming, for a response model and judge the shipped copy does not have
    named = "dataset=judgebench,response_model=my-model,judge_name=arena_hard,judge_model=gpt-4.1.jsonl"
    games = [["A>B", "B>A"], ["B>A", "A>B"], ["A=B", "A>B"], [None, "B>A"], ["B>A", "B>A"]]
    recs = [{**p, "judge_name": "arena_hard",
             "judgments": [_game(g1) if g1 else None, _game(g2)]} for p, (g1, g2) in zip(pairs, games)]
    (root / "outputs" / named).write_text("".join(json.dumps(r) + "\n" for r in recs))
    # an output file with a name of the user's own, the judge in its records
    recs2 = [{**p, "judge_name": "vanilla", "judge_model": "claude-3-7-sonnet",
              "judgments": [_game("A>B"), _game("A>B")]} for p in pairs]
    (root / "outputs" / "mine" / "run1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs2))
    return root


def test_pairs_and_outputs_discovered_by_schema(tmp_path):
    root = _clone(tmp_path)
    p = judgebench.load_pairs(root)
    assert p["pair_id"].tolist() == ["p0", "p1", "p2", "p3", "p4"]
    assert p["label"].tolist() == ["A", "B", "A", "B", "B"]
    assert p["subset"].tolist() == ["knowledge", "math", "coding", "knowledge", "math"]
    # the data folder or the pair file given directly
    assert len(judgebench.load_pairs(root / "data")) == 5
    assert len(judgebench.load_pairs(root / "data" / "my_pairs.jsonl")) == 5
    files = judgebench.output_files(root)
    assert sorted(files) == ["arena_hard/gpt-4.1", "vanilla/claude-3-7-sonnet"]
    t = judgebench.load_judge_outputs(files["arena_hard/gpt-4.1"])
    # game 2 is in the swapped frame: B>A there is A here
    assert t["choice_ab"].fillna("-").tolist() == ["A", "B", "tie", "-", "B"]
    assert t["choice_ba"].tolist() == ["A", "B", "B", "A", "A"]
    assert t["failure_ab"].fillna("-").tolist() == ["-", "-", "-", "api", "-"]
    assert t["family"].iloc[0] == "openai"
    own = judgebench.load_judge_outputs(files["vanilla/claude-3-7-sonnet"])
    assert own["judge_id"].iloc[0] == "vanilla/claude-3-7-sonnet" and own["family"].iloc[0] == "anthropic"
    # official rule, per pair (label +1, other side -1): p0 +2, p1 +2, p2 0-1, p3 0-1, p4 +1-1 -> 2 of 5
    assert judgebench.official_score(judgebench.raw_outputs(files["arena_hard/gpt-4.1"])) == 40.0
    assert sorted(published.published_judges(root)) == ["arena_hard/gpt-4.1", "vanilla/claude-3-7-sonnet"]


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "readme.md").write_text("x")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.jsonl").write_text(json.dumps({"q": 1}) + "\n")
    with pytest.raises(InputError) as e:
        judgebench.load_pairs(tmp_path)
    assert "no JudgeBench pair file" in str(e.value) and "found: data/, readme.md" in str(e.value)
    with pytest.raises(InputError, match="found: my-model"):
        judgebench.load_pairs(_clone(tmp_path / "c"), response_model="gpt-4o-2024-05-13")
