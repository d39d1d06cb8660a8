"""Blinded human direction annotation in the browser (construct-validity.txt §4.2, Appendix C).

``db`` holds the study (SQLite, WAL, hashed tokens); ``app`` serves it (FastAPI); ``basis``
validates the span-quoting field; ``static/`` is the page (plain HTML/JS/CSS, no CDN).
"""

from judgeaudit.probes.annotate.basis import check_basis, normalise, split_spans
from judgeaudit.probes.annotate.db import StudyDB, StudyTokens, export_study, init_study

__all__ = ["StudyDB", "StudyTokens", "check_basis", "export_study", "init_study", "normalise", "split_spans"]
