"""The loop's HTML report: net per regulator with its interval, pass rate by round, the
accounting table, arm differences and the keyword table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.report.html import Section, esc, figure_html, table_html, write_page


def summary_frame(result: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for name, r in result["regulators"].items():
        rows.append({"regulator": name, "fixed": r["fixed"], "broken": r["broken"], "net": r["net"],
                     "net 95% lo": r["net_ci"][0], "net 95% hi": r["net_ci"][1], "acted on": r["acted_on"],
                     "pass rate": r["pass_rate"], "precision": r["precision"],
                     "false alarms on satisfied": r["false_alarm_rate"],
                     "break rate flagged": r["break_rate_flagged"], "break rate unflagged": r["break_rate_unflagged"]})
    return pd.DataFrame(rows)


def rounds_frame(result: dict[str, Any]) -> pd.DataFrame:
    """Pass rate (strict and loose), net and acted-on per regulator and round (round 0: the initial outputs)."""
    b = result["before"]
    rows = [{"regulator": "(initial)", "round": 0, "pass rate": b["pass_rate"], "loose pass rate": b["loose_pass_rate"],
             "net": 0.0, "fixed this round": "—", "broken this round": "—", "acted on": "—"}]
    for name, r in result["regulators"].items():
        for x in r["rounds"]:
            rows.append({"regulator": name, "round": x["round"], "pass rate": x["pass_rate"],
                         "loose pass rate": x["loose_pass_rate"], "net": x["net"],
                         "fixed this round": x["fixed_this_round"], "broken this round": x["broken_this_round"],
                         "acted on": x["acted_on"]})
    return pd.DataFrame(rows)


def _figures(result: dict[str, Any]) -> tuple[str, str]:
    import plotly.graph_objects as go

    names = list(result["regulators"])
    regs = result["regulators"]
    nets = [regs[n]["net"] for n in names]
    fig = go.Figure(go.Bar(x=names, y=nets, error_y={"type": "data", "symmetric": False,
                                                     "array": [regs[n]["net_ci"][1] - regs[n]["net"] for n in names],
                                                     "arrayminus": [regs[n]["net"] - regs[n]["net_ci"][0]
                                                                    for n in names]}))
    fig.update_layout(title="net = (fixed − broken)/N, final round, 95% bootstrap interval", yaxis_title="net",
                      height=380, margin={"t": 50, "b": 40})
    fig2 = go.Figure()
    before = result["before"]["pass_rate"]
    for n in names:
        xs = [0] + [r["round"] for r in regs[n]["rounds"]]
        ys = [before] + [r["pass_rate"] for r in regs[n]["rounds"]]
        fig2.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=n))
    fig2.update_layout(title="pass rate by round (round 0 = initial outputs)", xaxis_title="round",
                       yaxis_title="unit pass rate", height=380, margin={"t": 50, "b": 40})
    return figure_html(fig), figure_html(fig2)


def loop_sections(result: dict[str, Any]) -> list[Section]:
    """The loop report's sections: net per regulator, pass rate by round, arm differences, keywords."""
    b = result["before"]
    f1, f2 = _figures(result)
    diffs = pd.DataFrame([{"arms": k, "net difference": v["net"], "95% lo": v["ci"][0], "95% hi": v["ci"][1]}
                          for k, v in result["differences"].items()])
    sp = result["precision_vs_net"]
    kw = pd.DataFrame([{"constraint type": k, "keywords": ", ".join(v)} for k, v in result["keyword_table"].items()])
    sections = [
        Section("Net per regulator",
                f"<p>Task <b>{esc(result['task'])}</b>: {b['n_responses']} responses, {b['n_units']} units, "
                f"pass rate before {b['pass_rate']:.3f}. {result['rounds']} round(s), {result['votes']} vote(s) per "
                f"report.</p>" + f1 + table_html(summary_frame(result)),
                banners=[f"{n}: {d}" for n, d in result["regulator_descriptions"].items()]),
        Section("Pass rate by round", f2 + table_html(rounds_frame(result))),
        Section("Arm differences", table_html(diffs) + f"<p>Spearman ρ of report precision vs net across "
                f"{sp.get('n', 0)} regulators: {sp.get('rho', float('nan')):.3f}, one-sided permutation p = "
                f"{sp.get('p', float('nan')):.3f}.</p>"),
        Section("Keyword table (free text → constraint ids)", table_html(kw)),
    ]
    return sections


def write_report(result: dict[str, Any], out: str | Path) -> Path:
    return write_page(Path(out) / "report.html", f"judgeaudit loop: {result['task']}", loop_sections(result))
