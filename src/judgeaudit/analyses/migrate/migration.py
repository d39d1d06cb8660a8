"""``migrate``: can a new judge replace the one being retired, on the user's anchors?

Input is a table with one row per anchor (an item both judges graded):

* ``anchor_id``; ``old`` and ``new``: each judge's verdict as a number (a grade on its scale; for pairwise
  choices A = 1, tie = ½, B = 0; NaN where the judge gave no usable verdict);
* optional ``old_regrade``: the old judge's verdict on the same anchor a second time (its re-grade: the ceiling
  the new judge's agreement is read against);
* optional ``cluster``: anchors that share it are resampled together (cluster bootstrap); without it, each anchor
  is its own unit;
* optional ``system``: the system an anchor's output comes from (rank agreement of systems);
* optional ``label``: a human label on the old judge's scale (or 0/1 pass, or A/B as 1/0), NaN where unlabelled.

Quantities (``raw``: new vs old as graded; ``linked``: the new judge's grades through a monotone link fitted on
other anchors, graded form only), each with a 95% percentile interval over ``n_boot`` cluster resamples:

* ``mean_diff`` — mean(new − old) (pairwise: the difference of the rate at which A is preferred, a win rate);
  equivalence: TOST within ±margin;
* ``pass_rate_diff`` — with a threshold: the difference of pass rates; TOST within ±margin;
* ``agreement`` — κ(new, old) − κ(old re-grade, old): quadratic-weighted κ on a graded scale, Cohen's κ on
  choices; non-inferiority at −margin. Without a re-grade the old judge's re-grade κ is taken as 1 (a
  deterministic judge), and said so;
* ``raw_agreement`` — the share of anchors graded identically, beside the old judge's re-grade share
  (descriptive);
* ``bland_altman`` — the limits of agreement mean(d) ∓ 1.96·SD(d) of d = new − old (descriptive unless a margin
  is given: both limits within ±margin);
* ``system_tau`` — Kendall's τ_b of the systems' mean grades under the two judges (descriptive unless a margin:
  τ ≥ 1 − margin);
* ``human_agreement`` — with labels: each judge's agreement with the humans (quadratic κ for graded labels,
  accuracy for 0/1 or A/B labels) and new − old (non-inferiority at −margin); ``ppi_old``/``ppi_new``: the PPI++
  estimate of the mean label under each judge (descriptive).

The verdict (``decide``): EQUIVALENT when every quantity with a margin is equivalent; else LINKABLE when every
linked quantity is, on held-out anchors; else BLIND when a deciding quantity could not have passed even at no
difference (with the anchors needed) and none lies wholly outside its margin; else NOT_COMPARABLE. An audit quantity (validity, CAP, world) worse beyond
its margin makes the verdict NOT_COMPARABLE whatever the grades say.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.analyses.migrate import equivalence as eq
from judgeaudit.analyses.migrate import statistics as st
from judgeaudit.analyses.migrate.link import cross_fit, fit_link
from judgeaudit.analyses.migrate.result import MigrateResult, Quantity
from judgeaudit.stats.resample import bootstrap_counts

#: Default margins, and why (README "Judge migration"). ``mean`` is a fraction of the old scale's range.
MARGINS: dict[str, float] = {"mean": 0.05, "pass_rate": 0.03, "win_rate": 0.03, "agreement": 0.10,
                             "human_accuracy": 0.03, "human_kappa": 0.10}
MARGIN_REASONS: dict[str, str] = {
    "mean": "a mean grade within 5% of the old scale's range (0.4 on 1–9, 0.45 on 1–10): less than half a grade "
            "point, below the step users read as a change",
    "pass_rate": "a pass rate within ±0.03: the precision pass rates and accuracies are compared at in reports",
    "win_rate": "a win rate (the rate A is preferred) within ±0.03, as a pass rate",
    "agreement": "κ(new, old) at least the old judge's own re-grade κ minus 0.10: the new judge agrees with the old "
                 "nearly as well as the old judge agrees with itself",
    "human_accuracy": "agreement with the humans (accuracy) no more than 0.03 below the old judge's",
    "human_kappa": "agreement with the humans (quadratic κ) no more than 0.10 below the old judge's",
}
OPTIONAL_MARGINS = ("bland_altman", "system_tau")
MARGIN_NAMES = (*MARGINS, *OPTIONAL_MARGINS)


def _codes(col: pd.Series | None, n: int) -> tuple[np.ndarray, int]:
    if col is None:
        return np.arange(n), n
    codes, uniques = pd.factorize(col.astype(str), sort=False)
    return codes.astype(np.int64), len(uniques)


def _interval(boot: np.ndarray, level: float) -> list[float]:
    b = boot[np.isfinite(boot)]
    if not len(b):
        return [float("nan"), float("nan")]
    a = (1 - level) / 2
    return [float(np.quantile(b, a)), float(np.quantile(b, 1 - a))]


class _Design:
    """The anchors' clusters and the bootstrap weights every quantity shares (one paired resample)."""

    def __init__(self, table: pd.DataFrame, n_boot: int, seed: int):
        self.n = len(table)
        self.codes, self.n_clusters = _codes(table["cluster"] if "cluster" in table else None, self.n)
        self.grouped = "cluster" in table and self.n_clusters < self.n
        # row 0: the estimate (every cluster once); rows 1…: the resamples
        self.weights = np.vstack([np.ones((1, self.n_clusters)),
                                  bootstrap_counts(self.n_clusters, n_boot, seed).astype(float)])

    def sums(self, columns: np.ndarray) -> np.ndarray:
        return st.weighted(self.weights, st.cluster_sums(self.codes, columns, self.n_clusters))

    def unit(self) -> str:
        return "cluster" if self.grouped else "anchor"


