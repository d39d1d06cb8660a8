"""Report sections for validation power (construct-validity.txt Def. 6, §5.4 Table 7, App. E).

``vp_sections(result)`` returns: the Table-7-shaped summary (per-item a_imp and paired κ /
accuracy side by side, provenance-inherited sets last, as the paper's last row), the ceiling and
VP, the per-member breakdown with nulls, the content-free length rules, the transfer matrix, and
a bar chart of a_imp vs. null vs. a_hum per set and mode.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgeaudit.analyses.validation_power import ValidationPowerResult
from judgeaudit.report.html import Headline, Section, esc, figure_html, of_analysis, table_html, units_section


def _is_provenance(result: ValidationPowerResult, name: str) -> bool:
    origin = str(result.set_meta.get(name, {}).get("label_origin", "")).lower()
    return "provenance" in origin and "human" not in origin


def _ordered_names(result: ValidationPowerResult) -> list[str]:
    names = result.set_names
    return [n for n in names if not _is_provenance(result, n)] + [n for n in names if _is_provenance(result, n)]


TABLE7_DASH = ("— marks a value this audit did not measure: the item columns when only --mode paired ran, the "
               "paired columns when only --mode item ran or the set has no pairs; or one that is not defined for "
               "the set (an empty denominator).")


def table7_frame(result: ValidationPowerResult) -> pd.DataFrame:
    """Table 7's shape: label set, label origin, n, per-item a_imp, pairs, paired κ, accuracy;
    provenance-inherited sets last."""
    df = result.to_frame()
    order = {n: i for i, n in enumerate(_ordered_names(result))}
    df = df.sort_values("label set", key=lambda s: s.map(order)).reset_index(drop=True)
    notes = []
    for name in df["label set"]:
        meta = result.set_meta.get(name, {})
        t = meta.get("trimmed")
        notes.append(f"trimmed {t['from_rows']}→{t['to_rows']} rows" if t else "")
    df["note"] = notes
    if "accuracy (paired)" in df.columns:
        for col in ("accuracy (paired)", "prefer shorter"):
            df[col] = df[col].map(lambda v: None if pd.isna(v) else f"{100 * v:.1f}%")
    return df


def ceiling_frame(result: ValidationPowerResult) -> pd.DataFrame:
    """a_imp (with the interval of the max over members and the null of that max, its p-value,
    resolution and BH-adjusted p across rows), a_hum (with its interval), VP and resolvability."""
    bh = result.a_imp_p_bh()
    rows = []
    for r in result.sets:
        if not r.applicable:
            continue
        ci = r.a_imp_ci or (None, None)
        hci = r.a_hum_ci or (None, None)
        hd = r.a_hum_detail
        rows.append({"label set": r.set_name, "mode": r.mode, "best member": r.a_imp_member, "a_imp": r.a_imp,
                     "a_imp 95% lo": ci[0], "a_imp 95% hi": ci[1], "null p95 κ": r.a_imp_null_p95,
                     "p": r.a_imp_p_value, "min attainable p": r.a_imp_p_value_min,
                     "p (BH)": bh[(r.set_name, r.mode)], "a_hum": r.a_hum, "a_hum 95% lo": hci[0],
                     "a_hum 95% hi": hci[1], "held-out labels": hd.n_rows if hd else None,
                     "annotator Fleiss κ": hd.fleiss_kappa if hd else None, "VP": r.vp,
                     "resolvable": ("—" if r.resolvable is None else ("yes" if r.resolvable else "no (intervals overlap)")),
                     "folds": r.folds.get("scheme"), "harness": "BROKEN" if r.broken_harness else "ok",
                     "between-group label share": r.between_group_label_share})
    return pd.DataFrame(rows)


def length_rules_frame(result: ValidationPowerResult) -> pd.DataFrame:
    rows = []
    for r in result.sets:
        if r.mode == "paired" and r.applicable:
            rows.append({"label set": r.set_name, "pairs": r.n,
                         "preferred side is longer": r.preferred_longer_rate,
                         "prefer the longer (acc.)": r.prefer_longer_accuracy,
                         "prefer the shorter (acc.)": r.prefer_shorter_accuracy,
                         "equal-length pairs": r.n_equal_length, "tie labels dropped": r.n_ties_dropped})
    return pd.DataFrame(rows)


TRANSFER_MIN_N = 30
"""Fewest target items a transfer κ is read on: the audit does not resample transfers, and below this a
κ's sampling spread is too wide for its value to be more than a sign."""


