"""Generic adapter: column mappings in item and paired mode, label encodings, errors with lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgeaudit.datasets import generic
from judgeaudit.errors import InputError


def test_item_mapping_jsonl(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(json.dumps({"resp": f"t{i}", "y": i % 2, "doc": f"d{i // 2}", "ann": ["1", "0"]})
                           for i in range(4)) + "\n")
    df = generic.load_table(p, {"text": "resp", "label": "y", "group": "doc", "human": "ann"})
    assert list(df.columns[:5]) == ["item_id", "text", "label", "group", "condition"]
    assert df["label"].tolist() == ["0", "1", "0", "1"] and df["group"].tolist() == ["d0", "d0", "d1", "d1"]
    assert df["human_labels"].iloc[0] == ["1", "0"]


def test_paired_mapping_csv_label_encodings(tmp_path):
    p = tmp_path / "p.csv"
    pd.DataFrame({"q": ["a", "b", "c", "d"], "x": ["1", "2", "3", "4"], "z": ["5", "6", "7", "8"],
                  "w": ["A", "2", "a>b", "tie"]}).to_csv(p, index=False)
    df = generic.load_table(p, {"prompt": "q", "response_a": "x", "response_b": "z", "label": "w"})
    assert df["label"].tolist() == ["A", "B", "A", "tie"]
    assert df["group"].tolist() == ["a", "b", "c", "d"]


def test_bad_label_and_missing_column_name_line_and_field(tmp_path):
    p = tmp_path / "p.csv"
    pd.DataFrame({"x": ["1", "2"], "z": ["3", "4"], "w": ["A", "maybe"]}).to_csv(p, index=False)
    with pytest.raises(InputError) as e:
        generic.load_table(p, {"response_a": "x", "response_b": "z", "label": "w"})
    assert e.value.line == 3 and e.value.field == "w"
    with pytest.raises(InputError) as e:
        generic.load_table(p, {"text": "nope", "label": "w"})
    assert e.value.field == "nope"
    with pytest.raises(InputError):
        generic.load_table(p, {"colour": "x"})


def test_chosen_rejected_table_becomes_pairs(tmp_path):
    p = tmp_path / "rb.jsonl"
    p.write_text("\n".join(json.dumps({"prompt": f"p{i}", "chosen": f"good{i}", "rejected": f"bad{i}"})
                           for i in range(10)) + "\n")
    df = generic.load_table(p)
    for r in df.itertuples():
        assert (r.response_a if r.label == "A" else r.response_b).startswith("good")
    assert set(df["label"]) == {"A", "B"}