def _quantity(name: str, label: str, values: np.ndarray, *, design: _Design, level: float, unit_n: int,
              definition: str, test: str = "descriptive", margin: float | None = None, alpha: float = eq.ALPHA,
              paired: tuple[np.ndarray, np.ndarray] | None = None, spread: float = 0.0,
              bounds: tuple[float, float] = (-np.inf, np.inf), **extra) -> Quantity:
    """One quantity from its estimate (``values[0]``) and resamples (``values[1:]``). ``spread``: how far one unit
    can move it; where no resample varies (every unit alike) its intervals are widened by ``spread`` times the
    share of units that could differ unseen (``equivalence.unseen_share``), never left at zero width, and never
    past the quantity's ``bounds`` (a share of 1 widens to [1 − f, 1], as an exact interval for n of n does)."""
    est, boot = float(values[0]), values[1:]
    ci = _interval(boot, level)
    flat = not eq.resamples_vary(boot)
    if flat and spread > 0 and np.isfinite(est):
        f = spread * eq.unseen_share(unit_n, (1 - level) / 2)
        ci = [max(min(ci[0], est - f), bounds[0]), min(max(ci[1], est + f), bounds[1])]
    q = dict(name=name, label=label, estimate=est, ci=ci, test=test, margin=margin,
             unit=design.unit(), n_units=unit_n, definition=definition, extra=extra)
    if not np.isfinite(est):
        return Quantity(**q, status="not_computable")
    if test == "descriptive" or margin is None:
        return Quantity(**{**q, "test": "descriptive"})
    floor = spread * eq.unseen_share(unit_n, alpha) if flat else 0.0
    if test == "two_sided":
        t = eq.two_sided(est, boot, margin, n=unit_n, alpha=alpha, paired=paired, floor=floor)
    else:
        t = eq.non_inferior(est, boot, margin, n=unit_n, alpha=alpha, floor=floor)
    return Quantity(**q, **t)


def _pass(x: np.ndarray, threshold: float | None, higher_better: bool) -> np.ndarray:
    out = (x >= threshold) if higher_better else (x <= threshold)
    return np.where(np.isnan(x), np.nan, out.astype(float))


