"""The report section naming each judge's template and scale (what was audited: a model *and* its
prompt, scale and reply format)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgeaudit.report.html import Section, esc, table_html


def instrument_table(judges: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per judge: its template (name, version, text hash, source), reply format and scale."""
    rows = []
    for jid, entry in judges.items():
        t = entry.get("template") or {}
        sc = entry.get("scale") or {}
        rows.append({"judge": jid,
                     "template": (f"{t['name']} {t['version']}" + (" (default)" if t.get("default") else "")) if t else "—",
                     "sha256": t.get("sha256", "—"), "reply format": t.get("parser", "—"),
                     "scale": sc.get("label", "—"), "higher grade": sc.get("higher", "—"),
                     "operating points": sc.get("operating_points", "—"), "source": t.get("source") or "—"})
    return pd.DataFrame(rows)


def instrument_section(judges: Mapping[str, Mapping[str, Any]]) -> Section:
    """The section; a banner for every judge whose scale is two-point (one operating point)."""
    banners = [f"{jid}: {entry['scale']['note']}" for jid, entry in judges.items()
               if (entry.get("scale") or {}).get("binary")]
    readings = sorted({(entry.get("scale") or {}).get("reading", "") for entry in judges.values()} - {""})
    note = "".join(f"<p class='note'>{esc(r)}.</p>" for r in readings)
    return Section("Judge templates and scales", table_html(instrument_table(judges)) + note, banners)
