"""Report sections for the (S, R) validity profile (construct-validity.txt §5.1–5.2, Figures 3, 5, 6,
Tables 4–6).

Every number shown comes from a ``ValidityResult``; nothing is typed in.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgeaudit.analyses.excess import coverage_note
from judgeaudit.analyses.validity import SLOT_ORDER, ValidityResult
from judgeaudit.card.numbers import with_ci
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, CONTROL_SLOTS, axis_of
from judgeaudit.report.html import Headline, Section, esc, figure_html, legend_below, reply_text, table_html
from judgeaudit.report.html import units_section as units_section_of

NOT_VERIFIED = "directions are author-intended and not human-verified"
EXTENSION_NOTE = ("R⁺, the wrong-way rate and R_excess (R − (1 − S), cross-fitted τ) are judgeaudit's own "
                  "extensions, not paper quantities: construct-validity.txt defines S and R (Def. 3, Eq. 6) only.")
_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22")


def _fmt(x: Any, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _status(stats: dict[str, Any]) -> str:
    if stats["S"] is None:
        return "no profile"
    if stats["single_point"]:
        return "single point"
    return "interpretable" if stats["interpretable"] else "uninterpretable (S below floor)"


def _banners(result: ValidityResult) -> list[str]:
    out = []
    if result.direction_source != "human":
        out.append(f"!{NOT_VERIFIED[0].upper()}{NOT_VERIFIED[1:]}: every construct edit is assumed to "
                   "change the correct verdict and every control edit to keep it.")
    for j in result.judges:
        s = j.stats
        if s["S"] is None or s["single_point"]:
            why = next((n for n in s["notes"] if "single" in n or "no usable" in n or "cannot be" in n),
                       "it has no frontier")
            out.append(f"!Judge {j.judge_id} is reported as a single point: {why}.")
        elif not s["interpretable"]:
            out.append(f"!Judge {j.judge_id} is uninterpretable: no threshold that moves its verdict reaches "
                       f"S ≥ {result.s_floor}, so its R is not evidence of sensitivity (Corollary 1).")
        d = s.get("directional") or {}
        if d.get("n_flips") and d["n_wrong_way"] * 2 >= d["n_flips"] and not s.get("reference_instrument"):
            out.append(f"!Judge {j.judge_id}: {d['n_wrong_way']} of its {d['n_flips']} construct flips go the wrong "
                       "way (the overreaching edit graded as overreaching less than its original); R counts "
                       f"them, R⁺ = {_fmt(s['R_plus'])} does not.")
    excluded = [k for k, v in result.slots.items() if not v["measurable"]]
    if excluded:
        out.append("Not measurable (annotator agreement below the bar of "
                   f"{result.bar}) and excluded: {', '.join(excluded)}.")
    return out


def _plane(result: ValidityResult) -> str:
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], mode="lines", line={"dash": "dash", "color": "#999"},
                             name="S + R = 1", hoverinfo="name"))
    fig.add_trace(go.Scatter(x=[1, 0], y=[0, 1], mode="markers+text", name="degenerate corners",
                             cliponaxis=False,
                             text=["constant (1, 0)", "flip (0, 1)"], textposition=["top left", "bottom right"],
                             marker={"symbol": "x", "size": 12, "color": "#555"}))
    fig.add_shape(type="line", x0=result.s_floor, x1=result.s_floor, y0=0, y1=1,
                  line={"dash": "dot", "color": "#f0a020"})
    fig.add_annotation(x=result.s_floor, y=1.02, text=f"S floor {result.s_floor}", showarrow=False,
                       font={"color": "#b07010"})
    for i, j in enumerate(result.judges):
        s = j.stats
        color = _COLORS[i % len(_COLORS)]
        pts = [p for p in s["frontier"] if p[0] is not None and p[1] is not None]
        hull = s["hull"]
        if pts:
            fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers",
                                     marker={"size": 6, "color": color, "opacity": 0.45},
                                     name=f"{j.judge_id}: attained", legendgroup=j.judge_id, showlegend=False,
                                     text=[f"τ = {p[2]:g}" for p in pts],
                                     hovertemplate="S %{x:.3f}, R %{y:.3f}, %{text}<extra></extra>"))
        if len(hull) > 1:
            fig.add_trace(go.Scatter(x=[p[0] for p in hull], y=[p[1] for p in hull], mode="lines",
                                     line={"color": color, "width": 2}, name=f"{j.judge_id}: frontier",
                                     legendgroup=j.judge_id, showlegend=False, hoverinfo="skip"))
        if s["S"] is not None and s["R"] is not None:
            label = j.judge_id + ("" if s["interpretable"] else " (uninterpretable)")
            err = {}
            for axis, key in (("x", "S"), ("y", "R")):
                ci = s.get(f"{key}_ci")
                if ci and ci[0] is not None and ci[1] is not None:
                    err[f"error_{axis}"] = {"type": "data", "symmetric": False, "array": [ci[1] - s[key]],
                                            "arrayminus": [s[key] - ci[0]], "color": color, "thickness": 1.5,
                                            "width": 6, "visible": True}
            fig.add_trace(go.Scatter(x=[s["S"]], y=[s["R"]], mode="markers", name=label,
                                     legendgroup=j.judge_id, **err,
                                     marker={"symbol": "circle-open", "size": 18, "color": color,
                                             "line": {"width": 3}},
                                     hovertemplate=f"{esc(j.judge_id)}<br>τ = {s['tau']:g}<br>S %{{x:.3f}}, "
                                                   "R %{y:.3f}<extra></extra>"))
    fig.update_layout(xaxis={"title": "S (control edits that leave the verdict put)", "range": [-0.03, 1.05]},
                      yaxis={"title": "R (construct edits that move it)", "range": [-0.03, 1.08]},
                      template="plotly_white")
    legend_below(fig, entries=2 + len(result.judges), height=520)
    return figure_html(fig)


def _slot_bars(result: ValidityResult) -> str:
    import plotly.graph_objects as go

    cats = list(CONSTRUCT_SLOTS) + ["control (all)"] + list(CONTROL_SLOTS)
    fig = go.Figure()
    for i, j in enumerate(result.judges):
        s = j.stats
        if s["S"] is None:
            continue
        ys, lo, hi = [], [], []
        for c in cats:
            if c == "control (all)":
                y, ci = s["control_flip_rate"], s["control_flip_rate_ci"]
            else:
                y, ci = s["per_slot"][c]["flip_rate"], s["per_slot"][c]["flip_rate_ci"]
            ys.append(y)
            hi.append(None if (y is None or not ci) else ci[1] - y)
            lo.append(None if (y is None or not ci) else y - ci[0])
        name = j.judge_id + ("" if s["interpretable"] else " (uninterpretable)")
        fig.add_trace(go.Bar(x=cats, y=ys, name=name, marker={"color": _COLORS[i % len(_COLORS)]},
                             error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True}))
    fig.add_vrect(x0=len(CONSTRUCT_SLOTS) - 0.5, x1=len(cats) - 0.5, fillcolor="#eee", opacity=0.5,
                  line_width=0, annotation_text="control arm: should not flip", annotation_position="top left")
    fig.update_layout(barmode="group", template="plotly_white",
                      yaxis={"title": "flip rate at matched τ", "range": [0, 1.05]},
                      xaxis={"tickangle": -35, "automargin": True})
    legend_below(fig, entries=len(result.judges), height=480)
    return figure_html(fig)


def judge_table(result: ValidityResult) -> pd.DataFrame:
    rows = []
    for j in result.judges:
        s = j.stats
        rows.append({
            "judge": j.judge_id, "τ": _fmt(s["tau"], 2), "S": with_ci(s["S"], s["S_ci"], digits=3),
            "R": with_ci(s["R"], s["R_ci"], digits=3),
            "R scope": with_ci(s["R_scope"], s["R_scope_ci"], digits=3),
            "R strength": with_ci(s["R_strength"], s["R_strength_ci"], digits=3),
            "gap (scope − strength)": with_ci(s["gap"], s["gap_ci"], digits=3),
            "gap perm. p": _fmt(s["gap_perm_p"]), "control flip": _fmt(s["control_flip_rate"]),
            "R⁺ (toward label)": with_ci(s.get("R_plus"), s.get("R_plus_ci"), digits=3),
            "wrong way": with_ci(s.get("wrong_way_rate"), s.get("wrong_way_rate_ci"), digits=3),
            "pts": s["usable_points"], "regrade": _fmt(s["regrade_agreement"], 2),
            "regrade (verdict at τ)": _fmt(s.get("regrade_binary_agreement"), 2),
            "failed calls": s["errors"], "parse failures": s["parse_failures"], "status": _status(s),
        })
    return pd.DataFrame(rows)


def direction_table(result: ValidityResult) -> pd.DataFrame:
    """R split by the direction of each construct flip, overall and per axis, at τ."""
    rows = []
    for j in result.judges:
        s = j.stats
        d = s.get("directional")
        if not d:
            continue
        row = {"judge": j.judge_id, "R": with_ci(s["R"], s["R_ci"], digits=3),
               "R⁺": with_ci(s["R_plus"], s["R_plus_ci"], digits=3),
               "wrong way": with_ci(s["wrong_way_rate"], s["wrong_way_rate_ci"], digits=3),
               "wrong-way flips": f"{d['n_wrong_way']} of {d['n_flips']}"}
        for ax in ("scope", "strength"):
            row[f"R⁺ {ax}"] = with_ci(d[ax]["R_plus"], d[ax]["R_plus_ci"], digits=3)
            row[f"wrong way {ax}"] = with_ci(d[ax]["wrong_way_rate"], d[ax]["wrong_way_rate_ci"], digits=3)
        row["R − (1 − S), cross-fitted τ"] = with_ci(s.get("R_excess"), s.get("R_excess_ci"), digits=3)
        rows.append(row)
    return pd.DataFrame(rows)


def slot_table(result: ValidityResult) -> pd.DataFrame:
    frame = result.slot_frame().set_index("slot")
    human = result.direction_source == "human"
    rows = []
    for slot in SLOT_ORDER:
        r = frame.loc[slot]
        agr = r["agreement"]
        agr_s = "—" if (not human or pd.isna(agr)) else \
            f"{agr:.3f}" + ("" if r["measurable"] else " †")
        yld = r["yield"]
        rows.append({"intervention": slot.replace("_", " "), "axis": axis_of(slot), "n": int(r["n"]),
                     "human dir.": "—" if (not human or pd.isna(yld)) else f"{yld:.0%}",
                     "agreement": agr_s,
                     "flip rate (mean over judges under study)": "—" if pd.isna(r["mean_flip_rate"])
                     else f"{r['mean_flip_rate']:.3f}"})
    return pd.DataFrame(rows)


def _length_table(result: ValidityResult) -> pd.DataFrame:
    rows = []
    for j in result.judges:
        s, ln = j.stats, j.stats["length"]
        rows.append({"judge": j.judge_id, "Spearman(grade, length)": _fmt(ln.get("spearman_grade_length")),
                     "gap where edit lengthened": _fmt(ln.get("gap_lengthened")),
                     "n lengthened": ln.get("n_lengthened", 0),
                     "gap where edit shortened": _fmt(ln.get("gap_shortened")),
                     "n shortened": ln.get("n_shortened", 0), "η² (slot R by axis)": _fmt(s["eta2_axis"])})
    return pd.DataFrame(rows)


def _magnitude_table(result: ValidityResult) -> pd.DataFrame:
    def row(intervention: str, axis: str, m: dict[str, Any]) -> dict[str, Any]:
        return {"intervention": intervention, "axis": axis, "n": m["n"],
                "median |Δ| length": "—" if m["median_abs_dlen"] is None else f"{m['median_abs_dlen']:.1%}",
                "median Δ length": "—" if m["median_dlen"] is None else f"{m['median_dlen']:+.1%}",
                "share lengthened": "—" if m["share_longer"] is None else f"{m['share_longer']:.0%}"}

    per_slot = result.length["per_slot"]
    rows = [row(slot.replace("_", " "), axis_of(slot), per_slot[slot]) for slot in SLOT_ORDER]
    rows += [row(f"all {ax}", ax, m) for ax, m in result.length["per_axis"].items()]
    return pd.DataFrame(rows)


def validity_sections(result: ValidityResult) -> list[Section]:
    """The report sections of a validity run: the (S, R) plane, per-slot sensitivity bars with the
    control flip rate, the per-judge table (Table 5's shape), the slot table (Table 4's shape) and
    the §5.2 length checks. Banners state when directions are not human-verified and when a judge
    is uninterpretable or a single point."""
    banners = _banners(result)
    reselect = ("τ re-selected in every resample, so the interval is that of the whole procedure"
                if result.tau_in_bootstrap == "reselect" else "τ held at its point-estimate value")
    null = ("across the construct arm" if result.gap_null == "construct_arm" else "within base items in the "
            "construct arm (degenerate when a base item carries one construct edit)")
    if result.gap_null_reason and result.gap_null_reason != "requested":
        null += f", chosen by the design: {result.gap_null_reason}"
    note = (f"<p class='note'>{result.n_base} base items, {result.n_probes} probes; operating point: the "
            f"threshold with the highest R subject to S ≥ {result.s_floor}; intervals: {result.level:.0%} "
            f"percentile bootstrap over base items ({result.n_boot} resamples, {reselect}); gap null: axis "
            f"labels permuted {null}, grades and τ fixed ({result.n_perm} permutations). Directions: "
            f"{'human annotation (majority label, bar ' + str(result.bar) + ')' if result.direction_source == 'human' else NOT_VERIFIED}.</p>")
    plane = Section("Validity profile: the (S, R) plane",
                    note + _plane(result) + "<p class='note'>Lines are each judge's monotone hull (best R at "
                    "that S or stricter); dots are attained thresholds; the ring is the matched-invariance "
                    f"operating point, its bars the {result.level:.0%} intervals of S (across) and R (up). "
                    "A judge at (1, 0) never moves; one at (0, 1) moves on anything.</p>",
                    banners, headlines=headlines(result))
    bars = Section("Per-slot sensitivity at matched invariance",
                   _slot_bars(result) + "<p class='note'>A construct-slot bar near the control bar is a judge "
                   "responding to a construct change no more than to an edit that should not move it.</p>",
                   [b for b in banners if b.startswith("!") and "human-verified" in b])
    judges = Section("Per-judge profiles",
                     table_html(judge_table(result)) + "<p class='note'>R is never reported without S "
                     "(Corollary 1). R⁺: construct flips toward the labelled direction (the edit labelled as "
                     "overreaching is flagged, its original not); wrong way: flips the other way; R = R⁺ + "
                     "wrong way. pts: grade values carrying ≥ 1% of the judge's grades; regrade: share of "
                     "re-graded requests whose grade is reproduced exactly (App. D); regrade (verdict at τ): "
                     f"share whose binary verdict at τ matches the first grade. {EXTENSION_NOTE}</p>",
                     [b for b in banners if "uninterpretable" in b or "single point" in b or "wrong way" in b])
    included = result.to_dict()["cross_judge_judges"]
    direction = Section("Direction of construct flips",
                        table_html(direction_table(result)) + f"<p class='note'>{EXTENSION_NOTE} "
                        "Definition 3's R counts a flip "
                        "in either direction. A higher grade means more overreach, so a flip toward the "
                        "labelled direction is one where the edit the annotators (or, without labels, the "
                        "design) call overreaching crosses τ upward while its original does not. R − (1 − S): "
                        "construct flip rate above the control flip rate, each half of the base items read at "
                        "the τ chosen on the other half (averaged over 5 random halvings), so that choosing τ "
                        "on the same data cannot make a judge with no sensitivity look sensitive; "
                        f"{esc(coverage_note())}. Means over judges in the slot table "
                        "use the judges under study only (not reference instruments, not single points): "
                        f"{esc(', '.join(included)) if included else 'none'}.</p>",
                        [b for b in banners if "wrong way" in b])
    slots = Section("Slots: n, agreement and yield",
                    table_html(slot_table(result)) + "<p class='note'>n counts the probes entering the arm. "
                    "human dir. is that count as a share of annotated items; † below the agreement bar and "
                    "excluded. “—”: no human labels.</p>",
                    [b for b in banners if "human-verified" in b or "Not measurable" in b])
    notes = "".join(f"<li>{esc(n)}</li>" for n in result.notes)
    judge_notes = "".join(f"<li><b>{esc(j.judge_id)}</b>: {esc(n)}</li>" for j in result.judges
                          for n in j.stats["notes"])
    length = Section("Length checks (§5.2)",
                     table_html(_length_table(result)) + table_html(_magnitude_table(result))
                     + (f"<ul class='note'>{notes}{judge_notes}</ul>" if notes or judge_notes else ""))
    return [plane, bars, judges, slots, direction, length]


_REPLY_COLUMNS = ("score", "raw", "rationale", "error", "parse_ok")


def unit_frame(result: ValidityResult, probes: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per judge and probe at the judge's operating point τ (a verdict flags ``grade ≥ τ``, on the
    oriented grades the profile read): the arm (construct, control), the slot, both grades, the outcome —
    construct: moved toward the labelled direction, moved the wrong way or did not move; control: left
    put or moved — and the edited text with the judge's reply to it (its raw text, else its rationale).
    A probe a judge has no usable grade for (failed call, parse failure) reads "no usable grade"."""
    first = verdicts[verdicts["epoch"] == 0].drop_duplicates(["judge_id", "request_id"])
    rows = []
    for j in result.judges:
        tau = j.stats.get("tau")
        mine = first[first["judge_id"] == j.judge_id]
        # one dict per verdict (request_ids are unique per judge here): a lookup per probe, not a row access
        rows_of = dict(zip(mine["request_id"].tolist(),
                           (dict(zip(_REPLY_COLUMNS, r)) for r in zip(*(mine[c].tolist() for c in _REPLY_COLUMNS)))))
        for p in probes.itertuples(index=False):
            orig = rows_of.get(p.base_id)
            edit = rows_of.get(p.probe_id)
            control = p.intended_direction == "neither"
            g0 = None if orig is None or pd.isna(orig["score"]) else float(orig["score"])
            g1 = None if edit is None or pd.isna(edit["score"]) else float(edit["score"])
            if g0 is None or g1 is None or tau is None:
                outcome = "no usable grade" if tau is not None else "no operating point"
            else:
                f0, f1 = g0 >= tau, g1 >= tau
                if f0 == f1:
                    outcome = "left put" if control else "did not move"
                elif control:
                    outcome = "moved (should not)"
                else:
                    toward = f1 if p.intended_direction == "edited" else f0
                    outcome = "moved toward the label" if toward else "moved the wrong way"
            reply = None if edit is None else reply_text(edit["raw"], edit["rationale"], edit["error"],
                                                          edit["parse_ok"])
            rows.append({"judge": j.judge_id, "probe": p.probe_id, "arm": "control" if control else "construct",
                         "slot": p.slot.replace("_", " "), "τ": tau, "grade original": g0, "grade edited": g1,
                         "outcome": outcome, "edited text": p.edited, "reply to the edit": reply})
    return pd.DataFrame(rows, columns=["judge", "probe", "arm", "slot", "τ", "grade original", "grade edited",
                                       "outcome", "edited text", "reply to the edit"])


