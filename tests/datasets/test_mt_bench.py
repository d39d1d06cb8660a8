"""MT-Bench adapter: the real judgment file (counts from PROVENANCE.json) and the human-vote shape."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import mt_bench
from judgeaudit.errors import InputError


@pytest.mark.data
def test_real_files_parse_with_provenance_counts(data_dir):
    root = data_dir / "mt_bench"
    prov = {f["path"]: f["records"] for f in json.loads((root / "PROVENANCE.json").read_text())["files"]}
    assert len(mt_bench.load_questions(root)) == prov["question.jsonl"] == 80
    df = mt_bench.load_pairs(root)
    raw = [json.loads(line) for line in (root / "third_party_judgments/Stefanstud/gpt-4_pair.jsonl").open()]
    assert len(raw) == prov["third_party_judgments/Stefanstud/gpt-4_pair.jsonl"] == 75
    n_err = sum("error" in (r["g1_winner"], r["g2_winner"]) for r in raw)
    assert len(df) + df.attrs["n_error_dropped"] == 75 and df.attrs["n_error_dropped"] == n_err
    # label = position-consistent verdict, inconsistent → tie (counted independently here)
    ok = [r for r in raw if "error" not in (r["g1_winner"], r["g2_winner"])]
    exp = [("A" if r["g1_winner"] == "model_1" else "B" if r["g1_winner"] == "model_2" else "tie")
           if r["g1_winner"] == r["g2_winner"] else "tie" for r in ok]
    assert df["label"].tolist() == exp
    first = df.iloc[0]
    answers = {json.loads(x)["question_id"]: json.loads(x) for x in
               (root / "third_party_judgments/Stefanstud/model_answer/phi-3.jsonl").open()}
    assert first["condition_a"] == "phi-3"
    assert first["response_a"] == answers[int(first["group"])]["choices"][0]["turns"][0]


def _tiny_root(tmp_path):
    (tmp_path / "model_answer").mkdir(parents=True)
    (tmp_path / "question.jsonl").write_text(json.dumps({"question_id": 1, "category": "writing",
                                                         "turns": ["q1", "q1b"]}) + "\n")
    for m, t in (("m1", ["short", "short b"]), ("m2", ["a much longer answer", "longer b"])):
        (tmp_path / "model_answer" / f"{m}.jsonl").write_text(json.dumps(
            {"question_id": 1, "model_id": m, "choices": [{"index": 0, "turns": t}]}) + "\n")
    return tmp_path


def test_human_votes_are_merged_across_model_order(tmp_path):
    root = _tiny_root(tmp_path)
    votes = [("m1", "m2", "model_b", "j1"), ("m2", "m1", "model_a", "j2"), ("m1", "m2", "tie", "j3"),
             ("m1", "m2", "model_a", "j4")]
    lines = [json.dumps({"question_id": 1, "model_a": a, "model_b": b, "winner": w, "judge": j, "turn": 1})
             for a, b, w, j in votes]
    (root / "human_judgments.jsonl").write_text("\n".join(lines) + "\n")
    df = mt_bench.load_pairs(root)
    assert len(df) == 1
    row = df.iloc[0]
    assert (row.condition_a, row.condition_b) == ("m1", "m2")
    assert row.human_labels == ["B", "B", "tie", "A"]
    assert row.label == "tie"  # 2 of 4 is no strict majority
    assert row.response_b == "a much longer answer"


def test_bad_judgment_record_names_file_and_line(tmp_path):
    root = _tiny_root(tmp_path)
    (root / "x_pair.jsonl").write_text(json.dumps({"question_id": 1, "model_1": "m1", "model_2": "m2",
                                                   "g1_winner": "model_1", "g2_winner": "model_1",
                                                   "judge": "['gpt-4', 'pair-v2']", "turn": 1}) + "\n"
                                       + json.dumps({"question_id": 1, "model_1": "m1", "model_2": "m2",
                                                     "g1_winner": "bogus", "g2_winner": "model_1", "turn": 1}) + "\n")
    with pytest.raises(InputError) as e:
        mt_bench.load_pairs(root)
    assert e.value.line == 2 and e.value.field == "g1_winner" and "x_pair.jsonl" in str(e.value)


def _pair_line(g1, g2, m1="m1", m2="m2", turn=1):
    return json.dumps({"question_id": 1, "model_1": m1, "model_2": m2, "g1_winner": g1, "g2_winner": g2,
                       "judge": ["gpt-4", "pair-v2"], "turn": turn})


def test_judgment_files_found_by_schema_in_a_clone(tmp_path):
    """A FastChat clone given at its root, a pair file under a name of the user's own, a
    single-answer grading file beside it (not pairwise) and a human-judgment file named freely."""
    data = tmp_path / "FastChat" / "fastchat" / "llm_judge" / "data" / "mt_bench"
    data.mkdir(parents=True)
    _tiny_root(data)
    (data / "model_judgment").mkdir()
    (data / "model_judgment" / "my_run.jsonl").write_text(
        "\n".join([_pair_line("model_1", "model_1"), _pair_line("model_2", "model_1"),
                   _pair_line("model_2", "model_2", turn=2)]) + "\n")
    (data / "model_judgment" / "gpt-4_single.jsonl").write_text(json.dumps(
        {"question_id": 1, "model": "m1", "judge": ["gpt-4", "single-v1"], "score": 7, "turn": 1}) + "\n")
    (data / "votes.jsonl").write_text(json.dumps({"question_id": 1, "model_a": "m2", "model_b": "m1",
                                                  "winner": "model_a", "judge": "expert_1", "turn": 1}) + "\n")
    df = mt_bench.load_pairs(tmp_path / "FastChat")
    assert [(r.judge, r.turn, r.label) for r in df.itertuples()] == [
        ("gpt-4/pair-v2", 1, "A"), ("gpt-4/pair-v2", 1, "tie"), ("gpt-4/pair-v2", 2, "B"), ("human", 1, "B")]
    assert [f.name for f in mt_bench.judgment_files(data)] == ["my_run.jsonl", "votes.jsonl"]
    assert len(mt_bench.load_questions(tmp_path / "FastChat")) == 1
    one = mt_bench.load_pairs(data / "model_judgment" / "my_run.jsonl")
    assert one["label"].tolist() == ["A", "tie", "B"]


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "answers").mkdir()
    with pytest.raises(InputError) as e:
        mt_bench.load_pairs(tmp_path)
    assert "question.jsonl not found" in str(e.value) and "found: answers/" in str(e.value)
    root = _tiny_root(tmp_path / "t")
    with pytest.raises(InputError, match="no MT-Bench pairwise judgment file.*found: model_answer/, question.jsonl"):
        mt_bench.load_pairs(root)
