"""How many human labels: the labelled sample size at which the 95% interval of ``calibrate`` reaches a
target width, for PPI++ beside the human-only interval, checked by simulation.

**Formula.** With the population moments v_Y = var(Y), v_h = var(Ŷ), c = cov(Y, Ŷ) and N unlabelled
items, the PPI++ variance at its optimal λ = c/((1 + n/N)·v_h) (Angelopoulos, Duchi & Zrnic 2023) is

    se²(n) = (1/n)·[v_Y − c²/((1 + n/N)·v_h)],

decreasing in n; the human-only variance is v_Y/n. The planned n is the least n with 2z·se(n) ≤ the
target width, and at least the labels that support a normal interval (``edges.MIN_SUPPORT`` of each
class at the stated prevalence; below it ``calibrate`` prints the wider distribution-free hull). For a
binary judge of prevalence p with rates TPR and TNR: q = p·TPR + (1 − p)(1 − TNR), v_h = q(1 − q),
v_Y = p(1 − p), c = p·(TPR − q).

**Check.** At the planned n, ``sets`` data sets are simulated (the binary judge as stated; a pilot's
graded pairs resampled with replacement) and the interval ``calibrate`` would print (``edges``) is
computed on each: its mean width and its coverage are reported beside the formula's width.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm

from judgeaudit.analyses.calibrate.edges import MIN_SUPPORT
from judgeaudit.analyses.calibrate.simulate import binary_sets, guarded_batch

MAX_N = 1_000_000


def ppi_se(n: int, v_y: float, v_h: float, c: float, big_n: int) -> float:
    """The PPI++ standard error at the optimal λ (the formula of the module)."""
    gain = c * c / ((1.0 + n / big_n) * v_h) if v_h > 0 else 0.0
    return math.sqrt(max(v_y - gain, 0.0) / n)


def _least_n(width: float, se_at, lo: int = 2) -> int | None:  # noqa: ANN001
    z2 = 2.0 * float(norm.ppf(0.975))
    if z2 * se_at(MAX_N) > width:
        return None
    hi = lo
    while z2 * se_at(hi) > width:
        hi *= 2
    lo = max(2, hi // 2)
    while lo < hi:                      # se(n) decreases in n: bisect for the least n that reaches the width
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if z2 * se_at(mid) > width else (lo, mid)
    return hi


def _simulate(draw, n: int, truth: float, lohi: tuple[float, float], binary: bool) -> dict[str, float]:  # noqa: ANN001
    y, yh, yu = draw(n)
    _, lo, hi, widened = guarded_batch(y, yh, yu, *lohi, binary=binary)
    if binary:
        from statsmodels.stats.proportion import proportion_confint

        hlo, hhi = proportion_confint(y.sum(1).astype(int), n, alpha=0.05, method="beta")
    else:
        hse = y.std(1) / math.sqrt(n)
        half = (lohi[1] - lohi[0]) * math.sqrt(math.log(40.0) / (2.0 * n))
        m = y.mean(1)
        sup = n * np.maximum(np.minimum(m - lohi[0], lohi[1] - m), 0.0) / (lohi[1] - lohi[0])
        w = sup < MIN_SUPPORT
        hlo = np.where(w, np.minimum(m - 1.959963984540054 * hse, np.maximum(lohi[0], m - half)),
                       m - 1.959963984540054 * hse)
        hhi = np.where(w, np.maximum(m + 1.959963984540054 * hse, np.minimum(lohi[1], m + half)),
                       m + 1.959963984540054 * hse)
    return {"ppi_width": float(np.mean(hi - lo)), "ppi_coverage": float(np.mean((lo <= truth) & (truth <= hi))),
            "ppi_widened": float(np.mean(widened)), "human_width": float(np.mean(hhi - hlo)),
            "human_coverage": float(np.mean((hlo <= truth) & (truth <= hhi)))}


def plan_binary(width: float, prevalence: float, tpr: float, tnr: float, unlabelled: int, *, sets: int = 400,
                seed: int = 0) -> dict[str, Any]:
    """The plan for a binary target from a stated (or pilot-estimated) prevalence, TPR and TNR."""
    p = prevalence
    q = p * tpr + (1 - p) * (1 - tnr)
    v_y, v_h, c = p * (1 - p), q * (1 - q), p * (tpr - q)
    floor = math.ceil(MIN_SUPPORT / min(p, 1 - p)) if 0 < p < 1 else None
    out = _plan(width, v_y, v_h, c, unlabelled, floor)
    out["inputs"] = {"prevalence": p, "tpr": tpr, "tnr": tnr, "unlabelled": unlabelled, "judge_rate": q}
    for key in ("ppi", "human"):
        n = out[key]["n"]
        if n is not None and n <= 20_000:
            out[key]["simulated"] = _simulate(
                lambda m, s=seed: binary_sets(sets, m, unlabelled, p=p, tpr=tpr, tnr=tnr, seed=s), n, p, (0.0, 1.0),
                True)
    out["sets"] = sets
    return out


def plan_pairs(width: float, y, yhat, unlabelled: int, lohi: tuple[float, float], *, sets: int = 400,  # noqa: ANN001
               seed: int = 0) -> dict[str, Any]:
    """The plan from a pilot's labelled (Y, Ŷ) pairs (any target): moments from the pairs, the check
    resamples them (labelled and unlabelled items alike) with replacement."""
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    v_y, v_h = float(np.var(y, ddof=1)), float(np.var(yhat, ddof=1))
    c = float(np.cov(y, yhat, ddof=1)[0, 1])
    rng = np.random.default_rng(seed)
    mean = float(y.mean())
    r = min(mean - lohi[0], lohi[1] - mean) / (lohi[1] - lohi[0])
    floor = math.ceil(MIN_SUPPORT / r) if r > 0 else None
    out = _plan(width, v_y, v_h, c, unlabelled, floor)
    out["inputs"] = {"pilot_labels": len(y), "var_y": v_y, "var_yhat": v_h, "cov": c, "unlabelled": unlabelled,
                     "scale": list(lohi)}
    binary = bool(np.isin(y, (0.0, 1.0)).all() and lohi == (0.0, 1.0))

    def draw(m: int):  # noqa: ANN202
        i = rng.integers(0, len(y), (sets, m))
        u = rng.integers(0, len(y), (sets, unlabelled))
        return y[i], yhat[i], yhat[u]

    for key in ("ppi", "human"):
        n = out[key]["n"]
        if n is not None and n <= 20_000:
            out[key]["simulated"] = _simulate(draw, n, mean, lohi, binary)
    out["sets"] = sets
    return out


def _plan(width: float, v_y: float, v_h: float, c: float, big_n: int, floor: int | None) -> dict[str, Any]:
    z2 = 2.0 * float(norm.ppf(0.975))
    n_ppi = _least_n(width, lambda n: ppi_se(n, v_y, v_h, c, big_n))
    n_hum = _least_n(width, lambda n: math.sqrt(v_y / n))
    out: dict[str, Any] = {"width": width, "support_floor": floor}
    for key, n, se in (("ppi", n_ppi, lambda n: ppi_se(n, v_y, v_h, c, big_n)), ("human", n_hum,
                                                                               lambda n: math.sqrt(v_y / n))):
        m = None if n is None else max(n, floor or 0)
        out[key] = {"n_formula": n, "n": m, "formula_width": None if m is None else z2 * se(m)}
    return out


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """The plan as the sentences ``calibrate --plan`` prints."""
    w = plan["width"]
    out = []
    for key, name in (("ppi", "PPI++"), ("human", "human labels only")):
        e = plan[key]
        if e["n"] is None:
            out.append(f"{name}: no number of labels reaches width {w:g} with {plan['inputs']['unlabelled']} "
                       "unlabelled items.")
            continue
        s = e.get("simulated")
        check = (f"; simulated ({plan['sets']} sets) mean width {s[f'{key}_width']:.4f}, coverage "
                 f"{s[f'{key}_coverage']:.3f}") if s else ""
        floor = (f" (the formula gives {e['n_formula']}; {plan['support_floor']} labels put {MIN_SUPPORT} of each "
                 "class among them)") if e["n"] != e["n_formula"] else ""
        out.append(f"{name}: {e['n']} labels{floor} for a 95% interval of width {e['formula_width']:.4f} ≤ {w:g}"
                   f"{check}.")
    return out
