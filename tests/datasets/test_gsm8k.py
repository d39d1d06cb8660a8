"""GSM8K adapter: counts against an independent count of the raw JSON lines, paired labels point
at a correct solution, conditions recorded, registry spec and bad input."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import gsm8k, registry
from judgeaudit.errors import InputError

CONDS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _raw(root):
    return [json.loads(x) for x in (root / "example_model_solutions.jsonl").open(encoding="utf-8") if x.strip()]


@pytest.mark.data
def test_items_match_an_independent_count_of_the_raw_file(data_dir):
    root = data_dir / "gsm8k"
    raw = _raw(root)
    prov = {f["path"]: f["records"] for f in json.loads((root / "PROVENANCE.json").read_text())["files"]}
    n_solutions = sum(1 for r in raw for k, v in r.items() if isinstance(v, dict) and "is_correct" in v)
    n_correct = sum(1 for r in raw for v in r.values() if isinstance(v, dict) and v.get("is_correct") is True)
    items = gsm8k.load_items(root)
    assert len(raw) == prov["example_model_solutions.jsonl"] == 1319
    assert len(items) == n_solutions == 4 * 1319
    assert (items["label"] == "correct").sum() == n_correct
    assert (items["label"] == "correct").mean() == pytest.approx(n_correct / n_solutions)
    assert items["group"].nunique() == len({r["question"] for r in raw}) == 1319
    assert set(items["condition"]) == set(CONDS)
    assert (items.groupby("group")["condition"].nunique() == 4).all()
    # per condition, the correct share equals the raw one (e.g. verification beats finetuning)
    for c in CONDS:
        raw_share = sum(r[c]["is_correct"] for r in raw) / len(raw)
        assert (items.loc[items["condition"] == c, "label"] == "correct").mean() == pytest.approx(raw_share)
    # text is the solution only: the ground truth never reaches a member
    first = raw[0]
    row = items[(items["item_id"] == "gsm8k/1/6b_finetuning")].iloc[0]
    assert row["text"] == first["6b_finetuning"]["solution"] and row["prompt"] == first["question"]


@pytest.mark.data
def test_pairs_point_at_a_correct_solution_every_time(data_dir):
    root = data_dir / "gsm8k"
    raw = _raw(root)
    by_q = {r["question"]: r for r in raw}
    n_mixed = sum(1 for r in raw if len({r[c]["is_correct"] for c in CONDS}) == 2)
    n_all = sum(sum(r[c]["is_correct"] for c in CONDS) * (4 - sum(r[c]["is_correct"] for c in CONDS)) for r in raw)
    pairs = gsm8k.load_pairs(root)
    assert len(pairs) == n_mixed == pairs["group"].nunique()
    assert len(gsm8k.load_pairs(root, pairs="all")) == n_all
    for r in pairs.itertuples():
        q = by_q[r.prompt]
        win_c, lose_c = (r.condition_a, r.condition_b) if r.label == "A" else (r.condition_b, r.condition_a)
        win_t, lose_t = (r.response_a, r.response_b) if r.label == "A" else (r.response_b, r.response_a)
        assert q[win_c]["is_correct"] is True and q[win_c]["solution"] == win_t
        assert q[lose_c]["is_correct"] is False and q[lose_c]["solution"] == lose_t
        assert r.label == gsm8k.correct_side(r.prompt)
    # both sides are used, roughly evenly (hash of the question)
    assert 0.4 < (pairs["label"] == "A").mean() < 0.6


def test_first_pair_in_condition_order():
    s = {"6b_finetuning": (False, "a"), "6b_verification": (False, "b"),
         "175b_finetuning": (True, "c"), "175b_verification": (False, "d")}
    assert gsm8k.mixed_pairs(s) == [("175b_finetuning", "6b_finetuning")]
    assert gsm8k.mixed_pairs(s, "all") == [("175b_finetuning", c) for c in ("6b_finetuning", "6b_verification",
                                                                             "175b_verification")]
    assert gsm8k.mixed_pairs({c: (True, c) for c in CONDS}) == []


def _write(tmp_path, objs):
    d = tmp_path / "gsm8k"
    d.mkdir()
    (d / "example_model_solutions.jsonl").write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    return d


def test_registry_specs_and_display_names(tmp_path):
    objs = [{"question": f"q{i}", "ground_truth": "A: 1",
             **{c: {"is_correct": (i + k) % 3 == 0, "solution": f"s{i}{c}\nA: {k}"} for k, c in enumerate(CONDS)}}
            for i in range(8)]
    d = _write(tmp_path, objs)
    items = registry.load_set(f"gsm8k:{d}")
    assert len(items) == 32 and items.attrs["judgeaudit"]["name"] == "gsm8k:items"
    assert items.attrs["judgeaudit"]["label_origin"] == gsm8k.LABEL_SOURCE
    pairs = registry.load_set(f"gsm8k:{d}?part=pairs&max_rows=3")
    assert pairs.attrs["judgeaudit"]["name"] == "gsm8k:pairs" and len(pairs) == 3
    assert pairs.attrs["judgeaudit"]["trimmed"]["from_rows"] == 8
    with pytest.raises(InputError):
        registry.load_set(f"gsm8k:{d}?part=nope")
    assert "gsm8k" in set(registry.list_adapters()["name"])


def test_bad_input_names_line_and_field(tmp_path):
    good = {"question": "q", **{c: {"is_correct": True, "solution": "x"} for c in CONDS}}
    bad = {"question": "q2", **{c: {"is_correct": "yes", "solution": "x"} for c in CONDS}}
    d = _write(tmp_path, [good, bad])
    with pytest.raises(InputError) as e:
        gsm8k.load_items(d)
    assert e.value.line == 2 and e.value.field == "6b_finetuning.is_correct"
    d2 = tmp_path / "other"
    d2.mkdir()
    (d2 / "example_model_solutions.jsonl").write_text(json.dumps({"question": "q"}) + "\n")
    with pytest.raises(InputError, match="no model solution fields") as e:
        gsm8k.load_pairs(d2)
    assert e.value.line == 1
    (d2 / "example_model_solutions.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(
        {"question": "q2", "6b_finetuning": {"is_correct": True, "solution": "x"}}) + "\n")
    with pytest.raises(InputError) as e:
        gsm8k.load_pairs(d2)
    assert e.value.field == "6b_verification" and e.value.line == 2
    with pytest.raises(InputError):
        gsm8k.load_items(tmp_path / "missing")


def test_clone_layout_and_conditions_found_in_the_file(tmp_path):
    """A clone of the repository given at its root (the file in grade_school_math/data/, beside
    test.jsonl), with solution fields of other models than OpenAI's four."""
    d = tmp_path / "grade-school-math" / "grade_school_math" / "data"
    d.mkdir(parents=True)
    (d / "test.jsonl").write_text(json.dumps({"question": "q0", "answer": "#### 1"}) + "\n")
    rows = [{"question": "q0", "ground_truth": "A: 1", "model_x": {"is_correct": True, "solution": "x0"},
             "model_y": {"is_correct": False, "solution": "y0"}, "model_z": {"is_correct": False, "solution": "z0"}},
            {"question": "q1", "ground_truth": "A: 2", "model_x": {"is_correct": True, "solution": "x1"},
             "model_y": {"is_correct": True, "solution": "y1"}, "model_z": {"is_correct": True, "solution": "z1"}}]
    (d / "my_solutions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = gsm8k.load_items(tmp_path / "grade-school-math")
    assert items["condition"].tolist() == ["model_x", "model_y", "model_z"] * 2
    assert items["label"].tolist() == ["correct", "incorrect", "incorrect", "correct", "correct", "correct"]
    pairs = gsm8k.load_pairs(tmp_path / "grade-school-math", pairs="all")
    assert pairs["pair_id"].tolist() == ["gsm8k/1/model_x>model_y", "gsm8k/1/model_x>model_z"]
    (d / "my_solutions.jsonl").unlink()
    with pytest.raises(InputError, match="no GSM8K solution file.*found: grade_school_math/"):
        gsm8k.load_items(tmp_path / "grade-school-math")
