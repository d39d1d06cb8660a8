"""FRANK adapter: every annotated (article, system) joins to its summary text."""

from __future__ import annotations

import json

import pytest

from judgeaudit.datasets import frank


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
