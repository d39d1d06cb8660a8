"""Simulated anchors with a planted relation between two judges (the migration tests and benchmark).

An anchor has a latent quality ``q ~ N(5, 1.5)``; a judge grades ``clip(round(f(q + e)), lo, hi)`` with its own
noise ``e ~ N(0, noise)`` per grading, so two gradings by one judge differ as a re-grade does."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _grade(q: np.ndarray, rng: np.random.Generator, noise: float, lo: int = 1, hi: int = 9,
           transform=None) -> np.ndarray:
    x = q + rng.normal(0.0, noise, q.shape)
    if transform is not None:
        x = transform(x)
    return np.clip(np.rint(x), lo, hi)


def same_judge(n: int, seed: int, *, noise: float = 0.8, regrade: bool = True) -> pd.DataFrame:
    """The old judge and the new one are the same judge (independent gradings), plus the old one's re-grade."""
    rng = np.random.default_rng(seed)
    q = rng.normal(5.0, 1.5, n)
    d = {"anchor_id": np.arange(n).astype(str), "old": _grade(q, rng, noise), "new": _grade(q, rng, noise)}
    if regrade:
        d["old_regrade"] = _grade(q, rng, noise)
    return pd.DataFrame(d)


def shifted_at(n: int, seed: int, shift: float, *, noise: float = 0.8) -> pd.DataFrame:
    """The new judge grades one point higher than the old one on a random share ``shift`` of anchors, so its true
    mean difference is exactly ``shift`` (old grades stay on 1–8, so no +1 is clipped on the 1–9 scale)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(5.0, 1.5, n)
    old = _grade(q, rng, noise, 1, 8)
    return pd.DataFrame({"anchor_id": np.arange(n).astype(str), "old": old,
                         "new": old + (rng.random(n) < shift), "old_regrade": old.copy()})


def transformed(n: int, seed: int, *, noise: float = 0.8) -> pd.DataFrame:
    """The new judge grades on 1–10 through a convex monotone map of the same latent grade (plus its own noise)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(5.0, 1.5, n)

    def to_ten(x: np.ndarray) -> np.ndarray:
        return 1.0 + 9.0 * (np.clip((x - 1.0) / 8.0, 0.0, 1.0) ** 1.6)

    return pd.DataFrame({"anchor_id": np.arange(n).astype(str), "old": _grade(q, rng, noise),
                         "new": _grade(q, rng, noise, 1, 10, to_ten), "old_regrade": _grade(q, rng, noise)})


def TRUE_LINK(x: np.ndarray) -> np.ndarray:   # noqa: N802 - the planted link's inverse, new 1–10 → old 1–9
    """The inverse of ``transformed``'s map (noise aside): the link a fit should approach."""
    return 1.0 + 8.0 * ((np.asarray(x, dtype=float) - 1.0) / 9.0) ** (1 / 1.6)


def unrelated(n: int, seed: int, *, noise: float = 0.8) -> pd.DataFrame:
    """The new judge grades a different construct (independent of the old judge's latent grade)."""
    rng = np.random.default_rng(seed)
    q, other = rng.normal(5.0, 1.5, n), rng.normal(5.0, 1.5, n)
    return pd.DataFrame({"anchor_id": np.arange(n).astype(str), "old": _grade(q, rng, noise),
                         "new": _grade(0.3 * q + 0.7 * other + 0.0, rng, noise),
                         "old_regrade": _grade(q, rng, noise)})
