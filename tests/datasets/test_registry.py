"""Registry and load_set specs: every adapter is listed, specs parse, trimming is deterministic."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import registry
from judgeaudit.errors import InputError


def test_registry_lists_every_adapter():
    names = set(registry.ADAPTERS)
    assert names >= {"judgebench", "llmbar", "rm_bench", "mt_bench", "halueval", "frank", "jsonl", "csv",
                     "parquet", "hf"}
    assert set(registry.list_adapters()["name"]) == names


def test_spec_parsing_and_errors():
    assert registry.parse_spec("llmbar:/x/y?subset=Natural") == ("llmbar", "/x/y", {"subset": "Natural"})
    assert registry.parse_spec("jsonl:f.jsonl?text=a&label=b&group=c")[2] == {"text": "a", "label": "b", "group": "c"}
    for bad in ("nope:/x", "llmbar", "llmbar:"):
        with pytest.raises(InputError):
            registry.parse_spec(bad)


def test_load_set_generic_with_deterministic_trim(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps({"t": f"text {i}", "y": i % 2, "g": f"g{i // 4}"}) for i in range(40)) + "\n")
    spec = f"jsonl:{p}?text=t&label=y&group=g&max_rows=10&name=mine"
    a, b = registry.load_set(spec), registry.load_set(spec)
    assert len(a) <= 10 and a["item_id"].tolist() == b["item_id"].tolist()
    assert a.groupby("group").size().eq(4).all()  # whole groups kept
    meta = a.attrs["judgeaudit"]
    assert meta["name"] == "mine" and meta["trimmed"]["from_rows"] == 40


@pytest.mark.data
def test_load_set_on_every_public_set(data_dir):
    for spec, n in ((f"llmbar:{data_dir / 'llmbar'}?subset=Natural", 100),
                    (f"judgebench:{data_dir / 'judgebench'}", 620),
                    (f"mt_bench:{data_dir / 'mt_bench'}", 73),
                    (f"halueval:{data_dir / 'halueval'}?part=qa", 500),
                    (f"frank:{data_dir / 'frank'}", 2246)):
        assert len(registry.load_set(spec)) == n, spec


@pytest.mark.data
def test_a_folder_of_several_label_sets_is_read_set_by_set_unless_pooled(data_dir):
    """`llmbar:ROOT` holds LLMBar's author-labelled sets and the human-majority MT-Bench and LLMEval²
    sets, `judgebench:ROOT` the GPT-4o and Claude pairs: Table 7 (construct-validity.txt §5.4) is per
    set, so ``load_sets`` gives one table per subset / response model (6 and 2; the whole folder was
    one pooled set of 773 / 620 pairs), and ``?pool=true`` the pooled table, recorded as pooled."""
    parts = registry.load_sets(f"llmbar:{data_dir / 'llmbar'}")
    names = [p.attrs["judgeaudit"]["name"] for p in parts]
    assert names == ["llmbar:Natural", "llmbar:Adversarial/Neighbor", "llmbar:Adversarial/GPTInst",
                     "llmbar:Adversarial/GPTOut", "llmbar:MT-Bench", "llmbar:LLMEval2"]
    assert [len(p) for p in parts] == [100, 134, 92, 47, 200, 200]
    origins = {p.attrs["judgeaudit"]["name"]: p.attrs["judgeaudit"]["label_origin"] for p in parts}
    assert origins["llmbar:Natural"] == "author_gold" and origins["llmbar:MT-Bench"] == "human_majority"
    assert all(p.attrs["judgeaudit"]["split_by"] == "subset" and p["subset"].nunique() == 1 for p in parts)
    # each part is the same rows a ?subset= spec reads, and max_rows trims each part
    one = registry.load_set(f"llmbar:{data_dir / 'llmbar'}?subset=MT-Bench")
    assert parts[4]["pair_id"].tolist() == one["pair_id"].tolist()
    trimmed = registry.load_sets(f"llmbar:{data_dir / 'llmbar'}?max_rows=50")
    assert len(trimmed) == 6 and all(len(p) <= 50 and "trimmed" in p.attrs["judgeaudit"] for p in trimmed[:3])
    jb = registry.load_sets(f"judgebench:{data_dir / 'judgebench'}")
    assert {p.attrs["judgeaudit"]["name"]: len(p) for p in jb} == {
        "judgebench:claude-3-5-sonnet-20240620": 270, "judgebench:gpt-4o-2024-05-13": 350}
    (pooled,) = registry.load_sets(f"llmbar:{data_dir / 'llmbar'}?pool=true")
    m = pooled.attrs["judgeaudit"]
    assert len(pooled) == 773 and m["name"] == "llmbar" and m["pooled"] is True
    assert m["pooled_over"]["subset"][0] == "Natural" and len(m["pooled_over"]["subset"]) == 6
    # one set in the spec: nothing to split or pool; a bad pool value names the field
    (nat,) = registry.load_sets(f"llmbar:{data_dir / 'llmbar'}?subset=Natural")
    assert nat.attrs["judgeaudit"]["name"] == "llmbar:Natural" and nat.attrs["judgeaudit"]["pooled"] is False
    with pytest.raises(InputError) as e:
        registry.load_sets(f"llmbar:{data_dir / 'llmbar'}?pool=maybe")
    assert e.value.field == "pool"
