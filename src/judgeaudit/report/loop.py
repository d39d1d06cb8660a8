"""The loop's HTML report: net per regulator with its interval, pass rate by round, the
accounting table, arm differences and the keyword table, read from the run's result through its type
(``loop.schema.LoopFile``: a key renamed or missing is an error naming it, not an empty cell)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.loop.engine import NO_USABLE_REPORT as NO_REPORT
from judgeaudit.loop.schema import LoopFile, Regulator
from judgeaudit.report.html import Headline, Section, esc, figure_html, legend_below, of_analysis, table_html, write_page
from judgeaudit.report.html import units_section as units_section_of


MIN_RESPONSES_FOR_INTERVAL = 4
"""Fewest responses a bootstrap interval over responses is reported on: with n responses the resamples
repeating one response carry n^(1−n) of the bootstrap's mass, above the 2.5% tail for n ≤ 3, so the
"95% interval" would be the range of single responses."""
MIN_REGULATORS_FOR_RHO = 3
"""Fewest regulators (with a defined precision) a rank correlation across regulators is reported on:
with two, ρ is ±1 whatever the data."""

NO_RATE = "none (a score names no constraint)"
DASH_NOTE = ("— marks a value that is not defined: a rate whose denominator is empty (precision of a regulator "
             "that flagged nothing, false alarms with no satisfied constraint, a break rate with no flagged or no "
             "unflagged constraint), a change in the initial round (nothing revised yet), or a regulator with no "
             "usable report.")


def _usable(r: Regulator) -> bool:
    return r.status != NO_REPORT


def _typed(result: LoopFile | dict[str, Any]) -> LoopFile:
    """The run's result as ``LoopFile`` (a result object as the run writes it is read through the type)."""
    return result if isinstance(result, LoopFile) else LoopFile.of(result)


def enough_responses(result: LoopFile | dict[str, Any]) -> bool:
    """Whether the run has the responses a net and its bootstrap interval need."""
    return _typed(result).before.n_responses >= MIN_RESPONSES_FOR_INTERVAL


def too_few_sentence(result: LoopFile | dict[str, Any]) -> str:
    n = _typed(result).before.n_responses
    return (f"not estimated: {n} response{'s' if n != 1 else ''}, and a bootstrap interval over responses needs "
            f"at least {MIN_RESPONSES_FOR_INTERVAL}")


def summary_frame(result: LoopFile | dict[str, Any]) -> pd.DataFrame:
    """One row per regulator: fixed/broken/net (final round vs initial), summed over rounds, the
    rates, and the report votes (failed calls, parse failures, usable). An arm without a usable
    report shows no numbers; a scalar arm's rates read ``NO_RATE``; below the responses an interval
    needs (``MIN_RESPONSES_FOR_INTERVAL``) the net and its interval are left out."""
    result = _typed(result)
    rows = []
    multi = result.rounds > 1
    enough = enough_responses(result)
    for name, r in result.regulators.items():
        row: dict[str, Any] = {"regulator": name}
        if _usable(r):
            row.update({"fixed": r.fixed, "broken": r.broken})
            if enough:
                row.update({"net": r.net, "net 95% lo": r.net_ci[0], "net 95% hi": r.net_ci[1]})
            if multi:
                row.update({"fixed, summed over rounds": r.fixed_summed,
                            "broken, summed over rounds": r.broken_summed})
            row.update({"acted on": r.acted_on, "pass rate": r.pass_rate})
            row.update({label: (NO_RATE if getattr(r, k) is None else getattr(r, k)) for label, k in (
                ("precision", "precision"), ("false alarms on satisfied", "false_alarm_rate"),
                ("break rate flagged", "break_rate_flagged"), ("break rate unflagged", "break_rate_unflagged"))})
        else:
            row["fixed"] = NO_REPORT
        if r.judge_votes is not None:
            row.update({"report votes": r.judge_votes, "failed calls": r.failed_calls,
                        "parse failures": r.parse_failures, "usable votes": r.usable_votes})
        rows.append(row)
    return pd.DataFrame(rows)


