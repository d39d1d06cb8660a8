"""The page plumbing every report shares (plotly.js inline or from the CDN, tables that scroll) and
the figures whose layout hid what they show (the validation-power legend over the set labels, CAP
radars with fewer than three axes)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from judgeaudit.analyses.cap import cap_profile
from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell
from judgeaudit.errors import InputError
from judgeaudit.report import html as page
from judgeaudit.report.cap import radar_figure


def _figure_section() -> page.Section:
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    return page.Section("F", page.figure_html(fig) + page.table_html(pd.DataFrame({"x": [1.0]})))


def test_plotly_inline_by_default_and_cdn_on_request():
    """Inline (the default) embeds plotly.js once, so the page draws offline with no script source;
    cdn references the plotly CDN at the installed plotly's version and is a small page."""
    from plotly.offline import get_plotlyjs_version

    sec = _figure_section()
    assert page.plotly_mode() == "inline"
    inline = page.render_page("t", [sec])
    cdn = page.render_page("t", [sec], plotly="cdn")
    from plotly.offline import get_plotlyjs

    assert '<script src="https://cdn.plot.ly/plotly-' not in inline and get_plotlyjs()[:2000] in inline
    assert inline.count("Plotly.newPlot") == 1 and len(inline) > 3_000_000      # plotly.js itself is in it
    assert f'<script src="https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"' in cdn
    assert len(cdn) < 20_000 and "Plotly.newPlot" in cdn
    # a page without figures carries no plotly.js in either mode
    plain = page.Section("T", page.table_html(pd.DataFrame({"x": [1]})))
    assert len(page.render_page("t", [plain])) < 5_000
    assert "cdn.plot.ly" not in page.render_page("t", [plain], plotly="cdn")
    # the process-wide mode (the CLI's --plotly) is what write_page uses
    try:
        page.set_plotly_mode("cdn")
        assert "cdn.plot.ly" in page.render_page("t", [sec])
    finally:
        page.set_plotly_mode("inline")
    with pytest.raises(InputError) as e:
        page.set_plotly_mode("remote")
    assert e.value.field == "plotly"


def test_every_command_honours_the_cli_plotly_option(tmp_path):
    """`judgeaudit --plotly cdn vp audit …` writes a small report that loads plotly.js from the CDN;
    without the option the report is self-contained (the default is restored on the next run)."""
    from judgeaudit.cli import app

    rng = np.random.default_rng(0)
    p = tmp_path / "pairs.jsonl"
    rows = [{"q": f"q{i}", "ra": "w " * int(rng.integers(3, 30)), "rb": "w " * int(rng.integers(3, 30)),
             "pref": "AB"[i % 2]} for i in range(30)]
    p.write_text("\n".join(pd.Series(rows).map(lambda r: __import__("json").dumps(r))) + "\n")
    spec = f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref"
    args = ["vp", "audit", "--set", spec, "--permutations", "0", "--no-transfer", "--mode", "paired"]
    r = CliRunner().invoke(app, ["--plotly", "cdn", *args, "--out", str(tmp_path / "cdn")])
    assert r.exit_code == 0, r.output
    small = (tmp_path / "cdn" / "report.html").read_text()
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "inline")])
    assert r.exit_code == 0, r.output
    big = (tmp_path / "inline" / "report.html").read_text()
    assert '<script src="https://cdn.plot.ly/plotly-' in small and len(small) < 100_000
    assert '<script src="https://cdn.plot.ly/plotly-' not in big and len(big) > 3_000_000
    r = CliRunner(env={"JUDGEAUDIT_PLOTLY": "cdn"}).invoke(app, [*args, "--out", str(tmp_path / "env")])
    assert r.exit_code == 0 and len((tmp_path / "env" / "report.html").read_text()) < 100_000


def test_wide_tables_scroll_inside_their_container():
    wide = pd.DataFrame({f"a rather long column name {i}": [1.0] for i in range(40)})
    frag = page.table_html(wide)
    assert frag.startswith('<div class="table-wrap">') and frag.endswith("</div>")
    html = page.render_page("t", [page.Section("W", frag)])
    assert re.search(r"\.table-wrap\{[^}]*overflow-x:auto", html)


def test_vp_legend_sits_above_the_plot_not_on_the_set_labels():
    from judgeaudit.analyses.validation_power import audit_validation_power
    from judgeaudit.report.validation_power import vp_figure

    rows = [{"pair_id": str(i), "prompt": f"q{i}", "response_a": "word " * (5 + i % 7), "response_b": "w " * 3,
             "label": "AB"[i % 2], "group": f"q{i}", "source_set": "s", "subset": None, "condition_a": None,
             "condition_b": None, "meta": {}} for i in range(40)]
    res = audit_validation_power({"a long label set name": pd.DataFrame(rows)}, n_permutations=0, n_boot=10,
                                 transfer=False)
    lay = vp_figure(res).layout
    # plotly's horizontal legend defaults to below the x axis, over the tick labels
    assert lay.legend.orientation == "h" and lay.legend.y >= 1 and lay.legend.yanchor == "bottom"
    assert lay.xaxis.automargin is True


COV = {"C1": CoverageCell("direct", "first half; PA", ("s1",)), "C2": UNAVAILABLE, "C3": UNAVAILABLE,
       "C4": UNAVAILABLE, "C5": UNAVAILABLE, "C6": UNAVAILABLE, "C7": CoverageCell("direct", "A/B and B/A; BC"),
       "C8": UNAVAILABLE}


def _cap(cov):
    n = 20
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "a",
                          "response_b": "b", "label": ["A", "B"] * (n // 2), "group": None, "source_set": "s",
                          "subset": ["s1", "s2"] * (n // 2), "condition_a": None, "condition_b": None,
                          "meta": [{}] * n})
    t = pd.DataFrame({"pair_id": pairs["pair_id"], "judge_id": "j", "family": "f", "choice_ab": "A",
                      "choice_ba": ["A", "B"] * (n // 2), "rationale_ab": "r", "rationale_ba": "r",
                      "failure_ab": None, "failure_ba": None})
    return cap_profile(pairs, {"j": t}, {"s": cov}, n_boot=5, seed=0)


def test_cap_profile_below_three_axes_is_drawn_as_bars():
    """Two measurable conditions (C1, C7) make a radar of a line: bars instead, one per judge and
    condition, on the accuracy scale; three or more keep the radar (Fig. 3)."""
    fig = radar_figure(_cap(COV), "s")
    assert [tr.type for tr in fig.data] == ["bar"]
    assert list(fig.data[0].x) == ["C1 " + fig.data[0].x[0].split(" ", 1)[1], fig.data[0].x[1]]
    assert [x.split()[0] for x in fig.data[0].x] == ["C1", "C7"]
    assert tuple(fig.layout.yaxis.range) == (0, 100)
    three = {**COV, "C2": CoverageCell("direct", "second half; PA", ("s2",))}
    fig3 = radar_figure(_cap(three), "s")
    assert [tr.type for tr in fig3.data] == ["scatterpolar"] and len(fig3.data[0].theta) == 3 + 1
