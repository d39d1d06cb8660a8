"""The register section of a run's report: each headline number, registered or not."""

from __future__ import annotations

import pandas as pd

from judgeaudit.ledger.register import RegisterEntry
from judgeaudit.report.html import Section, esc, table_html


def register_section(entries: list[RegisterEntry], ledger: str) -> Section:
    df = pd.DataFrame([{"headline number": e.path + (" (judgeaudit's own, not a paper quantity)" if e.own else ""),
                        "value": e.value,
                        "registered": "✓ registered" if e.registered else "✗ not registered",
                        "by clause": ", ".join(e.units) or "—"} for e in entries],
                      columns=["headline number", "value", "registered", "by clause"])
    missing = sum(not e.registered for e in entries)
    banners = ([f"!{missing} of {len(entries)} headline numbers were not registered in the ledger before this run"]
               if missing else [])
    body = (f"<p class='note'>Ledger: {esc(ledger)}. A headline number is registered when a committed clause "
            "reads its metric path and governs this run (construct-validity.txt Appendix F). R⁺ and the "
            "wrong-way rate are judgeaudit's own extensions, not quantities of the papers.</p>" + table_html(df))
    return Section("Register of predicted values", body, banners)
