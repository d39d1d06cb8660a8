"""Estimators shared by every analysis: resampling, agreement, tests. Vectorised with numpy."""