def _grade_quantities(old: np.ndarray, new: np.ndarray, regrade: np.ndarray | None, *, design: _Design,
                      form: str, rng: float, threshold: float | None, higher_better: bool, margins: dict,
                      level: float, alpha: float, prefix: str = "") -> list[Quantity]:
    """mean_diff, pass_rate_diff, agreement, raw_agreement, bland_altman of ``new`` against ``old``."""
    out = []
    both = ~(np.isnan(old) | np.isnan(new))
    d = np.where(both, new - old, np.nan)
    n_units = len(np.unique(design.codes[both]))
    pairwise = form == "pairwise"
    paired = None if design.grouped else (new[both], old[both])
    mean = st.mean_from(design.sums(st.mean_columns(d, both)))
    m_mean = margins["win_rate"] if pairwise else margins["mean"] * rng
    out.append(_quantity(
        "mean_diff", "win-rate difference (A preferred)" if pairwise else "mean grade difference", mean,
        design=design, level=level, unit_n=n_units, test="two_sided", margin=m_mean, alpha=alpha, paired=paired,
        spread=rng,
        definition=f"{prefix}mean(new − old) over anchors both judges answered" + (
            " (A = 1, tie = ½, B = 0)" if pairwise else "")))
    if threshold is not None and not pairwise:
        pn, po = _pass(new, threshold, higher_better), _pass(old, threshold, higher_better)
        dp = np.where(both, pn - po, np.nan)
        out.append(_quantity(
            "pass_rate_diff", "pass-rate difference", st.mean_from(design.sums(st.mean_columns(dp, both))),
            design=design, level=level, unit_n=n_units, test="two_sided", margin=margins["pass_rate"], alpha=alpha,
            paired=None if design.grouped else (pn[both], po[both]), spread=1.0,
            definition=f"{prefix}pass rate(new) − pass rate(old), pass = grade "
                       f"{'≥' if higher_better else '≤'} {threshold:g}"))
    # agreement against the old judge's own re-grade agreement
    if pairwise:
        cats = np.array([0.0, 0.5, 1.0])
        k_new, a_new = st.cohen_kappa_from(design.sums(st.category_columns(new, old, cats)), 3)
        kind = "Cohen's κ on A/tie/B"
    else:
        k_new = st.quadratic_kappa_from(design.sums(st.quadratic_kappa_columns(new, old)))
        a_new = st.mean_from(design.sums(st.exact_agreement_columns(new, old))[:, [1, 0]])
        kind = "quadratic-weighted κ"
    has_regrade = regrade is not None and np.isfinite(regrade).any()
    if has_regrade:
        if pairwise:
            k_old, a_old = st.cohen_kappa_from(design.sums(st.category_columns(regrade, old, cats)), 3)
        else:
            k_old = st.quadratic_kappa_from(design.sums(st.quadratic_kappa_columns(regrade, old)))
            a_old = st.mean_from(design.sums(st.exact_agreement_columns(regrade, old))[:, [1, 0]])
        ceiling = "the old judge's κ with its own re-grade on the same anchors"
    else:
        k_old, a_old = np.ones_like(k_new), np.ones_like(a_new)
        ceiling = "1 (no re-grade of the old judge was given: a deterministic judge's re-grade agreement)"
    out.append(_quantity(
        "agreement", f"agreement ({kind}) minus the old judge's re-grade agreement", k_new - k_old, design=design,
        level=level, unit_n=n_units, test="non_inferiority", margin=margins["agreement"], alpha=alpha,
        spread=2.0,
        definition=f"{prefix}{kind}(new, old) − ceiling; ceiling = {ceiling}",
        kappa_new_old=float(k_new[0]), kappa_new_old_ci=_interval(k_new[1:], level),
        ceiling=float(k_old[0]), ceiling_ci=_interval(k_old[1:], level), regrade_given=bool(has_regrade)))
    if not prefix:   # a linked grade is continuous: exact agreement has no meaning for it
        out.append(_quantity(
            "raw_agreement", "share of anchors graded identically", a_new, design=design, level=level,
            unit_n=n_units, spread=1.0, bounds=(0.0, 1.0), definition="share of anchors where new = old; beside it the old judge's own re-grade "
                                       "share", old_regrade_share=float(a_old[0]) if has_regrade else None))
    if not pairwise:
        lo, hi = st.bland_altman_from(design.sums(st.bland_altman_columns(d)))
        m_ba = margins.get("bland_altman")
        widest = np.maximum(np.abs(lo), np.abs(hi))
        q = _quantity("bland_altman", "Bland–Altman limits of agreement (widest)", widest, design=design,
                      level=level, unit_n=n_units, test="two_sided" if m_ba else "descriptive", margin=m_ba,
                      alpha=alpha, spread=rng,
                      definition=f"{prefix}mean(d) ∓ 1.96·SD(d), d = new − old; the quantity is the larger "
                                 "absolute limit",
                      lower=float(lo[0]), upper=float(hi[0]), lower_ci=_interval(lo[1:], level),
                      upper_ci=_interval(hi[1:], level))
        out.append(q)
    return out


