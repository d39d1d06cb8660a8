"""The monotone link from a new judge's grades to the old judge's scale, increasing when both judges' scales
point the same way (both ``higher = better`` or both ``worse``) and decreasing otherwise. Two methods:

* ``equipercentile`` (the default): each new grade goes to the old judge's grades at the same percentiles —
  the mean of the old quantile function over the band of percentiles the new grade occupies,
  ``ℓ(v) = (1/(b − a)) ∫ₐᵇ Q_old(u) du`` with ``[a, b] = [F_new(v⁻), F_new(v)]``. The linked grades have the old
  grades' mean exactly and their distribution as far as the new grades' ties allow, so a long-running mean or
  pass rate stays comparable (equipercentile equating, Kolen & Brennan, *Test Equating*, ch. 2, with
  band-averaged quantiles in place of the continuised percentile rank).
* ``isotonic``: isotonic regression of the old grade on the new (scikit-learn's ``IsotonicRegression``): the
  least-squares monotone map, best per anchor, but it pulls grades towards the middle (a pass rate moves).

A new grade between two fitted points is interpolated linearly and one outside them takes the nearest end (as
``IsotonicRegression.predict`` with ``out_of_bounds="clip"``).

* ``cross_fit``: every anchor's linked grade from a link fitted on the other folds only (folds are whole
  clusters), so the equivalence of linked grades is tested on anchors the link never saw.
* ``fit_link``: the link on every anchor, with a percentile band from refitting it on cluster-bootstrap
  resamples, and a SHA-256 of its canonical JSON that every linked verdict records.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression


METHODS = ("equipercentile", "isotonic")


def _equipercentile(x: np.ndarray, y: np.ndarray, w: np.ndarray | None,
                    increasing: bool) -> tuple[np.ndarray, np.ndarray]:
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=float)
    order = np.argsort(y, kind="stable")
    ys, wy = y[order], w[order]
    total = wy.sum()
    cw = np.concatenate([[0.0], np.cumsum(wy) / total])            # the old quantile function's steps
    cyw = np.concatenate([[0.0], np.cumsum(wy * ys) / total])

    def integral(u: np.ndarray) -> np.ndarray:                      # ∫₀ᵘ Q_old
        k = np.clip(np.searchsorted(cw, u, side="left"), 1, len(ys))
        return cyw[k - 1] + (u - cw[k - 1]) * ys[k - 1]

    xv, inv = np.unique(x, return_inverse=True)
    mass = np.bincount(inv, weights=w, minlength=len(xv)) / w.sum()
    if not increasing:
        mass = mass[::-1]
    b = np.cumsum(mass)
    a = b - mass
    lv = (integral(np.minimum(b, 1.0)) - integral(a)) / np.where(mass > 0, mass, np.nan)
    return xv.astype(float), (lv if increasing else lv[::-1])


def _fit(x: np.ndarray, y: np.ndarray, w: np.ndarray | None, increasing: bool,
         method: str = "equipercentile") -> tuple[np.ndarray, np.ndarray]:
    if method == "equipercentile":
        return _equipercentile(x, y, w, increasing)
    iso = IsotonicRegression(increasing=increasing, out_of_bounds="clip")
    iso.fit(x, y, sample_weight=w)
    return np.asarray(iso.X_thresholds_, dtype=float), np.asarray(iso.y_thresholds_, dtype=float)


def predict(xs: np.ndarray, ys: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The link's value at ``x``: linear between fitted points, the nearest end outside them."""
    x = np.asarray(x, dtype=float)
    if len(xs) == 1:
        return np.full(x.shape, ys[0])
    return np.interp(x, xs, ys)


def cross_fit(x: np.ndarray, y: np.ndarray, codes: np.ndarray, *, increasing: bool = True, n_folds: int = 2,
              seed: int = 0, method: str = "equipercentile") -> np.ndarray:
    """Out-of-fold linked grades: clusters are dealt at random into ``n_folds`` folds; each fold's anchors are
    linked by the link fitted on the others."""
    n_clusters = int(codes.max()) + 1 if len(codes) else 0
    fold_of = np.random.default_rng(seed).permutation(n_clusters) % n_folds
    fold = fold_of[codes]
    out = np.full(len(x), np.nan)
    for f in range(n_folds):
        train, test = fold != f, fold == f
        if train.sum() and test.sum():
            out[test] = predict(*_fit(x[train], y[train], None, increasing, method), x[test])
    return out


