"""The PPI++ mean through the reference implementation, ``ppi_py`` (the ``calibrate`` extra:
``pip install 'judgeaudit[calibrate]'``), for users who want its numbers rather than the built-in
estimator's (``judgeaudit.analyses.calibrate.ppi``, equal to it to 1e-8 on the tests' data sets)."""

from __future__ import annotations

import numpy as np

from judgeaudit.errors import InputError


def ppi_python_mean(y, yhat, yhat_unlabelled, level: float = 0.95,  # noqa: ANN001
                    lam: float | None = None) -> tuple[float, tuple[float, float]]:
    """``(estimate, (lo, hi))`` from ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci``."""
    try:
        import ppi_py
    except ModuleNotFoundError:
        raise InputError("the ppi-python engine needs the calibrate extra: pip install 'judgeaudit[calibrate]'",
                         field="--engine") from None
    y, yhat, yu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    est = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=1.0 - level, lam=lam)
    return float(np.ravel(est)[0]), (float(np.ravel(lo)[0]), float(np.ravel(hi)[0]))