def _system_quantity(table: pd.DataFrame, old: np.ndarray, new: np.ndarray, design: _Design, margins: dict,
                     level: float, alpha: float) -> Quantity | None:
    if "system" not in table:
        return None
    sys_codes, n_sys = _codes(table["system"], len(table))
    both = ~(np.isnan(old) | np.isnan(new))
    cols = np.zeros((len(table), 3 * n_sys))
    rows = np.arange(len(table))
    cols[rows, sys_codes] = both
    cols[rows, n_sys + sys_codes] = np.where(both, old, 0.0)
    cols[rows, 2 * n_sys + sys_codes] = np.where(both, new, 0.0)
    s = design.sums(cols)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_old, m_new = s[:, n_sys:2 * n_sys] / s[:, :n_sys], s[:, 2 * n_sys:] / s[:, :n_sys]
    tau = st.kendall_tau_b(m_old, m_new)
    m = margins.get("system_tau")
    return _quantity("system_tau", "rank agreement of systems (Kendall τ_b)", tau - 1.0 if m else tau,
                     design=design, level=level, unit_n=n_sys, test="non_inferiority" if m else "descriptive",
                     margin=m, alpha=alpha, spread=2.0,
                     definition="Kendall τ_b between the systems' mean grades under old and new"
                                + (" (minus 1: the test is τ ≥ 1 − margin)" if m else ""), systems=int(n_sys))


def _human_quantities(table: pd.DataFrame, old: np.ndarray, new: np.ndarray, design: _Design, *, form: str,
                      margins: dict, level: float, alpha: float, threshold: float | None,
                      higher_better: bool) -> list[Quantity]:
    if "label" not in table:
        return []
    y = pd.to_numeric(table["label"], errors="coerce").to_numpy(dtype=float)
    lab = np.isfinite(y)
    if lab.sum() < 2:
        return []
    binary = form == "pairwise" or set(np.unique(y[lab])) <= {0.0, 1.0}
    out = []
    n_lab = len(np.unique(design.codes[lab]))
    if binary:
        def correct(x: np.ndarray) -> np.ndarray:
            v = x if form == "pairwise" else _pass(x, threshold, higher_better) if threshold is not None else x
            return np.where(lab & np.isfinite(v), 1.0 - np.abs(v - y), np.nan)

        c_old, c_new = correct(old), correct(new)
        ok = np.isfinite(c_old) & np.isfinite(c_new)
        acc_old = st.mean_from(design.sums(st.mean_columns(c_old, ok)))
        acc_new = st.mean_from(design.sums(st.mean_columns(c_new, ok)))
        out.append(_quantity(
            "human_agreement", "accuracy against the human labels, new − old", acc_new - acc_old, design=design,
            level=level, unit_n=n_lab, test="non_inferiority", margin=margins["human_accuracy"], alpha=alpha,
            spread=1.0,
            definition="accuracy(new) − accuracy(old) on the labelled anchors both answered",
            old=float(acc_old[0]), new=float(acc_new[0]), old_ci=_interval(acc_old[1:], level),
            new_ci=_interval(acc_new[1:], level), labelled=int(ok.sum())))
    else:
        yl = np.where(lab, y, np.nan)
        k_old = st.quadratic_kappa_from(design.sums(st.quadratic_kappa_columns(old, yl)))
        k_new = st.quadratic_kappa_from(design.sums(st.quadratic_kappa_columns(new, yl)))
        out.append(_quantity(
            "human_agreement", "quadratic κ with the human labels, new − old", k_new - k_old, design=design,
            level=level, unit_n=n_lab, test="non_inferiority", margin=margins["human_kappa"], alpha=alpha,
            spread=2.0, definition="quadratic-weighted κ(new, labels) − κ(old, labels) on the labelled anchors",
            old=float(k_old[0]), new=float(k_new[0]), old_ci=_interval(k_old[1:], level),
            new_ci=_interval(k_new[1:], level), labelled=int(lab.sum())))
    out.extend(_ppi(y, lab, old, "ppi_old", "old", level, design))
    out.extend(_ppi(y, lab, new, "ppi_new", "new", level, design))
    return out


