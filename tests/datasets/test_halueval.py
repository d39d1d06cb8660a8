"""HaluEval adapter: record counts from PROVENANCE.json, label key quirk, provenance conditions."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import halueval, registry
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


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_parts_and_strategies_found_by_schema(tmp_path):
    """The repository's final task files (data/qa_data.json, data/dialogue_data.json) beside the
    generation files, and a general file under a name of the user's own."""
    _jsonl(tmp_path / "generation" / "qa" / "qa_one-turn_data.json",
           [{"knowledge": "k", "question": f"q{i}", "right_answer": f"r{i}", "hallucinated_answer": f"h{i}"}
            for i in range(3)])
    _jsonl(tmp_path / "data" / "qa_data.json",
           [{"knowledge": "k", "question": f"q{i}", "right_answer": f"r{i}", "hallucinated_answer": f"h{i}"}
            for i in range(4)])
    _jsonl(tmp_path / "data" / "dialogue_data.json",
           [{"knowledge": "k", "dialogue_history": f"[Human]: d{i}", "right_response": f"r{i}",
             "hallucinated_response": f"h{i}"} for i in range(2)])
    _jsonl(tmp_path / "mine" / "labels.json",
           [{"ID": str(i), "user_query": f"u{i}", "chatgpt_response": f"c{i}", "hallucination": ["yes", "no"][i % 2]}
            for i in range(5)])
    assert list(halueval.pair_files(tmp_path)) == ["one-turn", "final"]
    final = halueval.load_pairs(tmp_path, strategy="final")
    assert final["pair_id"].tolist() == [f"halueval/qa/final/{i}" for i in range(1, 5)]
    assert len(halueval.load_pairs(tmp_path, strategy="both")) == 7
    dlg = registry.load_set(f"halueval:{tmp_path}?part=dialogue&strategy=final")
    assert len(dlg) == 2 and set(dlg["source_set"]) == {"halueval_dialogue"}
    for r in dlg.itertuples():
        assert (r.response_a if r.label == "A" else r.response_b).startswith("r")
        assert (r.condition_a if r.label == "A" else r.condition_b) == "opendialkg_gold"
    items = halueval.load_items(tmp_path)
    assert items["label"].tolist() == ["hallucinated", "not_hallucinated"] * 2 + ["hallucinated"]
    with pytest.raises(InputError, match="found: one-turn, final"):
        halueval.load_pairs(tmp_path, strategy="multi-turn")


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "readme.md").write_text("x")
    with pytest.raises(InputError, match="no HaluEval general file.*found: readme.md"):
        halueval.load_items(tmp_path)
    with pytest.raises(InputError, match="no HaluEval qa file.*found: readme.md"):
        halueval.load_pairs(tmp_path)