def transfer_frame(result: ValidationPowerResult) -> pd.DataFrame:
    """The admitted transfers: source, target, mode, n and each member's κ (two decimals; no interval is
    computed for a transfer, and below ``TRANSFER_MIN_N`` target items the row says n is too small)."""
    rows = []
    for t in result.transfer:
        if not t.admitted:
            continue
        row: dict[str, Any] = {"source": t.source, "target": t.target, "mode": t.mode, "n": t.n}
        for m, s in t.members.items():
            k = s.get("kappa")
            row[f"{m} κ"] = None if k is None or pd.isna(k) else f"{k:.2f}"
        row["reading"] = (f"n too small (< {TRANSFER_MIN_N}): no interval, read the sign only"
                          if t.n < TRANSFER_MIN_N else "no interval computed")
        rows.append(row)
    return pd.DataFrame(rows)


def refusal_frame(result: ValidationPowerResult) -> pd.DataFrame:
    """The refused transfers grouped by their reason: how many ordered pairs and which."""
    groups: dict[tuple[str, str], list[str]] = {}
    for t in result.transfer:
        if not t.admitted:
            groups.setdefault((t.reason or "no reason given", t.mode), []).append(f"{t.source} → {t.target}")
    return pd.DataFrame([{"reason not admitted": r, "mode": m, "ordered pairs": len(v), "pairs": "; ".join(v)}
                         for (r, m), v in sorted(groups.items(), key=lambda kv: -len(kv[1]))])


def transfer_sentence(result: ValidationPowerResult) -> str:
    """§5.4's count, per mode, from the run: "Of 20 ordered set pairs, 2 admit the question"."""
    parts = []
    for mode in ("item", "paired"):
        ts = [t for t in result.transfer if t.mode == mode]
        if ts:
            parts.append(f"{mode} mode: {sum(t.admitted for t in ts)} of {len(ts)} ordered set pairs admitted")
    return ("; ".join(parts) + ".") if parts else ""


def vp_figure(result: ValidationPowerResult) -> Any:
    """Bars per set and mode: a_imp (with its interval), the best member's null p95, and a_hum."""
    import plotly.graph_objects as go

    xs, a_imp, lo, hi, null, hum = [], [], [], [], [], []
    for name in _ordered_names(result):
        for mode in ("item", "paired"):
            r = result.find(name, mode)
            if r is None or not r.applicable:
                continue
            xs.append(f"{name} ({mode})")
            a_imp.append(r.a_imp)
            lo.append(r.a_imp - r.a_imp_ci[0] if r.a_imp_ci else 0)
            hi.append(r.a_imp_ci[1] - r.a_imp if r.a_imp_ci else 0)
            null.append(r.a_imp_null_p95)
            hum.append(r.a_hum)
    fig = go.Figure()
    fig.add_bar(name="a_imp (best member, κ)", x=xs, y=a_imp,
                error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo})
    fig.add_bar(name="null p95 (max over members, label permutation)", x=xs, y=null)
    fig.add_bar(name="a_hum (human ceiling)", x=xs, y=hum)
    # the legend sits above the plot: a horizontal legend's default place is below the x axis,
    # on top of the (long, tilted) set labels
    fig.update_layout(barmode="group", yaxis_title="Cohen's κ", height=460, margin={"t": 70},
                      legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"},
                      xaxis={"automargin": True, "tickangle": -30})
    return fig