def _ppi(y: np.ndarray, lab: np.ndarray, x: np.ndarray, name: str, who: str, level: float,
         design: _Design) -> list[Quantity]:
    """The PPI++ estimate of the mean label with this judge's verdicts as predictions (descriptive)."""
    from judgeaudit.analyses.calibrate.ppi import ppi_mean_ci, ppi_mean_pointestimate

    usable = np.isfinite(x)
    yl, xl, xu = y[lab & usable], x[lab & usable], x[~lab & usable]
    if len(yl) < 2 or len(xu) < 2 or np.std(yl) == 0:
        return []
    est = float(ppi_mean_pointestimate(yl, xl, xu))
    lo, hi = ppi_mean_ci(yl, xl, xu, level=level)
    return [Quantity(name=name, label=f"PPI++ estimate of the mean label with the {who} judge", estimate=est,
                     ci=[float(lo), float(hi)], test="descriptive", unit=design.unit(), n_units=int(len(yl)),
                     definition="PPI++ mean (judgeaudit.analyses.calibrate.ppi) with the judge's verdicts as "
                                "predictions; the labelled anchors are assumed a uniformly random subset",
                     extra={"unlabelled": int(len(xu))})]


AUDIT_MARGIN = 0.10
"""Default margin of an audit quantity: S and R of the validity runs no more than 0.10 worse; each CAP condition and
each world gain within ±0.10 of the old judge's (``card.migrate_audits``)."""


def audit_quantity(name: str, label: str, diff: float, ci90: tuple[float, float], ci95: tuple[float, float], *,
                   margin: float | None, n: int, unit: str, definition: str, two_sided: bool = False) -> Quantity:
    """An audit quantity (new − old, e.g. R of the two judges' validity runs, each at its own matched point) from
    its paired intervals. Non-inferiority (``two_sided`` False, S and R: more invariant or more sensitive is no
    loss): ``equivalent`` (no worse: the 90% interval's lower end, a one-sided 95% bound, above −margin),
    ``not_equivalent`` and ``decisive`` when the whole 95% interval lies below −margin (worse beyond its margin),
    else ``blind`` (the runs cannot tell). Two-sided (a TOST: CAP conditions, world gains): ``equivalent`` when the
    90% interval lies within ±margin, ``decisive`` when the whole 95% interval lies beyond it on either side."""
    q = dict(name=name, label=label, estimate=diff, ci=list(ci95), unit=unit, n_units=n, definition=definition)
    if margin is None or not np.isfinite(diff):
        return Quantity(**q, test="descriptive")
    method = "paired cluster bootstrap of the two runs (card diff's method)"
    if two_sided:
        ok = -margin < ci90[0] and ci90[1] < margin
        beyond = ci95[1] < -margin or ci95[0] > margin
        status = "equivalent" if ok else "not_equivalent" if beyond else "blind"
        return Quantity(**q, test="two_sided", margin=margin, tost_interval=list(ci90), method=method,
                        status=status, decisive=beyond)
    ok = ci90[0] > -margin
    worse = ci95[1] < -margin
    status = "equivalent" if ok else "not_equivalent" if worse else "blind"
    return Quantity(**q, test="non_inferiority", margin=margin, tost_interval=[ci90[0], None], method=method,
                    status=status, decisive=worse)