def rounds_frame(result: LoopFile | dict[str, Any]) -> pd.DataFrame:
    """Pass rate (strict and loose), net and acted-on per regulator and round (round 0: the initial outputs)."""
    result = _typed(result)
    b = result.before
    rows = [{"regulator": "(initial)", "round": 0, "pass rate": b.pass_rate, "loose pass rate": b.loose_pass_rate,
             "net": 0.0, "fixed this round": "—", "broken this round": "—", "acted on": "—"}]
    enough = enough_responses(result)
    for name, r in result.regulators.items():
        for x in r.rounds if _usable(r) else ():
            rows.append({"regulator": name, "round": x.round, "pass rate": x.pass_rate,
                         "loose pass rate": x.loose_pass_rate, "net": x.net,
                         "fixed this round": x.fixed_this_round, "broken this round": x.broken_this_round,
                         "acted on": x.acted_on})
    df = pd.DataFrame(rows)
    return df if enough else df.drop(columns=["net"])


def _figures(result: LoopFile) -> tuple[str, str]:
    import plotly.graph_objects as go

    regs = result.regulators
    names = [n for n in regs if _usable(regs[n])]
    nets = [regs[n].net for n in names]
    fig = None if not enough_responses(result) else go.Figure(go.Bar(x=names, y=nets, error_y={"type": "data", "symmetric": False,
                                                     "array": [regs[n].net_ci[1] - regs[n].net for n in names],
                                                     "arrayminus": [regs[n].net - regs[n].net_ci[0]
                                                                    for n in names]}))
    if fig is not None:
        fig.update_layout(yaxis_title="net (final round), 95% bootstrap interval", height=380,
                          margin={"t": 20, "b": 40}, template="plotly_white")
    fig2 = go.Figure()
    before = result.before.pass_rate
    for n in names:
        xs = [0] + [r.round for r in regs[n].rounds]
        ys = [before] + [r.pass_rate for r in regs[n].rounds]
        fig2.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=n))
    fig2.update_layout(xaxis={"title": "round (0 = initial outputs)", "dtick": 1, "tick0": 0},
                       yaxis_title="unit pass rate", template="plotly_white")
    legend_below(fig2, entries=len(names), height=380)
    return ("" if fig is None else figure_html(fig)), figure_html(fig2)


def loop_sections(result: LoopFile | dict[str, Any], folder: str | Path | None = None) -> list[Section]:
    """The loop report's sections: net per regulator, pass rate by round, arm differences, keywords, and
    (given the run's folder) the constraints behind the numbers."""
    result = _typed(result)
    b = result.before
    f1, f2 = _figures(result)
    bad = {n for n, r in result.regulators.items() if not _usable(r)}
    diffs = pd.DataFrame([{"arms": k, "net difference": v.net, "95% lo": v.ci[0], "95% hi": v.ci[1]}
                          for k, v in result.differences.items() if not bad & set(k.split(" - "))])
    kw = pd.DataFrame([{"constraint type": k, "keywords": ", ".join(v)} for k, v in result.keyword_table.items()])
    enough = enough_responses(result)
    intro = (f"<p>Task <b>{esc(result.task)}</b>: {b.n_responses} responses, {b.n_units} units, "
             f"pass rate before {b.pass_rate:.3f}. {result.rounds} round(s), {result.votes} vote(s) per "
             "report.</p>")
    if not enough:
        intro += f"<p><b>net = (fixed − broken)/N</b>: {esc(too_few_sentence(result))}.</p>"
    sections = [
        Section("Net per regulator", intro + f1 + table_html(summary_frame(result), dash_note=DASH_NOTE),
                banners=[f"!{n}: {NO_REPORT} — every one of its {r.judge_votes or 0} judge votes failed "
                         f"({r.failed_calls or 0}) or did not parse ({r.parse_failures or 0}); its "
                         "fixed/broken/net are no finding" for n, r in result.regulators.items() if not _usable(r)]
                + [f"{n}: {d}" for n, d in result.regulator_descriptions.items()],
                headlines=headlines(result)),
        Section("Pass rate by round", f2 + table_html(rounds_frame(result), dash_note=DASH_NOTE)),
        Section("Arm differences", (table_html(diffs, dash_note=DASH_NOTE) if enough else
                                    f"<p>Net differences between arms: {esc(too_few_sentence(result))}.</p>")
                + f"<p>{esc(rho_sentence(result))}</p>"),
        Section("Keyword table (free text → constraint ids)", table_html(kw)),
    ]
    units = units_section(folder) if folder is not None else None
    if units is not None:
        sections.append(units)
    of_analysis(sections, f"loop · {result.task}")
    return sections


