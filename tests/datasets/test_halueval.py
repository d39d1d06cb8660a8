"""HaluEval adapter: record counts from PROVENANCE.json, label key quirk, provenance conditions."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import halueval
from judgeaudit.errors import InputError


@pytest.mark.data
def test_real_files_parse_with_provenance_counts(data_dir):
    root = data_dir / "halueval"
    prov = {f["path"]: f["records"] for f in json.loads((root / "PROVENANCE.json").read_text())["files"]}
    items = halueval.load_items(root)
    assert len(items) == prov["data/general_data.json"] == 4507
    raw = [json.loads(x) for x in (root / "data/general_data.json").open()]
    assert (items["label"] == "hallucinated").sum() == sum(r["hallucination"] == "yes" for r in raw)
    pairs = halueval.load_pairs(root, strategy="both")
    assert len(pairs) == prov["generation/qa/qa_one-turn_data.json"] + prov["generation/qa/qa_multi-turn_data.json"]


def test_pairs_record_the_generative_condition(tmp_path):
    d = tmp_path / "generation" / "qa"
    d.mkdir(parents=True)
    rows = [{"knowledge": "k", "question": f"q{i}", "right_answer": f"r{i}", "hallucinated_answer": f"h{i}"}
            for i in range(6)]
    (d / "qa_one-turn_data.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = halueval.load_pairs(tmp_path)
    for r in df.itertuples():
        gold_text = r.response_a if r.label == "A" else r.response_b
        gold_cond = r.condition_a if r.label == "A" else r.condition_b
        assert gold_text.startswith("r") and gold_cond == "hotpotqa_gold"
        assert r.label == halueval.gold_side(r.prompt)
    assert set(df["label"]) == {"A", "B"} or len(df) < 4
    with pytest.raises(InputError):
        halueval.load_pairs(tmp_path, strategy="multi-turn")


def test_bad_label_names_line(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "general_data.json").write_text(
        json.dumps({"ID": "1", "user_query": "q", "chatgpt_response": "r", "hallucination": "no"}) + "\n"
        + json.dumps({"ID": "2", "user_query": "q", "chatgpt_response": "r", "hallucination": "maybe"}) + "\n")
    with pytest.raises(InputError) as e:
        halueval.load_items(tmp_path)
    assert e.value.line == 2 and e.value.field == "hallucination"
