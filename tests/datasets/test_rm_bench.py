"""RM-Bench adapter: style-level pairs, label side, length pairs."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import rm_bench
from judgeaudit.errors import InputError

from cap_data import full


def _write(tmp_path):
    d = tmp_path / "data"
    d.mkdir(parents=True)
    items = [{"id": i, "prompt": f"p{i}", "chosen": [f"c{i}-0", f"c{i}-1", f"c{i}-2"],
              "rejected": [f"r{i}-0", f"r{i}-1", f"r{i}-2"], "subset": "alpacaeval", "error_key": "k"}
             for i in range(6)]
    (d / "chat_filtered.json").write_text(json.dumps(items))
    return tmp_path


def test_pairs_put_chosen_on_label_side(tmp_path):
    p = rm_bench.load_pairs(_write(tmp_path), pairs="length")
    assert len(p) == 6 * 4
    for _, r in p.iterrows():
        chosen = r["response_a"] if r["label"] == "A" else r["response_b"]
        rejected = r["response_b"] if r["label"] == "A" else r["response_a"]
        assert chosen.startswith("c") and rejected.startswith("r")
        i = {"concise": 0, "detailed": 1, "markdown": 2}
        assert chosen.endswith(str(i[r["style_chosen"]])) and rejected.endswith(str(i[r["style_rejected"]]))
    assert set(p["variant"]) == {"L0", "L1", "L2", "length"}
    # the side is fixed per base item
    assert (p.groupby("base_id")["label"].nunique() == 1).all()


def test_bad_selection(tmp_path):
    with pytest.raises(InputError):
        rm_bench.load_pairs(_write(tmp_path), pairs="diag")


@pytest.mark.data
def test_full_rm_bench():
    p = rm_bench.load_pairs(full("rm_bench"))
    assert len(p) == (129 + 228 + 284 + 157) * 3
    assert 0.4 < (p["label"] == "A").mean() < 0.6


def _items(prefix, n, **extra):
    return [{"id": i, "prompt": f"{prefix}{i}", "chosen": [f"c{i}-0", f"c{i}-1", f"c{i}-2"],
             "rejected": [f"r{i}-0", f"r{i}-1", f"r{i}-2"], **extra} for i in range(n)]


def test_every_file_of_the_schema_is_read(tmp_path):
    """A domain file under a name the shipped copy does not have, and a combined file whose chat
    items repeat chat_filtered.json (skipped, counted) and whose math items are new."""
    d = _write(tmp_path) / "data"  # chat_filtered.json: 6 items
    (d / "reasoning_filtered.json").write_text(json.dumps(_items("r", 2)))
    combined = _items("p", 6, domain="chat") + _items("m", 3, domain="math")
    (d / "total_dataset.json").write_text(json.dumps(combined))
    (d / "config.json").write_text(json.dumps({"not": "items"}))
    p = rm_bench.load_pairs(tmp_path)
    assert (p.groupby("domain").size() / 3).to_dict() == {"chat": 6, "math": 3, "reasoning": 2}
    assert p.attrs["rm_bench_skipped"] == {str(d / "total_dataset.json"): 6}
    assert rm_bench.domains_found(tmp_path) == ["chat", "math", "reasoning"]
    assert len(rm_bench.load_pairs(d / "reasoning_filtered.json")) == 2 * 3
    assert set(rm_bench.load_pairs(d, domains=["math"])["base_id"]) == {f"rm_bench/math/{i}" for i in range(3)}


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError) as e:
        rm_bench.load_pairs(tmp_path)
    assert "no RM-Bench file" in str(e.value) and "found: notes.txt" in str(e.value)
    with pytest.raises(InputError, match="found: chat"):
        rm_bench.load_pairs(_write(tmp_path / "x"), domains=["math"])