def decide(raw: list[Quantity], linked: list[Quantity], audits: list[Quantity]) -> tuple[str, list[str]]:
    """The verdict and its reasons, from the quantities' statuses (module docstring)."""
    def stated(qs: list[Quantity]) -> list[Quantity]:
        return [q for q in qs if q.test != "descriptive"]

    reasons = []
    worse = [q for q in stated(audits) if q.decisive]
    undecided = [q for q in stated(audits) if q.status == "blind"]
    r, li = stated(raw), stated(linked)
    uncomputable = [q for q in r if q.status == "not_computable"]
    if uncomputable:
        return "BLIND", [f"{q.label}: not computable on these anchors" for q in uncomputable]
    if r and all(q.status == "equivalent" for q in r):
        verdict = "EQUIVALENT"
        reasons.append("every quantity with a margin is equivalent within it (TOST, α = 0.05)")
    elif li and all(q.status == "equivalent" for q in li):
        verdict = "LINKABLE"
        failing = ", ".join(q.name for q in r if q.status != "equivalent")
        reasons.append(f"raw grades not shown equivalent ({failing}); after the monotone link every quantity is "
                       "equivalent on held-out anchors")
    else:
        deciding = li or r
        blind = [q for q in deciding if q.status == "blind"]
        decisive = [q for q in deciding if q.decisive]
        if blind and not worse and not decisive:
            need = max(q.anchors_needed or 0 for q in blind)
            reasons.append(f"too few anchors to decide even at no difference ({', '.join(q.name for q in blind)}); "
                           f"about {need} would be needed at the observed variance")
            return "BLIND", reasons
        verdict = "NOT_COMPARABLE"
        failing = [q.name for q in (decisive or [q for q in deciding if q.status != "equivalent"])]
        reasons.append(f"not equivalent{' even after the link' if li else ''}: {', '.join(failing)}")
    if worse:
        reasons.append("an audit quantity is beyond its margin (the new judge measures something else): "
                       + ", ".join(f"{q.name} ({'worse' if (q.estimate or 0) < 0 else 'higher'} by "
                                   f"{abs(q.estimate or 0):.3f}, margin {q.margin:g})" for q in worse))
        return "NOT_COMPARABLE", reasons
    if undecided and verdict in ("EQUIVALENT", "LINKABLE"):
        reasons.append("but the audits cannot tell whether the new judge is as valid: "
                       + ", ".join(q.name for q in undecided) + " (their intervals straddle the margin)")
        return "BLIND", reasons
    return verdict, reasons


