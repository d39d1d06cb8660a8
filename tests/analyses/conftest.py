"""Fixtures shared by the analyses' tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def one_blas_thread():
    """BLAS on one thread, as the validation-power audit runs it (``audit.one_blas_thread``): a test
    that calls the audit's fits, products or scikit-learn's estimator directly runs them as the audit
    does, not on BLAS threads that cost more to start and spin than these small products take."""
    from judgeaudit.analyses.validation_power.audit import one_blas_thread as limit

    with limit():
        yield
