"""FRANK adapter: every annotated (article, system) joins to its summary text."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import frank
from judgeaudit.errors import InputError


@pytest.mark.data
def test_real_files_parse_with_provenance_counts(data_dir):
    root = data_dir / "frank"
    prov = {f["path"]: f["records"] for f in json.loads((root / "PROVENANCE.json").read_text())["files"]}
    df = frank.load_items(root)
    assert len(df) == prov["human_annotations.json"] == 2246
    ann = json.loads((root / "human_annotations.json").read_text())
    assert (df["label"] == "no_error").sum() == sum(a["Factuality"] == 1.0 for a in ann)
    assert df["group"].nunique() == len({a["hash"] for a in ann})
    assert set(df["condition"]) == {a["model_name"] for a in ann}
    assert (df["text"].str.len() > 0).all()


def _ann(h, m, fact):
    return {"hash": h, "model_name": m, "dataset": "bbc", "Factuality": fact, "split": "test"}


def test_repository_layout_found_by_fields(tmp_path):
    """The repository's own layout: data/human_annotations.json with data/benchmark_data.json
    (one record per summary) as the text source, given at the repository root."""
    d = tmp_path / "frank" / "data"
    d.mkdir(parents=True)
    (d / "human_annotations.json").write_text(json.dumps(
        [_ann("1", "BERTS2S", 1.0), _ann("1", "PtGen", 0.5), _ann("2", "BERTS2S", 0.0)]))
    (d / "benchmark_data.json").write_text(json.dumps(
        [{"hash": h, "model_name": m, "article": "a", "summary": f"{h}-{m} summary", "reference": "r"}
         for h, m in (("1", "BERTS2S"), ("1", "PtGen"), ("2", "BERTS2S"))]))
    (d / "baseline_factuality_metrics_outputs.json").write_text(json.dumps(
        [{"hash": "1", "model_name": "PtGen", "QAGS": 0.1}]))
    for root in (tmp_path / "frank", d, d / "human_annotations.json"):
        df = frank.load_items(root)
        assert df["label"].tolist() == ["no_error", "error", "error"]
        assert df["text"].tolist() == ["1-BERTS2S summary", "1-PtGen summary", "2-BERTS2S summary"]
    # per-article files (the first commit's data/articles-*-json/) as the text source
    (d / "benchmark_data.json").unlink()
    (d / "articles-json").mkdir()
    for h in ("1", "2"):
        (d / "articles-json" / f"{h}.json").write_text(json.dumps(
            {"hash": h, "article": "a", "BERTS2S": f"{h} b", "PtGen": f"{h} p"}, indent=1))
    assert frank.load_items(tmp_path / "frank")["text"].tolist() == ["1 b", "1 p", "2 b"]


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="no FRANK annotation file.*found: notes.txt"):
        frank.load_items(tmp_path)
