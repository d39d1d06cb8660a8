"""The card's calibrate section: a ``judgeaudit calibrate`` run of the judge, read as it was written
(never recomputed) — the calibrated estimate (PPI++) with its interval, Cohen's κ and raw agreement
against the constant predictor, TPR and TNR with their exact intervals, and the run's notes.

Gate names (``judgeaudit.gate.quantities``): ``calibrate.estimate``, ``calibrate.human``,
``calibrate.agreement.cohen_kappa``, ``calibrate.agreement.raw_agreement``,
``calibrate.agreement.constant_agreement``, ``calibrate.agreement.margin`` (raw − constant, read
with the raw agreement's interval shifted by the constant), ``calibrate.tpr``, ``calibrate.tnr``;
units: the labelled items (the positives for TPR, the negatives for TNR)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as esc
from typing import Any

from judgeaudit.analyses.calibrate.schema import CalibrateFile
from judgeaudit.card.numbers import ci_ok, with_ci
from judgeaudit.card.schema import CalibrateSection, Value
from judgeaudit.card.sources import Run, of_kind, one_run


def calibrate_section(runs: Sequence[Run], judge: str, src, chosen: Sequence = ()) -> dict[str, Any] | None:  # noqa: ANN001
    """The section, or None when no calibrate run of ``judge`` is among ``runs`` (``src``: the card's
    source record of a run). Each calibrate run is read as ``CalibrateFile``: a key missing or renamed is an
    error naming the file and the key."""
    typed = {r.path: CalibrateFile.of(r.data, path=r.path) for r in of_kind(runs, "calibrate")}
    hits = [r for r in of_kind(runs, "calibrate") if judge in (typed[r.path].calibrate.judge, typed[r.path].judge)]
    if not hits:
        return None
    r = one_run(hits, f"calibrate runs of {judge}", chosen)   # never the newest silently
    c = typed[r.path].calibrate
    p, h, a, rg = c.ppi, c.human, c.agreement, c.rogan_gladen
    agreement = None
    if a is not None:
        const, raw_ci = a.constant_predictor.raw_agreement, a.raw_agreement_ci
        margin_ci = [raw_ci[0] - const, raw_ci[1] - const] if ci_ok(raw_ci) else None
        agreement = {"cohen_kappa": {"value": a.cohen_kappa, "ci": _ci(a.cohen_kappa_ci)},
                     "raw_agreement": {"value": a.raw_agreement, "ci": _ci(raw_ci)},
                     "constant_agreement": {"value": const, "ci": None},
                     "margin": {"value": a.raw_agreement - const, "ci": margin_ci}}
    return {
        "measured": True, "source": src(r, judge), "target": c.target, "level": c.level,
        "n": {"labelled": c.n_labelled, "unlabelled": c.n_unlabelled,
              "positives": rg.positives if rg is not None and rg.table else None,
              "negatives": rg.negatives if rg is not None and rg.table else None},
        "estimate": {"value": p.estimate, "ci": _ci(p.ci), "interval": p.interval},
        "human": {"value": h.estimate, "ci": _ci(h.ci)},
        "agreement": agreement,
        "tpr": {"value": rg.tpr, "ci": _ci(rg.tpr_ci)} if rg is not None else None,
        "tnr": {"value": rg.tnr, "ci": _ci(rg.tnr_ci)} if rg is not None else None,
        "notes": list(c.notes),
    }


def _ci(ci: tuple | None) -> list | None:
    """An interval as the card writes it (a JSON list, as the run wrote it)."""
    return None if ci is None else list(ci)


def calibrate_verdict(s: CalibrateSection) -> list[str]:
    """Sentences read from the section's intervals only."""
    e = s.estimate
    out = []
    if ci_ok(e.ci):
        out.append(f"Calibrated {s.target}: {with_ci(e.value, e.ci)} (PPI++ from {s.n.labelled} "
                   "human labels; the labels must be a uniformly random subset of the judged items).")
    a = s.agreement
    raw, const, kappa = ((a.get("raw_agreement"), a.get("constant_agreement"), a.get("cohen_kappa")) if a
                         else (None, None, None))
    if raw is not None and const is not None and ci_ok(raw.ci) and const.value is not None:
        beats = raw.ci[0] > const.value
        k = with_ci(kappa.value, kappa.ci) if kappa is not None else with_ci(None, None)
        out.append(f"Its raw agreement with the humans {with_ci(raw.value, raw.ci)}"
                   f" is {'above' if beats else 'not distinguishably above'} the constant predictor's "
                   f"{const.value:.3f} (κ = {k}).")
    return out


def render_calibrate(s: CalibrateSection, judge: str) -> str:  # noqa: ARG001
    rows: list[tuple[str, Value | None]] = [("calibrated estimate (PPI++)", s.estimate), ("human labels only", s.human)]
    if s.agreement:
        rows += [("Cohen's κ", s.agreement.get("cohen_kappa")), ("raw agreement", s.agreement.get("raw_agreement")),
                 ("constant predictor's agreement", s.agreement.get("constant_agreement"))]
    rows += [(k, v) for k, v in (("tpr", s.tpr), ("tnr", s.tnr)) if v]
    body = "".join(f"<tr><td>{esc(name)}</td><td>{esc(with_ci(v.value if v else None, v.ci if v else None))}</td></tr>"
                   for name, v in rows)
    notes = "".join(f"<p class='note'>{esc(n)}</p>" for n in s.notes or [])
    return (f"<p>target {esc(str(s.target))}; {s.n.labelled} labelled, {s.n.unlabelled} unlabelled "
            f"items</p><table><tr><th>quantity</th><th>value [interval]</th></tr>{body}</table>{notes}"
            f"<p class='note'>source: <code>{esc(s.source.path)}</code></p>")
