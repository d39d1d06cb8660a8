"""Calibrating a judge's estimate against a few human labels: PPI++ (``ppi``), the Rogan–Gladen
correction for binary judges (``rogan_gladen``), agreement against baselines (``agreement``) and
the whole report (``estimate.calibrate``)."""

from judgeaudit.analyses.calibrate.estimate import BINARY, DEFINITIONS, TARGETS, CalibrationResult, calibrate
from judgeaudit.analyses.calibrate.ppi import (classical_mean_ci, n_effective, naive_mean_ci, ppi_lambda,
                                               ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_se, width_bound)
from judgeaudit.analyses.calibrate.rogan_gladen import rogan_gladen

__all__ = ["BINARY", "DEFINITIONS", "TARGETS", "CalibrationResult", "calibrate", "classical_mean_ci", "n_effective",
           "naive_mean_ci", "ppi_lambda", "ppi_mean_ci", "ppi_mean_pointestimate", "ppi_mean_se", "rogan_gladen",
           "width_bound"]