def units_section(result: ValidityResult, probes: pd.DataFrame, verdicts: pd.DataFrame) -> Section | None:
    """The probes behind the profile, browsable and filterable: the edits a judge did not move on or
    moved the wrong way, the control edits it moved on, its replies and parse failures."""
    df = unit_frame(result, probes, verdicts)
    counts = df["outcome"].value_counts()
    said = ", ".join(f"{n} {k}" for k, n in counts.items())
    return units_section_of("The probes behind the numbers", df, filters=("judge", "arm", "outcome", "slot"),
        caption=f"Every judge × probe at the judge's τ ({said}). Filter to a judge and an outcome (e.g. "
                "construct edits it did not move on, or moved the wrong way). Texts are cut at 400 characters; "
                "every reply in full, with its call, is in this run's verdicts.parquet (request_id = probe, "
                "epoch 0; the original's request_id is the probe's base id).")


def headlines(result: ValidityResult) -> list[Headline]:
    """Per judge: S and R at its operating point with their intervals (and whether it is interpretable),
    and the construct flip rate above the control flip rate with its interval, read by its sign."""
    out = []
    for j in result.judges:
        s = j.stats
        if s["S"] is None or s["single_point"]:
            out.append(Headline(j.judge_id, "S, R at τ", "—", "no (S, R) profile: a single point, no frontier"))
            continue
        status = ("interpretable: S clears the floor" if s["interpretable"] else
                  f"uninterpretable: no threshold reaches S ≥ {result.s_floor}, so R is no evidence of sensitivity")
        sr = f"S {with_ci(s['S'], s['S_ci'], digits=3)}; R {with_ci(s['R'], s['R_ci'], digits=3)}"
        out.append(Headline(j.judge_id, f"S, R at τ = {s['tau']:.3g}", sr, status))
        ex, ci = s.get("R_excess"), s.get("R_excess_ci")
        if ex is not None and ci and ci[0] is not None:
            reading = ("the interval is above 0: it moves on construct edits more than on control edits"
                       if ci[0] > 0 else "the interval is below 0: it moves on control edits more than on "
                       "construct edits" if ci[1] < 0 else "the interval includes 0: not distinguishable from "
                       "moving on construct and control edits alike")
            out.append(Headline(j.judge_id, "R − (1 − S), cross-fitted τ", with_ci(ex, ci, digits=3), reading))
    return out
