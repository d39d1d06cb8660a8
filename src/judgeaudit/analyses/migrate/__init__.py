"""Judge migration: can a new judge replace the old one on the user's anchors (``migration``)."""

from judgeaudit.analyses.migrate.link import Link, fit_link
from judgeaudit.analyses.migrate.migration import MARGIN_NAMES, MARGIN_REASONS, MARGINS, decide, migrate
from judgeaudit.analyses.migrate.result import MigrateResult, Quantity

__all__ = ["MARGINS", "MARGIN_NAMES", "MARGIN_REASONS", "Link", "MigrateResult", "Quantity", "decide", "fit_link",
           "migrate"]