def rho_sentence(result: LoopFile | dict[str, Any]) -> str:
    """The rank correlation of report precision and net across regulators, or why it is not given."""
    sp = _typed(result).precision_vs_net
    n, rho, p = sp.n, sp.rho, sp.p
    head = "Spearman ρ of report precision vs net"
    if n < MIN_REGULATORS_FOR_RHO:
        return (f"{head}: not computed — {n} regulator{'s' if n != 1 else ''} with a defined precision, and a rank "
                f"correlation needs at least {MIN_REGULATORS_FOR_RHO}.")
    if rho is None or p is None or math.isnan(rho) or math.isnan(p):
        return (f"{head} across {n} regulators: not defined: precision or net is the same for every regulator "
                "(a rank correlation needs both to vary).")
    least = f" (the smallest attainable with {n} is {1 / math.factorial(n):.3f})" if sp.exact else ""
    how = "exact" if sp.exact else "random"
    return f"{head} across {n} regulators: {rho:.3f}, one-sided {how} permutation p = {p:.3f}{least}."


def headlines(result: LoopFile | dict[str, Any]) -> list[Headline]:
    """The summary lines of a loop run: each usable regulator's net with its interval and what the
    interval says (or why there is none)."""
    result = _typed(result)
    out = []
    for name, r in result.regulators.items():
        if not _usable(r):
            out.append(Headline(name, "net (fixed − broken)/N", "—", f"no usable report: {NO_REPORT}"))
            continue
        if not enough_responses(result):
            out.append(Headline(name, "net (fixed − broken)/N", "—", too_few_sentence(result)))
            continue
        lo, hi = r.net_ci
        reading = ("the interval is above 0: following it fixed more than it broke" if lo > 0 else
                   "the interval is below 0: following it broke more than it fixed" if hi < 0 else
                   "the interval includes 0: not distinguishable from no net change")
        out.append(Headline(name, "net (fixed − broken)/N, final round",
                            f"{r.net:+.3f} [{lo:+.3f}, {hi:+.3f}]", reading))
    return out


def unit_frame(folder: str | Path) -> pd.DataFrame:
    """One row per regulator, round, response and constraint of a loop run's folder (``units.parquet``):
    passed initially and at the round's end, flagged by the regulator's report, acted on, the outcome
    (fixed, broken, still failing, still passing) and the report's complaints on that response
    (``complaints.jsonl``: their text, and whether each names a failing constraint)."""
    folder = Path(folder)
    units = pd.read_parquet(folder / "units.parquet")
    said: dict[tuple[str, int, str], list[str]] = {}
    path = folder / "complaints.jsonl"
    if path.exists():
        import json

        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                c = json.loads(line)
                mark = "" if c.get("correct") is None else (" [names a failing constraint]" if c["correct"]
                                                            else " [names no failing constraint]")
                said.setdefault((c["regulator"], int(c["round"]), str(c["item_id"])), []).append(
                    f"{c.get('text')}{mark}")

    def outcome(r) -> str:
        if r.pass_initial == r.pass_end:
            return "still passing" if r.pass_end else "still failing"
        return "fixed" if r.pass_end else "broken"

    return pd.DataFrame([{"regulator": r.regulator, "round": int(r.round), "response": r.item_id,
                          "constraint": r.unit, "outcome": outcome(r), "flagged": bool(r.flagged),
                          "acted on": bool(r.acted),
                          "report on this response": " | ".join(said.get((r.regulator, int(r.round), str(r.item_id)),
                                                                         [])) or None}
                         for r in units.itertuples(index=False)])


def units_section(folder: str | Path) -> Section | None:
    """The constraints behind the net, browsable and filterable (e.g. the constraints a regulator broke)."""
    if not (Path(folder) / "units.parquet").exists():
        return None
    df = unit_frame(folder)
    return units_section_of("The constraints behind the numbers", df,
                            filters=("regulator", "round", "outcome", "flagged"),
        caption=f"{len(df)} regulator × round × response × constraint rows: whether the constraint passed "
                "initially and after the round's revision (fixed, broken, still failing, still passing), whether "
                "the regulator's report flagged it, and that report's complaints on the response. Texts are cut "
                "at 400 characters; in full in this run's units.parquet, complaints.jsonl and outputs.jsonl.")


def write_report(result: LoopFile | dict[str, Any], out: str | Path) -> Path:
    result = _typed(result)
    secs = loop_sections(result, folder=out)
    return write_page(Path(out) / "report.html", f"judgeaudit loop: {result.task}", secs)