@dataclass(frozen=True)
class Link:
    """A fitted link: ``new`` grades → ``old`` scale, the band of its value at each fitted point."""

    x: list[float]
    y: list[float]
    band_lo: list[float]
    band_hi: list[float]
    increasing: bool
    method: str
    level: float
    old_judge: str
    new_judge: str
    old_scale: dict[str, Any] | None
    new_scale: dict[str, Any] | None
    n_anchors: int
    definition: str = ("band: percentile interval of the link refitted on cluster-bootstrap resamples; between "
                       "fitted grades linear, outside them the nearest end")
    extra: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"kind": "judgeaudit-link", "method": self.method, "x": self.x, "y": self.y, "band_lo": self.band_lo, "band_hi": self.band_hi,
                "increasing": self.increasing, "level": self.level, "old_judge": self.old_judge,
                "new_judge": self.new_judge, "old_scale": self.old_scale, "new_scale": self.new_scale,
                "n_anchors": self.n_anchors, "definition": self.definition, **self.extra}

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.body(), sort_keys=True).encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {**self.body(), "hash": self.hash}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Link:
        """The link a ``link.json`` holds; ValueError when it is not one or its hash does not match its body."""
        if not isinstance(d, dict) or d.get("kind") != "judgeaudit-link" or d.get("method") not in METHODS:
            raise ValueError("not a judgeaudit link (kind judgeaudit-link, method equipercentile or isotonic)")
        known = {"x", "y", "band_lo", "band_hi", "increasing", "method", "level", "old_judge", "new_judge", "old_scale",
                 "new_scale", "n_anchors", "definition"}
        try:
            link = cls(**{k: d[k] for k in known}, extra={k: v for k, v in d.items()
                                                          if k not in known | {"kind", "hash"}})
        except KeyError as e:
            raise ValueError(f"a link needs the field {e.args[0]}") from None
        xs = np.asarray(link.x, dtype=float)
        if len(xs) == 0 or len(xs) != len(link.y) or np.any(np.diff(xs) < 0) or not np.all(np.isfinite(xs)):
            raise ValueError("x must be a non-empty increasing list of numbers, one y per x")
        if d.get("hash") != link.hash:
            raise ValueError("its hash does not match its contents (the link was edited after it was fitted)")
        return link

    def apply(self, grades: np.ndarray) -> np.ndarray:
        return predict(np.asarray(self.x, dtype=float), np.asarray(self.y, dtype=float), grades)


def fit_link(x: np.ndarray, y: np.ndarray, codes: np.ndarray, boot_weights: np.ndarray, *, increasing: bool,
             level: float, old_judge: str, new_judge: str, old_scale: dict | None, new_scale: dict | None,
             method: str = "equipercentile") -> Link:
    """The link on every anchor, its band from ``boot_weights`` (``(n_boot, n_clusters)`` multiplicities)."""
    xs, ys = _fit(x, y, None, increasing, method)
    grid = np.unique(x)
    boots = np.empty((len(boot_weights), len(grid)))
    for b, wc in enumerate(boot_weights):
        w = wc[codes].astype(float)
        keep = w > 0
        bx, by = _fit(x[keep], y[keep], w[keep], increasing, method)
        boots[b] = predict(bx, by, grid)
    a = (1 - level) / 2
    at_grid = predict(xs, ys, grid)
    return Link(x=[float(v) for v in grid], y=[float(v) for v in at_grid],
                band_lo=[float(v) for v in np.quantile(boots, a, axis=0)],
                band_hi=[float(v) for v in np.quantile(boots, 1 - a, axis=0)], increasing=increasing, method=method,
                level=level, old_judge=old_judge, new_judge=new_judge, old_scale=old_scale, new_scale=new_scale,
                n_anchors=len(x))
