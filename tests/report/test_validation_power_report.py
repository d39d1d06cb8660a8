"""The validation-power report sections: Table 7 shape, provenance row last, figure present."""

from __future__ import annotations

import pandas as pd

from judgeaudit.analyses.validation_power import audit_validation_power
from judgeaudit.report.html import render_page
from judgeaudit.report.validation_power import table7_frame, vp_sections


def _pairs(n, prov):
    rows = []
    for i in range(n):
        a, b = "word " * (5 + i % 7), "word " * (3 + i % 11)
        rows.append({"pair_id": str(i), "prompt": f"q{i}", "response_a": a + ("Gold" if prov else ""),
                     "response_b": b, "label": "A", "group": f"q{i}", "source_set": "s", "subset": None,
                     "condition_a": "gold" if prov else None, "condition_b": "gen" if prov else None, "meta": {}})
    return pd.DataFrame(rows)


def test_sections_have_table7_shape_and_contrast_row_last():
    res = audit_validation_power({"prov": _pairs(40, True), "human": _pairs(40, False)}, n_permutations=2,
                                 n_boot=50, transfer=False,
                                 set_meta={"prov": {"label_origin": "provenance"}, "human": {"label_origin": "human vote"}})
    t7 = table7_frame(res)
    assert t7["label set"].tolist() == ["human", "prov"]
    assert {"n", "a_imp (item κ)", "pairs", "κ (paired)", "accuracy (paired)"} <= set(t7.columns)
    secs = vp_sections(res)
    assert secs[0].title.endswith("(Table 7)")
    html = render_page("t", secs)
    assert "plotly" in html and "provenance_recoverable" in html
