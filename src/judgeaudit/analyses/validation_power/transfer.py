"""Transfer (construct-validity.txt App. E, last sentence; §5.4 [48]): each frozen member fit on one
label set and scored on another in the same mode, where the two label spaces share ≥ 2 categories."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgeaudit.analyses.validation_power.family import (
    FAMILY,
    _dense_matrix,
    _moments,
    _scaled,
    make_classifier,
    make_ngram_vectorizer,
    rowspace_basis,
)
from judgeaudit.analyses.validation_power.modes import Prepared
from judgeaudit.analyses.validation_power.scoring import _accuracy, pooled_kappa


@dataclass(frozen=True)
class TransferScore:
    """One ordered (source → target) transfer in one mode (App. E, last sentence)."""

    source: str
    target: str
    mode: str
    admitted: bool
    shared_labels: tuple[str, ...]
    reason: str | None = None
    n: int = 0
    members: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "mode": self.mode,
                "admitted": self.admitted, "shared_labels": list(self.shared_labels),
                "reason": self.reason, "n": self.n, "members": self.members}


def _fit_on_source(source: Prepared, shared: tuple[str, ...]) -> dict[str, Callable[[Prepared], np.ndarray]]:
    """Each frozen member fit on all rows of ``source`` whose label is in ``shared``; returns
    member → predictor of a prepared target (same mode)."""
    keep = np.isin(source.y, shared)
    ys = source.y[keep]
    paired = source.texts_b is not None
    sa = [t for t, k in zip(source.texts_a, keep, strict=True) if k]
    sb = [t for t, k in zip(source.texts_b, keep, strict=True) if k] if paired else None
    out: dict[str, Callable[[Prepared], np.ndarray]] = {}
    for m in FAMILY:
        if m == "surface_ngram":
            vec = make_ngram_vectorizer()
            vec.fit(sa + (sb or []))
            xs_raw = vec.transform(sa)
            if paired:
                xs_raw = (xs_raw - vec.transform(sb)).tocsr()
            if xs_raw.shape[1] > xs_raw.shape[0]:
                xs, project = rowspace_basis(xs_raw)
            else:
                xs, project = xs_raw, (lambda x: x)

            def design(t: Prepared, rows: np.ndarray, _vec=vec, _project=project) -> Any:
                xa = _vec.transform([t.texts_a[i] for i in rows])
                return _project((xa - _vec.transform([t.texts_b[i] for i in rows])).tocsr() if paired else xa)
        else:
            rsa = _dense_matrix(m, sa)
            rsb = _dense_matrix(m, sb) if paired else None
            mu, sd = _moments(rsa, rsb)
            xs = _scaled(rsa, rsb, mu, sd)

            def design(t: Prepared, rows: np.ndarray, _m=m, _mu=mu, _sd=sd) -> Any:
                ra = _dense_matrix(_m, [t.texts_a[i] for i in rows])
                rb = _dense_matrix(_m, [t.texts_b[i] for i in rows]) if paired else None
                return _scaled(ra, rb, _mu, _sd)
        classes = np.unique(ys)
        clf = make_classifier().fit(xs, ys) if len(classes) >= 2 else None

        def predict(t: Prepared, rows: np.ndarray, _clf=clf, _design=design, _c=classes) -> np.ndarray:
            if _clf is None:
                return np.full(len(rows), _c[0] if len(_c) else "", dtype=object).astype(str)
            return _clf.predict(_design(t, rows)).astype(str)

        out[m] = predict
    return out


def transfer_scores(source: Prepared, target: Prepared, *, source_name: str, target_name: str,
                    cache: dict[Any, Any] | None = None) -> TransferScore:
    """Fit each frozen member on all of ``source`` and score it on ``target`` (same mode;
    App. E's last sentence). Admitted only where the two label spaces share at least two
    categories; scored on the target rows whose label is shared. ``cache`` reuses a source's
    fitted members across targets."""
    shared = tuple(sorted(set(np.unique(source.y)) & set(np.unique(target.y))))
    if len(shared) < 2:
        return TransferScore(source_name, target_name, source.mode, False, shared,
                             reason="label spaces share fewer than two categories")
    key = (source_name, source.mode, shared)
    if cache is not None and key in cache:
        fitted = cache[key]
    else:
        fitted = _fit_on_source(source, shared)
        if cache is not None:
            cache[key] = fitted
    rows = np.flatnonzero(np.isin(target.y, shared))
    yt = target.y[rows]
    out: dict[str, dict[str, float]] = {}
    for m, predict in fitted.items():
        pred = predict(target, rows)
        out[m] = {"kappa": pooled_kappa(yt, pred), "accuracy": _accuracy(yt, pred)}
    return TransferScore(source_name, target_name, source.mode, True, shared, n=len(rows), members=out)
