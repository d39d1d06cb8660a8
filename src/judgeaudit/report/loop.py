"""The loop's HTML report: net per regulator with its interval, pass rate by round, the
accounting table, arm differences and the keyword table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.loop.engine import NO_USABLE_REPORT as NO_REPORT
from judgeaudit.report.html import Section, esc, figure_html, table_html, write_page


NO_RATE = "none (a score names no constraint)"
DASH_NOTE = ("— marks a value that is not defined: a rate whose denominator is empty (precision of a regulator "
             "that flagged nothing, false alarms with no satisfied constraint, a break rate with no flagged or no "
             "unflagged constraint), a change in the initial round (nothing revised yet), or a regulator with no "
             "usable report.")


def _usable(r: dict[str, Any]) -> bool:
    return r.get("status") != NO_REPORT


def summary_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per regulator: fixed/broken/net (final round vs initial), summed over rounds, the
    rates, and the report votes (failed calls, parse failures, usable). An arm without a usable
    report shows no numbers; a scalar arm's rates read ``NO_RATE``."""
    rows = []
    multi = result.get("rounds", 1) > 1
    for name, r in result["regulators"].items():
        row: dict[str, Any] = {"regulator": name}
        if _usable(r):
            row.update({"fixed": r["fixed"], "broken": r["broken"], "net": r["net"], "net 95% lo": r["net_ci"][0],
                        "net 95% hi": r["net_ci"][1]})
            if multi:
                row.update({"fixed, summed over rounds": r["fixed_summed"],
                            "broken, summed over rounds": r["broken_summed"]})
            row.update({"acted on": r["acted_on"], "pass rate": r["pass_rate"]})
            row.update({label: (NO_RATE if r[k] is None else r[k]) for label, k in (
                ("precision", "precision"), ("false alarms on satisfied", "false_alarm_rate"),
                ("break rate flagged", "break_rate_flagged"), ("break rate unflagged", "break_rate_unflagged"))})
        else:
            row["fixed"] = NO_REPORT
        if "judge_votes" in r:
            row.update({"report votes": r["judge_votes"], "failed calls": r["failed_calls"],
                        "parse failures": r["parse_failures"], "usable votes": r["usable_votes"]})
        rows.append(row)
    return pd.DataFrame(rows)


def rounds_frame(result: dict[str, Any]) -> pd.DataFrame:
    """Pass rate (strict and loose), net and acted-on per regulator and round (round 0: the initial outputs)."""
    b = result["before"]
    rows = [{"regulator": "(initial)", "round": 0, "pass rate": b["pass_rate"], "loose pass rate": b["loose_pass_rate"],
             "net": 0.0, "fixed this round": "—", "broken this round": "—", "acted on": "—"}]
    for name, r in result["regulators"].items():
        for x in r["rounds"] if _usable(r) else ():
            rows.append({"regulator": name, "round": x["round"], "pass rate": x["pass_rate"],
                         "loose pass rate": x["loose_pass_rate"], "net": x["net"],
                         "fixed this round": x["fixed_this_round"], "broken this round": x["broken_this_round"],
                         "acted on": x["acted_on"]})
    return pd.DataFrame(rows)


def _figures(result: dict[str, Any]) -> tuple[str, str]:
    import plotly.graph_objects as go

    regs = result["regulators"]
    names = [n for n in regs if _usable(regs[n])]
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
    bad = {n for n, r in result["regulators"].items() if not _usable(r)}
    diffs = pd.DataFrame([{"arms": k, "net difference": v["net"], "95% lo": v["ci"][0], "95% hi": v["ci"][1]}
                          for k, v in result["differences"].items() if not bad & set(k.split(" - "))])
    sp = result["precision_vs_net"]
    kw = pd.DataFrame([{"constraint type": k, "keywords": ", ".join(v)} for k, v in result["keyword_table"].items()])
    sections = [
        Section("Net per regulator",
                f"<p>Task <b>{esc(result['task'])}</b>: {b['n_responses']} responses, {b['n_units']} units, "
                f"pass rate before {b['pass_rate']:.3f}. {result['rounds']} round(s), {result['votes']} vote(s) per "
                f"report.</p>" + f1 + table_html(summary_frame(result), dash_note=DASH_NOTE),
                banners=[f"!{n}: {NO_REPORT} — every one of its {r.get('judge_votes', 0)} judge votes failed "
                         f"({r.get('failed_calls', 0)}) or did not parse ({r.get('parse_failures', 0)}); its "
                         "fixed/broken/net are no finding" for n, r in result["regulators"].items() if not _usable(r)]
                + [f"{n}: {d}" for n, d in result["regulator_descriptions"].items()]),
        Section("Pass rate by round", f2 + table_html(rounds_frame(result), dash_note=DASH_NOTE)),
        Section("Arm differences", table_html(diffs, dash_note=DASH_NOTE)
                + f"<p>Spearman ρ of report precision vs net across "
                f"{sp.get('n', 0)} regulators: {sp.get('rho', float('nan')):.3f}, one-sided permutation p = "
                f"{sp.get('p', float('nan')):.3f}.</p>"),
        Section("Keyword table (free text → constraint ids)", table_html(kw)),
    ]
    return sections


def write_report(result: dict[str, Any], out: str | Path) -> Path:
    return write_page(Path(out) / "report.html", f"judgeaudit loop: {result['task']}", loop_sections(result))
