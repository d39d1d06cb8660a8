"""The migrate page: the verdict, each quantity against its margin (a forest plot and a table), the link with
its band over the anchors, and the Bland–Altman plot of the per-anchor differences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.report.html import Section, esc, figure_html, table_html, write_page

_STATUS = {"equivalent": "equivalent within the margin", "not_equivalent": "not shown equivalent",
           "blind": "blind: too few anchors to decide", "descriptive": "descriptive (no margin)",
           "not_computable": "not computable on these anchors"}


def quantities_frame(result: Any) -> pd.DataFrame:
    rows = []
    for part, qs in (("raw", result.raw), ("linked (held-out)", result.linked), ("audit", result.audits)):
        for q in qs:
            lo, hi = q.ci
            rows.append({"grades": part, "quantity": q.label, "estimate": q.estimate, "95% CI low": lo,
                         "95% CI high": hi, "margin": q.margin, "test": q.test.replace("_", " "),
                         "p (TOST)": q.p, "status": _STATUS[q.status], "anchors needed": q.anchors_needed,
                         "unit": f"{q.n_units} {q.unit}s"})
    return pd.DataFrame(rows)


def _forest(result: Any) -> str:
    import plotly.graph_objects as go

    fig = go.Figure()
    rows = [(p, q) for p, qs in (("raw", result.raw), ("linked", result.linked)) for q in qs
            if q.margin is not None and q.estimate is not None and None not in q.ci]
    if not rows:
        return ""
    labels = [f"{p}: {q.name}" for p, q in rows]
    est = [q.estimate for _, q in rows]
    fig.add_trace(go.Scatter(x=est, y=labels, mode="markers", name="estimate (95% CI)", marker={"size": 9},
                             error_x={"type": "data", "symmetric": False,
                                      "array": [q.ci[1] - q.estimate for _, q in rows],
                                      "arrayminus": [q.estimate - q.ci[0] for _, q in rows]}))
    for (p, q), lab in zip(rows, labels, strict=True):
        lo = -q.margin
        hi = q.margin if q.test == "two_sided" else None
        fig.add_trace(go.Scatter(x=[lo] + ([hi] if hi is not None else []), y=[lab] * (2 if hi is not None else 1),
                                 mode="markers", marker={"symbol": "line-ns-open", "size": 18, "color": "#d9534f"},
                                 name="margin", showlegend=(p, q) == rows[0]))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    fig.update_layout(height=120 + 40 * len(rows), margin={"l": 10, "r": 10, "t": 30, "b": 40},
                      xaxis_title="difference (new − old); red ticks: the margin", yaxis={"automargin": True},
                      legend={"orientation": "h", "y": -0.25})
    return figure_html(fig)


def _link_figure(link: Any, table: pd.DataFrame) -> str:
    import plotly.graph_objects as go

    fig = go.Figure()
    ok = table["old"].notna() & table["new"].notna()
    jitter = np.random.default_rng(0).uniform(-0.15, 0.15, int(ok.sum()))
    fig.add_trace(go.Scatter(x=table.loc[ok, "new"] + jitter, y=table.loc[ok, "old"] + jitter[::-1], mode="markers",
                             name="anchors (jittered)", marker={"size": 4, "opacity": 0.35, "color": "#888"}))
    fig.add_trace(go.Scatter(x=link.x + link.x[::-1], y=link.band_hi + link.band_lo[::-1], fill="toself",
                             name=f"{link.level:.0%} band", line={"width": 0}, fillcolor="rgba(31,119,180,0.2)"))
    fig.add_trace(go.Scatter(x=link.x, y=link.y, mode="lines+markers", name="link", line={"color": "#1f77b4"}))
    fig.update_layout(height=420, xaxis_title=f"new judge's grade ({link.new_judge})",
                      yaxis_title=f"old judge's scale ({link.old_judge})", margin={"t": 30},
                      legend={"orientation": "h", "y": -0.2})
    return figure_html(fig)


def _bland_altman(result: Any, table: pd.DataFrame) -> str:
    import plotly.graph_objects as go

    q = result.quantity("bland_altman")
    if q is None or q.estimate is None:
        return ""
    ok = table["old"].notna() & table["new"].notna()
    mean = (table.loc[ok, "old"] + table.loc[ok, "new"]) / 2
    diff = table.loc[ok, "new"] - table.loc[ok, "old"]
    jitter = np.random.default_rng(1).uniform(-0.12, 0.12, int(ok.sum()))
    fig = go.Figure(go.Scatter(x=mean + jitter, y=diff + jitter[::-1], mode="markers", name="anchors (jittered)",
                               marker={"size": 4, "opacity": 0.35, "color": "#888"}))
    bias = float(diff.mean())
    for y, name in ((bias, "mean difference"), (q.extra["lower"], "lower limit"), (q.extra["upper"], "upper limit")):
        fig.add_hline(y=y, line_dash="dash" if name != "mean difference" else "solid",
                      annotation_text=f"{name} {y:+.2f}", annotation_position="top left")
    for lo, hi in (q.extra["lower_ci"], q.extra["upper_ci"]):
        if lo is not None and hi is not None:
            fig.add_hrect(y0=lo, y1=hi, fillcolor="rgba(217,83,79,0.12)", line_width=0)
    fig.update_layout(height=380, xaxis_title="mean of the two grades", yaxis_title="new − old", margin={"t": 30},
                      showlegend=False)
    return figure_html(fig)


def migrate_sections(result: Any, link: Any, table: pd.DataFrame) -> list[Section]:
    verdict = (f"<p><b>{esc(result.verdict)}</b>: can {esc(result.new_judge)} replace {esc(result.old_judge)} on "
               f"these {result.n_anchors} anchors ({result.n_clusters} {esc(result.unit)}s resampled)?</p>"
               + "".join(f"<p>{esc(r)}</p>" for r in result.reasons))
    banners = [f"!{n}" for n in result.notes]
    sections = [Section("Verdict", verdict, banners),
                Section("Quantities against their margins", _forest(result) + table_html(quantities_frame(result)))]
    if link is not None:
        sections.append(Section("The link", f"<p class='note'>{esc(link.method)} link; {esc(link.definition)}. Hash: {esc(link.hash)} — "
                                            "every verdict linked by <code>judgeaudit migrate apply</code> records "
                                            "it.</p>" + _link_figure(link, table)))
    ba = _bland_altman(result, table)
    if ba:
        sections.append(Section("Bland–Altman", ba))
    defs = "".join(f"<li><b>{esc(q.name)}</b>: {esc(q.definition)}</li>"
                   for q in result.raw + result.linked + result.audits)
    defs += "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in result.definitions.items())
    sections.append(Section("Definitions", f"<ul>{defs}</ul>"))
    return sections


def write_migrate_html(result: Any, link: Any, table: pd.DataFrame, path: str | Path) -> Path:
    return write_page(path, f"migrate — {result.old_judge} → {result.new_judge}: {result.verdict}",
                      migrate_sections(result, link, table), subtitle=f"form: {result.form}")