def null_sentence(result: ValidationPowerResult) -> str:
    """§5.4's sentence, per mode, from the run: whether every row's a_imp clears its label-permutation
    null (the null of the max over members) and the largest upper (95%) quantile of those nulls —
    "every paired row clears its label-permutation null, which sits at or below 0.026"."""
    parts = []
    for mode in ("item", "paired"):
        rows = [r for r in result.sets if r.applicable and r.mode == mode and r.a_imp_null_n > 0]
        if not rows:
            continue
        top = max(r.a_imp_null_p95 for r in rows)
        res_p = max(r.a_imp_p_value_min for r in rows)
        failing = [r.set_name for r in rows if not r.a_imp_clears_null]
        if not failing:
            head = f"every {mode} row clears its label-permutation null"
        else:
            head = (f"{len(rows) - len(failing)} of {len(rows)} {mode} rows clear their label-permutation null "
                    f"(not: {', '.join(failing)})")
        parts.append(f"{head}, which sits at or below {top:.3f} (95th percentile of the max over members; "
                     f"with {rows[0].a_imp_null_n} permutations no p-value can fall below {res_p:.3f})")
    return ("; ".join(parts)[:1].upper() + "; ".join(parts)[1:] + ".") if parts else ""


def headlines(result: ValidationPowerResult) -> list[Headline]:
    """The summary lines of a validation-power audit: per label set and mode, a_imp (the best surface-only
    member's κ) with its interval, read against the set's label-permutation null; VP where the set has a human
    ceiling; and, for a set the family could not be run on, why there is no estimate."""
    out = []
    for r in result.sets:
        subject = f"{r.set_name} ({r.mode})"
        if not r.applicable:
            out.append(Headline(subject, "a_imp (κ of the best surface-only member)", "—",
                                f"not estimated: {r.reason}"))
            continue
        lo, hi = r.a_imp_ci if r.a_imp_ci else (None, None)
        value = f"κ {r.a_imp:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None else "") + \
            f" ({r.a_imp_member}, n = {r.n})"
        if r.broken_harness:
            reading = "broken harness: its label-permutation null sits above chance, so this κ is no evidence"
        elif r.a_imp_null_n == 0:
            reading = "no label-permutation null was run (0 permutations): the κ is not tested against chance"
        elif r.a_imp_clears_null:
            reading = (f"above its label-permutation null (95th percentile {r.a_imp_null_p95:.3f}): surface form "
                       "alone recovers part of these labels, so agreeing with them is partly reachable without "
                       "the construct")
        else:
            reading = (f"not above its label-permutation null (95th percentile {r.a_imp_null_p95:.3f}): surface "
                       "form alone is not shown to recover these labels")
        out.append(Headline(subject, "a_imp (κ of the best surface-only member)", value, reading))
        if r.vp is not None and r.a_hum_ci:
            out.append(Headline(subject, "VP = a_hum − a_imp",
                                f"{r.vp:.3f} (a_hum {r.a_hum:.3f} [{r.a_hum_ci[0]:.3f}, {r.a_hum_ci[1]:.3f}])",
                                "resolvable: the a_imp and a_hum intervals do not overlap" if r.resolvable else
                                "not resolvable: the a_imp and a_hum intervals overlap"))
    return out


