"""Judge migration: can a new judge replace the old one on the user's anchors (``migration``)."""

from judgeaudit.analyses.migrate.link import Link, fit_link
from judgeaudit.analyses.migrate.migration import (AUDIT_MARGIN, MARGIN_NAMES, MARGIN_REASONS, MARGINS,
                                                   audit_quantity, decide, migrate)
from judgeaudit.analyses.migrate.result import MigrateResult, Quantity

__all__ = ["AUDIT_MARGIN", "MARGINS", "MARGIN_NAMES", "MARGIN_REASONS", "Link", "MigrateResult", "Quantity",
           "audit_quantity", "decide", "fit_link", "migrate"]