def migrate(table: pd.DataFrame, *, form: str = "graded", old_judge: str = "old", new_judge: str = "new",
            old_scale: dict | None = None, new_scale: dict | None = None, threshold: float | None = None,
            margins: dict[str, float] | None = None, audits: list[Quantity] | None = None,
            audit_notes: list[str] | None = None, audit_sources: list[dict] | None = None, level: float = 0.95,
            alpha: float = eq.ALPHA, n_boot: int = 2000, seed: int = 0, link: bool = True,
            link_method: str = "equipercentile", with_link: bool = False):
    """The migration result of ``table`` (module docstring); with ``with_link`` also the link fitted on every
    anchor (``link.Link``, None where none was fitted), as ``(result, link)``. ``audits``: the audit quantities of
    both judges' own runs (``card.migrate_audits``), with notes on what could not be compared and the runs read."""
    if form not in ("graded", "pairwise"):
        raise ValueError(f"form must be graded or pairwise, got {form!r}")
    if link_method not in ("equipercentile", "isotonic"):
        raise ValueError(f"link_method must be equipercentile or isotonic, got {link_method!r}")
    margins = {**MARGINS, **(margins or {})}
    table = table.reset_index(drop=True)
    old = pd.to_numeric(table["old"], errors="coerce").to_numpy(dtype=float)
    new = pd.to_numeric(table["new"], errors="coerce").to_numpy(dtype=float)
    regrade = (pd.to_numeric(table["old_regrade"], errors="coerce").to_numpy(dtype=float)
               if "old_regrade" in table else None)
    design = _Design(table, n_boot, seed)
    old_scale = old_scale or {}
    new_scale = new_scale or {}
    if form == "pairwise":
        rng, higher_better = 1.0, True
    else:
        lo = old_scale.get("min", np.nanmin(old) if np.isfinite(old).any() else 0.0)
        hi = old_scale.get("max", np.nanmax(old) if np.isfinite(old).any() else 1.0)
        rng = float(hi - lo) or 1.0
        higher_better = old_scale.get("higher", "better") == "better"
    if form == "graded" and old_scale.get("kind") == "pass_fail" and threshold is None:
        threshold = 1.0
    kw = dict(design=design, form=form, rng=rng, threshold=threshold, higher_better=higher_better,
              margins=margins, level=level, alpha=alpha)
    raw = _grade_quantities(old, new, regrade, **kw)
    sys_q = _system_quantity(table, old, new, design, margins, level, alpha)
    raw += [sys_q] if sys_q else []
    raw += _human_quantities(table, old, new, design, form=form, margins=margins, level=level, alpha=alpha,
                             threshold=threshold, higher_better=higher_better)
    notes = list(audit_notes or [])
    n_old_missing, n_new_missing = int(np.isnan(old).sum()), int(np.isnan(new).sum())
    if n_old_missing or n_new_missing:
        notes.append(f"{n_old_missing} anchor(s) without a usable old verdict and {n_new_missing} without a usable "
                     "new one enter no paired quantity")
    if regrade is None or not np.isfinite(regrade).any():
        notes.append("no re-grade of the old judge: its re-grade agreement is taken as 1, so the new judge must "
                     "agree with it within the agreement margin of perfect")
    linked_q: list[Quantity] = []
    fitted = None
    both = ~(np.isnan(old) | np.isnan(new))
    increasing = (new_scale.get("higher", "better") == old_scale.get("higher", "better"))
    if link and form == "graded" and both.sum() >= 4 and len(np.unique(design.codes[both])) >= 4:
        ell = np.full(len(table), np.nan)
        sub = np.flatnonzero(both)
        ell[sub] = cross_fit(new[sub], old[sub], design.codes[sub], increasing=increasing, seed=seed,
                             method=link_method)
        linked_q = _grade_quantities(old, ell, regrade, prefix="linked (held-out): ", **kw)
        if with_link:
            sub_codes, _ = _codes(pd.Series(design.codes[sub]), len(sub))
            n_sub = int(sub_codes.max()) + 1
            fitted = fit_link(new[sub], old[sub], sub_codes, bootstrap_counts(n_sub, min(n_boot, 1000), seed + 1),
                              increasing=increasing, level=level, old_judge=old_judge, new_judge=new_judge,
                              old_scale=old_scale or None, new_scale=new_scale or None, method=link_method)
    elif form == "pairwise":
        notes.append("pairwise choices have no scale to link: the verdict is EQUIVALENT, NOT_COMPARABLE or BLIND")
    verdict, reasons = decide(raw, linked_q, audits or [])
    result = MigrateResult(
        form=form, old_judge=old_judge, new_judge=new_judge, old_scale=old_scale or None,
        new_scale=new_scale or None, threshold=threshold, n_anchors=len(table), n_clusters=design.n_clusters,
        unit=design.unit(), level=level, alpha=alpha, n_boot=n_boot, seed=seed,
        margins={k: v for k, v in margins.items() if v is not None}, verdict=verdict, reasons=reasons, raw=raw,
        linked=linked_q, audits=audits or [], audit_sources=audit_sources or [], link_hash=fitted.hash if fitted else None, notes=notes,
        definitions={"margins": "; ".join(f"{k}: {v}" for k, v in MARGIN_REASONS.items()),
                     "link": f"{link_method} link of new onto old (analyses.migrate.link), cross-fitted over 2 "
                             "folds of whole clusters: each anchor's linked grade comes from a link fitted without "
                             "it"})
    return (result, fitted) if with_link else result
