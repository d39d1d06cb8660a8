"""The report of ``judgeaudit calibrate``: the estimates side by side, the agreement table and the
definitions used (Markdown and one small HTML page), read from the run's typed block
(``analyses.calibrate.schema.CalibrateRun``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.analyses.calibrate.schema import CalibrateRun, RoganGladenBlock
from judgeaudit.card.numbers import with_ci
from judgeaudit.report.html import Section, esc, table_html, write_page

_NAMES = {"stratified": "stratified PPI++", "ppi": "PPI++ (λ tuned)", "ppi_plain": "PPI (λ = 1)",
          "human": "human labels only", "naive": "judge only (naive)", "rogan_gladen": "Rogan–Gladen"}


def estimates_frame(r: CalibrateRun) -> pd.DataFrame:
    rows = []
    for key in r.ROWS:
        e = getattr(r, key)
        if e is None or e.estimate is None:
            continue
        n = e.n_labelled + e.n_unlabelled if isinstance(e, RoganGladenBlock) else e.n
        rows.append({"method": _NAMES[key], "estimate": e.estimate, "95% interval" if r.level == 0.95 else
                     f"{r.level:.0%} interval": "—" if not e.ci else f"[{e.ci[0]:.4f}, {e.ci[1]:.4f}]",
                     "width": e.width, "n": n})
    return pd.DataFrame(rows)


def headline(r: CalibrateRun) -> list[str]:
    """The sentences the report prints, each computed from ``r``."""
    p, h, nv = r.ppi, r.human, r.naive
    lvl = f"{r.level:.0%}"
    wide = r.support.widened_to
    how = (f"; the labels do not support a normal interval, so it is widened to its hull with the {wide} interval "
           "of the human labels") if wide else ""
    out = [f"{r.target} ({r.definition}): {with_ci(p.estimate, p.ci)} by PPI++ (λ = {p.lam:.3f}), "
           f"{lvl} interval{how}, from {r.n_labelled} human labels and {r.n_unlabelled} judged unlabelled "
           "items. The labels must be a uniformly random subset of the judged items."]
    ne = r.n_eff.value
    worth = (f"the judge is worth n_eff = {ne:.0f} human labels (judgeaudit's own quantity: the human-only sample "
             "size with the PPI++ interval's width)") if ne is not None else \
        "n_eff is not given (the labels do not support a normal interval)"
    out.append(f"The human labels alone give {with_ci(h.estimate, h.ci)} (width {h.width:.4f} vs "
               f"PPI++'s {p.width:.4f}); {worth}.")
    side = "above" if nv.ci[0] > p.ci[1] else "below" if nv.ci[1] < p.ci[0] else None
    out.append(f"The naive judge-only interval {with_ci(nv.estimate, nv.ci)} carries none of the judge's "
               "errors" + (f"; it lies wholly {side} the PPI++ interval: the judge's raw rate is biased "
                           f"{'upward' if side == 'above' else 'downward'}" if side else
                           "; it overlaps the PPI++ interval") + ".")
    rg = r.rogan_gladen
    if rg is not None and rg.tpr_ci and rg.tnr_ci:
        out.append(f"On the labelled items the judge's TPR is {with_ci(rg.tpr, rg.tpr_ci)} and its TNR "
                   f"{with_ci(rg.tnr, rg.tnr_ci)} (exact {lvl} intervals).")
    a = r.agreement
    if a is not None:
        c = a.constant_predictor
        beats = "above" if a.beats_constant else "not distinguishably above"
        kappa = (with_ci(a.cohen_kappa, a.cohen_kappa_ci) if a.cohen_kappa is not None else
                 "undefined (the human labels hold one category)")
        out.append(f"Agreement with the humans: κ = {kappa}, raw "
                   f"{with_ci(a.raw_agreement, a.raw_agreement_ci)}, {beats} the constant predictor's "
                   f"{c.raw_agreement:.3f} (always {c.label!r}; κ = 0).")
    if (st := r.stratified) is not None:
        out.insert(0, f"Stratified PPI++ (labels drawn at random within {len(st.strata)} strata, weighted by their "
                   f"shares of the judged items): {with_ci(st.estimate, st.ci)}, {lvl} interval "
                   f"({st.interval}).")
    out += [f"Note: {n}." for n in r.notes if n.startswith(("intervals widened", "the labels may not"))]
    return out


def calibrate_markdown(r: CalibrateRun) -> str:
    df = estimates_frame(r)
    lines = [f"# judgeaudit calibrate — {r.judge}", ""] + [f"- {s}" for s in headline(r)] + [""]
    cols = list(df.columns)
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row) + " |")
    lines += [""] + [f"- note: {n}" for n in r.notes]
    if (c := r.random_subset) is not None:
        lines.append(f"- random-subset check ({c.test}): p = {c.p:.2g}"
                     + (" — flagged" if c.flagged else " — not flagged (this cannot show the labels are random)"))
    lines += ["", "## Definitions", ""]
    lines += [f"- **{k}**: {v}" for k, v in r.definitions.items()]
    return "\n".join(lines) + "\n"


def write_calibrate_html(r: CalibrateRun, path: str | Path) -> Path:
    body = "".join(f"<p>{esc(s)}</p>" for s in headline(r)) + table_html(estimates_frame(r), float_format="{:.4f}")
    notes = [f"!{n}" for n in r.notes]
    defs = "<ul>" + "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in r.definitions.items()) + "</ul>"
    return write_page(path, f"calibrate — {r.judge}", [Section("Estimates", body, notes),
                                                        Section("Definitions", defs)],
                      subtitle=f"target: {r.target}")