def unit_frame(result: ValidationPowerResult) -> pd.DataFrame:
    """One row per label set, mode and row the family read: its group, response text(s) (paired: the sides as
    the audit presented them, after its seeded side randomisation), the label, the best member's out-of-fold
    prediction and whether it recovers the label, which members recover it, and every member's prediction."""
    frames = []
    for r in result.sets:
        p = r.predictions
        if not r.applicable or p is None or not len(p):
            continue
        members = [m.name for m in r.members if m.name in p.columns]
        texts = [c for c in ("response", "response A", "response B") if c in p.columns]
        hit = {m: p[m] == p["label"] for m in members}
        best = r.a_imp_member
        frames.append(pd.DataFrame({
            "label set": r.set_name, "mode": r.mode, "group": p["group"], **{c: p[c] for c in texts},
            "label": p["label"], "best member": best, "its prediction": p[best],
            "best member recovers the label": hit[best].map({True: "yes", False: "no"}),
            "members recovering it": [", ".join(m for m in members if hit[m].iloc[i]) or "none"
                                      for i in range(len(p))],
            "every member's prediction": ["; ".join(f"{m}: {p[m].iloc[i]}" for m in members)
                                          for i in range(len(p))]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def vp_units_section(result: ValidationPowerResult) -> Section | None:
    """The rows behind a_imp, browsable and filterable (e.g. the labels length alone recovers)."""
    df = unit_frame(result)
    if df.empty:
        return None
    rec = int((df["best member recovers the label"] == "yes").sum())
    return units_section(
        "The rows behind the numbers", df,
        filters=("label set", "mode", "label", "best member recovers the label"),
        caption=f"{len(df)} label set × mode × row rows; the best member recovers the label on {rec} of them. Each "
                "prediction is the member's pooled out-of-fold prediction (fit on the other folds, never on the "
                "row), the same predictions a_imp's κ is computed on. Paired rows show the sides as the audit "
                "presented them, after its seeded side randomisation (the label is the side after it). Filter to "
                "a set and to the rows a member recovers (e.g. the ones length alone gets right). Texts are cut "
                "at 400 characters; every row is in this run's predictions.parquet.")


def vp_sections(result: ValidationPowerResult) -> list[Section]:
    """The validation-power sections of a report (one ``Section`` each)."""
    cfg = result.config
    banners: list[str] = []
    for r in result.sets:
        if r.applicable and r.broken_harness:
            why = ""
            if r.between_group_label_share is not None and r.between_group_label_share >= 0.2:
                why = (f" Here {100 * r.between_group_label_share:.0f}% of the label variance lies between groups, "
                       "which a within-group permutation keeps: a surface reader that recognises the group "
                       "recovers the labels under the null too, so this set's a_imp cannot be separated from "
                       "group-level structure.")
            banners.append(f"!Broken harness on {r.set_name} ({r.mode}): the label-permutation null of "
                           f"{', '.join(r.broken_harness)} sits clearly above chance (App. E: the pipeline "
                           f"leaks). Its a_imp is not evidence.{why}")
    for name, meta in result.set_meta.items():
        if meta.get("trimmed"):
            t = meta["trimmed"]
            banners.append(f"{name} was trimmed deterministically from {t['from_rows']} to {t['to_rows']} rows "
                           f"({t['rule']}).")
    intro = (
        "<p>How much of each label set a reader of surface form alone recovers, in each input mode "
        "(construct-validity.txt Def. 6). Per-item a<sub>imp</sub> is Cohen's κ of the pooled out-of-fold "
        "predictions of the best member of the frozen family; paired accuracy has chance at 50% with side "
        "order randomised (seed " + esc(cfg.get("seed")) + "). Every member is refit on labels permuted "
        "within group under the same folds (" + esc(cfg.get("n_permutations")) + " permutations). Provenance-"
        "inherited sets (labels a function of how the response was generated, Def. 5) are listed last, as "
        "the paper's contrast row.</p>" + (f"<p>{esc(null_sentence(result))}</p>" if null_sentence(result) else ""))
    t7 = Section("Validation power: construct-blind recovery of the label sets (Table 7)",
                 intro + table_html(table7_frame(result), dash_note=TABLE7_DASH) + figure_html(vp_figure(result)),
                 banners, headlines=headlines(result))
    ceil = Section("Validation power: human ceiling and VP",
                   "<p>VP = a<sub>hum</sub> − a<sub>imp</sub>. a<sub>imp</sub> is the best member's κ, so its "
                   "interval bootstraps the maximum: in every resample of groups each member's pooled "
                   "out-of-fold κ is recomputed and the maximum over members of its standardised deviation "
                   "sets simultaneous bands, whose maximum is the interval (the best member's own interval "
                   "ignores that it was selected). Its null is likewise the maximum over members of κ under "
                   "each label permutation. a<sub>hum</sub> is the same statistic for a human reader: κ of one "
                   "annotator (the prediction) against the strict majority of the set's other annotators (the "
                   "label), pooled over every held-out annotator on a<sub>imp</sub>'s label space, each annotator "
                   "of an item with m labels weighing 1/m; a held-out label whose others have no strict majority, "
                   "or a label outside the "
                   "space (a tie vote), is not scored. Its interval resamples groups (or is the user's). Fleiss' κ "
                   "among the annotators is shown for description only; it is a different estimand. Where the "
                   "intervals overlap VP is reported as not resolvable (App. E). Sets without several human labels "
                   "per item have no ceiling and no VP. Every permutation p-value has the smallest p its "
                   "permutations can give beside it, and p (BH) is the Benjamini–Hochberg adjusted p-value across "
                   "the rows of the table (App. A.2).</p>" + table_html(ceiling_frame(result)))
    mem = Section("Validation power: per-member breakdown and nulls",
                  "<p>Which member recovers a set locates the leak (App. E): length_only → a quantity nobody "
                  "would defend as the construct; numeric_surface → formatting or numeric density; "
                  "surface_ngram only → a lexical idiom; provenance_recoverable → the generative condition is "
                  "readable from the text. Each member's null is reported as the paper does, by its upper "
                  "(95%) quantile of κ, and a member clears it when its κ lies above; min attainable p is "
                  "1/(B + 1) for B permutations; p (BH) controls the false discovery rate across every row of "
                  "this table (App. A.2).</p>" + table_html(result.members_frame()))
    rules = Section("Validation power: content-free length rules (paired sets)",
                    "<p>How often the preferred response is the longer one (characters; equal-length pairs "
                    "excluded), and so the accuracy of “prefer the longer” and “prefer the shorter” (§5.4).</p>"
                    + table_html(length_rules_frame(result)))
    out = [t7, ceil, mem, rules]
    if result.transfer:
        out.append(Section("Validation power: transfer between sets",
                           f"<p>{esc(transfer_sentence(result))} Each member is fit on the source set and scored "
                           "on the target (same mode); a pair is admitted only where the two label spaces share at "
                           "least two categories, a category being a label value under its label origin (in paired "
                           "mode every set's labels are the sides A/B, which mean different things under different "
                           "origins; §5.4). The admitted pairs, then the refused ones grouped by their reason.</p>"
                           + (table_html(transfer_frame(result)) if any(t.admitted for t in result.transfer)
                              else "<p>No pair is admitted.</p>")
                           + table_html(refusal_frame(result))))
    units = vp_units_section(result)
    if units is not None:
        out.append(units)
    return of_analysis(out, "validation power · " + ", ".join(result.set_names))


def audited_sets_line(result: ValidationPowerResult) -> str:
    """The report's subtitle: the sets audited, and for each one drawn from a spec that holds several
    sets whether it is one of them (audited on its own) or their pool (``?pool=true``)."""
    parts = []
    for name in result.set_names:
        m = result.set_meta.get(name, {})
        if m.get("split_by"):
            parts.append(f"{name} (one {m['split_by']} of {m.get('spec', name)}, audited as its own set)")
        elif m.get("pooled"):
            over = "; ".join(f"{k} {', '.join(v)}" for k, v in m.get("pooled_over", {}).items())
            parts.append(f"{name} (pooled on request over {over})")
        else:
            parts.append(name)
    return "Label sets audited: " + ", ".join(parts)
