"""World sets: the corpora as world items, with exact counts on the real files and on fixtures."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgeaudit.datasets.world import load_world, load_world_set
from judgeaudit.datasets.world_corpora import locate_sentences, render_constraint
from judgeaudit.errors import InputError

# ---- real files ------------------------------------------------------------------------------------


@pytest.mark.data
def test_halueval_qa_two_outputs_per_question(data_dir):
    root = data_dir / "halueval"
    ws = load_world(f"halueval:{root}?part=qa")
    recs = [json.loads(x) for x in (root / "generation/qa/qa_one-turn_data.json").read_text().splitlines()]
    assert len(ws) == 1000 and ws.provenance["n_groups"] == 500
    assert sum(it.defective for it in ws.items) == 500
    assert ws.provenance["provenance_file"]["files"][1]["records"] == 500
    assert ws.provenance["variant"] == "one-turn"
    right, fake = ws.items[0], ws.items[1]
    assert (right.output, right.defective, fake.output, fake.defective) == (
        recs[0]["right_answer"], False, recs[0]["hallucinated_answer"], True)
    assert right.group == fake.group and right.world == fake.world == recs[0]["knowledge"]
    assert right.question == recs[0]["question"] and fake.reference == recs[0]["right_answer"]
    assert fake.meta["variant"] == "one-turn" and fake.meta["answer"] == "hallucinated"
    assert [(s.start, s.end) for s in fake.spans] == [(0, len(fake.output))] and right.spans == []
    # the other generation strategy: the same 500 questions; 13 hallucinated answers are identical
    multi = load_world_set(f"halueval:{root}?part=qa&strategy=multi-turn")
    assert {it.meta["variant"] for it in multi} == {"multi-turn"}
    same = sum(a.output == b.output for a, b in zip(ws.items, multi) if a.defective)
    assert same == 13


@pytest.mark.data
def test_frank_sentence_level_counts(data_dir):
    ws = load_world(f"frank:{data_dir / 'frank'}")
    p = ws.provenance
    # 2,246 summaries; exact sentence labels for 1,805 (Factuality 0 or 1, or one sentence)
    assert len(ws) == 1805 and p["n_records"] == 2246
    assert sum(p["excluded"].values()) == 441
    assert p["n_sentences"] == 3496 and p["n_error_sentences"] == 1162
    ann = json.loads((data_dir / "frank/human_annotations.json").read_text())
    assert sum(it.defective for it in ws.items) == sum(a["Factuality"] < 1 for a in ann) - 441
    for it in ws.items:
        assert all(it.output[u.start:u.end] == u.text for u in it.units)
        assert sum(u.defective for u in it.units) == it.meta["n_error_sentences"]
        assert it.world and it.reference
        if it.defective and len(it.units) == 1:  # one sentence: its categories are the summary's
            cats = [k for k, v in it.meta["category_shares"].items() if v == 0.0]
            assert it.units[0].kind == (",".join(cats) or None)
    keep = load_world(f"frank:{data_dir / 'frank'}?undetermined=keep")
    assert len(keep) == 2246
    assert sum(u.defective is None for it in keep.items for u in it.units) == sum(
        len(it.units) for it in keep.items if not it.meta["sentences_determined"])


@pytest.mark.data
def test_ifeval_constraints_labelled_by_the_checker(data_dir):
    ws = load_world(f"ifeval:{data_dir / 'ifeval'}?join=position")
    units = [u for it in ws.items for u in it.units]
    # the checker's strict counts on this file pair: 698/834 instructions, 417/541 prompts followed
    assert len(ws) == 541 and len(units) == 834
    assert sum(u.defective for u in units) == 834 - 698
    assert sum(it.defective for it in ws.items) == 541 - 417
    assert len({u.kind for u in units}) == 25
    assert [j["key"] for j in ws.provenance["joined_by_position"]] == [2785]
    # by default a prompt is joined by its text only: key 2785, edited after its response was written, is left out
    by_text = load_world(f"ifeval:{data_dir / 'ifeval'}")
    assert len(by_text) == 540 and by_text.provenance["missing_keys"] == [2785]
    assert by_text.provenance["excluded"] == {"no response with the prompt's text (join=position joins by line)": 1}
    first = ws.items[0]
    assert first.world.startswith("Write a 300+ word summary") and first.question is None
    assert [u.text for u in first.units] == [
        "punctuation:no_comma", "detectable_format:number_highlighted_sections (num_highlights=3)",
        "length_constraints:number_words (num_words=300; relation=at least)"]


@pytest.mark.data
def test_gsm8k_solutions_labelled_by_the_answer_key(data_dir):
    ws = load_world(f"gsm8k:{data_dir / 'gsm8k'}")
    recs = [json.loads(x) for x in (data_dir / "gsm8k/example_model_solutions.jsonl").read_text().splitlines()]
    conds = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
    assert len(ws) == 1319 * 4 and ws.provenance["n_groups"] == 1319
    assert sum(it.defective for it in ws.items) == sum(not r[c]["is_correct"] for r in recs for c in conds)
    assert ws.provenance["agreement_with_is_correct"] == {"agree": 5276, "total": 5276}
    one = load_world_set(f"gsm8k:{data_dir / 'gsm8k'}?conditions=175b_verification")
    assert len(one) == 1319 and one[0].world == recs[0]["question"] and one[0].reference == recs[0]["ground_truth"]


@pytest.mark.data
def test_max_rows_keeps_whole_groups(data_dir):
    ws = load_world(f"halueval:{data_dir / 'halueval'}?part=qa&max_rows=11")
    assert len(ws) == 10 and ws.provenance["trimmed"]["from_rows"] == 1000
    assert all(sum(o.group == it.group for o in ws.items) == 2 for it in ws.items)


@pytest.mark.data
def test_max_items_keeps_halueval_pairs_together(data_dir):
    from judgeaudit.commands.world import load_set

    items, _ = load_set(f"halueval:{data_dir / 'halueval'}?part=qa", 5)
    assert [it.item_id for it in items] == [f"halueval/qa/{n}/{r}" for n in (1, 2) for r in ("right", "hallucinated")]


# ---- helpers ---------------------------------------------------------------------------------------


def test_locate_sentences_ignores_case_and_spacing():
    text = "gary locke will stay .  he  signed ."
    assert locate_sentences(text, ["Gary Locke will stay .", "He signed ."]) == [(0, 22), (24, 36)]
    assert locate_sentences(text, ["Gary Locke will stay ."]) is None  # text left over
    assert locate_sentences(text, ["Gary Locke will go ."]) is None


def test_render_constraint():
    assert render_constraint("keywords:existence", {"keywords": ("a", "b")}) == "keywords:existence (keywords=a, b)"


# ---- fixtures --------------------------------------------------------------------------------------


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _ragtruth(tmp_path, responses=None, sources=None):
    d = tmp_path / "rt"
    d.mkdir()
    _jsonl(d / "source_info.jsonl", sources or [
        {"source_id": "s1", "task_type": "QA", "source": "MARCO",
         "source_info": {"question": "how tall is the tower", "passages": "passage 1: The tower is 300 m tall."},
         "prompt": "..."},
        {"source_id": "s2", "task_type": "Summary", "source": "CNN/DM", "source_info": "Rain fell on Monday.",
         "prompt": "..."},
        {"source_id": "s3", "task_type": "Data2txt", "source": "Yelp", "source_info": {"name": "Subway"},
         "prompt": "..."}])
    _jsonl(d / "response.jsonl", responses or [
        {"id": "1", "source_id": "s1", "model": "m", "temperature": 0.7, "split": "test", "quality": "good",
         "response": "The tower is 200 m tall.",
         "labels": [{"start": 13, "end": 18, "text": "200 m", "label_type": "Evident Conflict"}]},
        {"id": "2", "source_id": "s1", "model": "n", "temperature": 0.7, "split": "train", "quality": "good",
         "response": "It is 300 m tall.", "labels": []},
        {"id": "3", "source_id": "s2", "model": "m", "temperature": 0.7, "split": "test", "quality": "good",
         "response": "Rain fell on Monday and Tuesday.",
         "labels": [{"start": 20, "end": 31, "text": "and Tuesday", "label_type": "Evident Baseless Info",
                     "implicit_true": False}]},
        {"id": "4", "source_id": "s3", "model": "m", "temperature": 0.7, "split": "test", "quality": "truncated",
         "response": "Subway is", "labels": []},
        {"id": "5", "source_id": "s3", "model": "n", "temperature": 0.7, "split": "test", "quality": "good",
         "response": "Subway is a sandwich shop.", "labels": []}])
    return d


def test_ragtruth_format(tmp_path):
    d = _ragtruth(tmp_path)
    ws = load_world(f"ragtruth:{d}")
    assert [it.item_id for it in ws.items] == ["ragtruth/1", "ragtruth/2", "ragtruth/3", "ragtruth/5"]
    assert ws.provenance["excluded"] == {"quality is not good": 1}
    qa, _, summ, d2t = ws.items
    assert (qa.task, qa.world, qa.question, qa.defective) == (
        "rag", "passage 1: The tower is 300 m tall.", "how tall is the tower", True)
    assert [(s.start, s.end, s.label) for s in qa.spans] == [(13, 18, "Evident Conflict")]
    assert qa.output[13:18] == "200 m"
    assert (summ.task, summ.world, summ.question) == ("summarization", "Rain fell on Monday.", None)
    assert (d2t.task, d2t.world, d2t.defective) == ("data2text", "{'name': 'Subway'}", False)
    assert ws.provenance["label_text_mismatches"] == 0
    test = load_world(f"ragtruth:{d}?split=test&task=QA,Summary")
    assert [it.item_id for it in test.items] == ["ragtruth/1", "ragtruth/3"]
    assert test.provenance["excluded"] == {"split is not test": 1, "quality is not good": 1,
                                           "task is not QA, Summary": 1}


def test_ragtruth_span_outside_the_output(tmp_path):
    d = _ragtruth(tmp_path, responses=[
        {"id": "1", "source_id": "s1", "split": "test", "quality": "good", "response": "short",
         "labels": [{"start": 2, "end": 40, "label_type": "Evident Conflict"}]}])
    with pytest.raises(InputError) as e:
        load_world(f"ragtruth:{d}")
    assert (e.value.path, e.value.line, e.value.field) == (str(d / "response.jsonl"), 1, "labels[0]")


def test_ragtruth_missing_world_and_zero_length_label_are_excluded(tmp_path):
    d = _ragtruth(tmp_path, responses=[
        {"id": "1", "source_id": "s1", "split": "test", "quality": "good", "response": "x", "labels": []},
        {"id": "2", "source_id": "s9", "split": "test", "quality": "good", "response": "x", "labels": []},
        {"id": "3", "source_id": "s1", "split": "test", "quality": "good", "response": "The tower is tall.",
         "labels": [{"start": 4, "end": 9, "label_type": "Evident Conflict"},
                    {"start": 7, "end": 7, "text": "", "label_type": "Evident Conflict"}]}])
    ws = load_world(f"ragtruth:{d}")
    assert [it.item_id for it in ws.items] == ["ragtruth/1"]
    assert ws.provenance["excluded"] == {"no source (the world) in source_info.jsonl": 1,
                                         "a label of zero length (start = end) marks no text": 1}
    (tmp_path / "b").mkdir()
    d2 = _ragtruth(tmp_path / "b", sources=[{"source_id": "s1", "task_type": "QA", "source_info": {"question": "q"}}],
                   responses=[{"id": "1", "source_id": "s1", "response": "x", "labels": []}])
    with pytest.raises(InputError, match="every record was left out: the world \\(source_info\\) is missing"):
        load_world(f"ragtruth:{d2}")


def test_aggrefact_jsonl_csv_parquet(tmp_path):
    rows = [{"dataset": "AggreFact-CNN", "doc": "The cat sat.", "claim": "A cat sat.", "label": 1},
            {"dataset": "AggreFact-CNN", "doc": "The cat sat.", "claim": "A dog sat.", "label": 0},
            {"dataset": "TofuEval", "doc": "Sales rose.", "claim": "Sales fell.", "label": 0}]
    _jsonl(tmp_path / "a.jsonl", rows)
    ws = load_world(f"aggrefact:{tmp_path / 'a.jsonl'}")
    assert [(it.world, it.output, it.defective, it.task) for it in ws.items] == [
        ("The cat sat.", "A cat sat.", False, "claim"), ("The cat sat.", "A dog sat.", True, "claim"),
        ("Sales rose.", "Sales fell.", True, "claim")]
    assert ws.provenance["n_groups"] == 2 and ws.provenance["name"] == "aggrefact"
    assert load_world(f"aggrefact:{tmp_path / 'a.jsonl'}?name=mine").provenance["name"] == "mine"
    df = pd.DataFrame(rows).rename(columns={"doc": "document"})
    df.to_csv(tmp_path / "b.csv", index=False)
    df.to_parquet(tmp_path / "c.parquet")
    for name in ("b.csv", "c.parquet"):
        got = load_world_set(f"aggrefact:{tmp_path / name}")
        assert [(it.world, it.defective) for it in got] == [(r["doc"], r["label"] == 0) for r in rows]


def test_aggrefact_bad_rows(tmp_path):
    pd.DataFrame([{"doc": "d", "claim": "c", "label": 1}, {"doc": None, "claim": "c", "label": 0}]).to_csv(
        tmp_path / "x.csv", index=False)
    with pytest.raises(InputError) as e:
        load_world(f"aggrefact:{tmp_path / 'x.csv'}")
    assert (e.value.line, e.value.field) == (3, "doc")
    _jsonl(tmp_path / "y.jsonl", [{"doc": "d", "claim": "c", "label": "maybe"}])
    with pytest.raises(InputError) as e:
        load_world(f"aggrefact:{tmp_path / 'y.jsonl'}")
    assert (e.value.line, e.value.field) == (1, "label")


def test_halueval_summarization_fixture_and_bad_input(tmp_path):
    _jsonl(tmp_path / "summarization_one-turn_data.json", [
        {"document": "Rain fell.", "right_summary": "It rained.", "hallucinated_summary": "It snowed."}])
    items = load_world_set(f"halueval:{tmp_path}?part=summarization")
    assert [(it.world, it.question, it.output, it.defective, it.task) for it in items] == [
        ("Rain fell.", None, "It rained.", False, "summarization"),
        ("Rain fell.", None, "It snowed.", True, "summarization")]
    with pytest.raises(InputError) as e:
        load_world(f"halueval:{tmp_path}?part=general")
    assert e.value.field == "part"
    q = tmp_path / "q"
    q.mkdir()
    _jsonl(q / "qa_one-turn_data.json", [
        {"knowledge": "K", "question": "Q", "right_answer": "A", "hallucinated_answer": "B"},
        {"knowledge": " ", "question": "Q2", "right_answer": "A", "hallucinated_answer": "B"}])
    ws = load_world(f"halueval:{q}?part=qa")
    assert [it.item_id for it in ws.items] == ["halueval/qa/1/right", "halueval/qa/1/hallucinated"]
    assert ws.provenance["excluded"] == {"the world (knowledge) is missing or empty": 1}
    assert ws.provenance["n_records"] == 2
    _jsonl(q / "qa_one-turn_data.json", [
        {"knowledge": "", "question": "Q2", "right_answer": "A", "hallucinated_answer": "B"}])
    with pytest.raises(InputError, match="every record was left out: the world \\(knowledge\\) is missing or empty: 1"):
        load_world(f"halueval:{q}?part=qa")


def test_frank_fixture_rule(tmp_path):
    arts = {"hash": "h1", "article": "The cat sat on the mat. It was warm.",
            "a": "the cat sat . it was warm .", "a_lines": ["The cat sat .", "It was warm ."],
            "b": "the dog sat .", "b_lines": ["The dog sat ."],
            "c": "the cat ran . it was cold .", "c_lines": ["The cat ran .", "It was cold ."],
            "a_reference": "the cat sat on the mat ."}
    _jsonl(tmp_path / "articles.jsonl", [arts])
    cats = {k: 1.0 for k in ("RelE", "EntE", "CircE", "OutE", "GramE", "CorefE", "LinkE", "Other")}
    (tmp_path / "human_annotations.json").write_text(json.dumps([
        {"hash": "h1", "model_name": "a", "Factuality": 1.0, **cats},
        {"hash": "h1", "model_name": "b", "Factuality": 0.0, **cats, "EntE": 0.0},
        {"hash": "h1", "model_name": "c", "Factuality": 0.5, **cats, "RelE": 0.5}]))
    ws = load_world(f"frank:{tmp_path}")
    assert [it.item_id for it in ws.items] == ["frank/h1/a", "frank/h1/b"]
    assert ws.provenance["excluded"] == {
        "sentence labels not determined by the summary-level annotation (0 < Factuality < 1, several sentences)": 1}
    a, b = ws.items
    assert [(u.text, u.defective, u.kind) for u in a.units] == [("the cat sat .", False, None),
                                                                 ("it was warm .", False, None)]
    assert a.reference == "the cat sat on the mat ." and b.reference is None
    assert [(u.defective, u.kind) for u in b.units] == [(True, "EntE")]
    assert [(s.start, s.end, s.label) for s in b.spans] == [(0, 13, "EntE")]
    keep = load_world_set(f"frank:{tmp_path}?undetermined=keep")
    assert [u.defective for u in keep[2].units] == [None, None] and keep[2].defective is True


def test_unknown_adapter_and_option():
    with pytest.raises(InputError) as e:
        load_world("nosuch:/x")
    assert e.value.field == "set"
    with pytest.raises(InputError) as e:
        load_world("frank:/x?undetermined=maybe")
    assert e.value.field == "undetermined"


def test_ifeval_fixture(tmp_path):
    _jsonl(tmp_path / "input_data.jsonl", [
        {"key": 1, "prompt": "Write without commas.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        {"key": 2, "prompt": "Write a title and no commas.",
         "instruction_id_list": ["detectable_format:title", "punctuation:no_comma"], "kwargs": [{}, {}]}])
    _jsonl(tmp_path / "responses.jsonl", [{"prompt": "Write without commas.", "response": "Hello world"},
                                          {"prompt": "Write a title and no commas.", "response": "Hello, world"}])
    ws = load_world(f"ifeval:{tmp_path}")
    assert [(it.world, it.output, it.defective) for it in ws.items] == [
        ("Write without commas.", "Hello world", False), ("Write a title and no commas.", "Hello, world", True)]
    assert [[(u.unit_id, u.kind, u.defective) for u in it.units] for it in ws.items] == [
        [("0:punctuation:no_comma", "punctuation:no_comma", False)],
        [("0:detectable_format:title", "detectable_format:title", True),
         ("1:punctuation:no_comma", "punctuation:no_comma", True)]]
    _jsonl(tmp_path / "more.jsonl", [{"prompt": "x", "response": "y"}])
    with pytest.raises(InputError, match="responses=FILE"):
        load_world(f"ifeval:{tmp_path}")
    assert len(load_world_set(f"ifeval:{tmp_path}?responses=responses.jsonl")) == 2


def test_gsm8k_fixture_and_missing_answer_key(tmp_path):
    sol = {"is_correct": True, "solution": "2 + 2 = <<2+2=4>>4\nA: 4"}
    bad = {"is_correct": False, "solution": "2 + 3 = 5\nA: 5"}
    _jsonl(tmp_path / "example_model_solutions.jsonl", [
        {"question": "What is 2 + 2?", "ground_truth": "2 + 2 = 4\nA: 4", "m1": sol, "m2": bad}])
    items = load_world_set(f"gsm8k:{tmp_path}")
    assert [(it.item_id, it.world, it.defective, it.meta["answer_key"]) for it in items] == [
        ("gsm8k/1/m1", "What is 2 + 2?", False, "4"), ("gsm8k/1/m2", "What is 2 + 2?", True, "4")]
    _jsonl(tmp_path / "example_model_solutions.jsonl", [{"question": "q", "m1": sol}])
    with pytest.raises(InputError) as e:
        load_world(f"gsm8k:{tmp_path}")
    assert (e.value.line, e.value.field) == (1, "ground_truth")


def test_frank_missing_world(tmp_path):
    _jsonl(tmp_path / "articles.jsonl", [{"hash": "h1", "article": "A.", "a": "a .", "a_lines": ["a ."]}])
    (tmp_path / "human_annotations.json").write_text(json.dumps([
        {"hash": "h2", "model_name": "a", "Factuality": 1.0}]))
    with pytest.raises(InputError, match="every record was left out: no summary record"):
        load_world(f"frank:{tmp_path}")
    (tmp_path / "human_annotations.json").write_text(json.dumps([
        {"hash": "h1", "model_name": "a", "Factuality": 1.0}, {"hash": "h2", "model_name": "a", "Factuality": 1.0},
        {"hash": "h3", "model_name": "a", "Factuality": 1.0}]))
    _jsonl(tmp_path / "articles.jsonl", [{"hash": "h1", "article": "A.", "a": "a .", "a_lines": ["a ."]},
                                         {"hash": "h2", "article": "", "a": "a .", "a_lines": ["a ."]}])
    ws = load_world(f"frank:{tmp_path}")
    assert [it.item_id for it in ws.items] == ["frank/h1/a"] and ws.provenance["n_records"] == 3
    assert ws.provenance["excluded"] == {"no summary record of the system with its article (the world)": 1,
                                         "the article (the world) is empty": 1}
