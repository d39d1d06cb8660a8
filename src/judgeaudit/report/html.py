"""The page shell every report uses: sections of HTML, plotly figures, no network by default.

An analysis's renderer returns a ``Section`` (title, HTML body, banners); ``render_page`` puts
sections into one file with plotly.js embedded once (``inline``, the default: the page works
offline) or referenced from the plotly CDN (``cdn``: a page of kilobytes that needs the network
to draw its figures). The mode is set once for a process (``set_plotly_mode``; the CLI's
``--plotly`` option), so every command's report honours it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from jinja2 import Environment, select_autoescape

_ENV = Environment(autoescape=select_autoescape(default=True))

_PAGE = _ENV.from_string("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:right}th{background:#f5f5f5}
td:first-child,th:first-child{text-align:left}
.table-wrap{max-width:100%;overflow-x:auto}
.banner{background:#fff4e5;border-left:4px solid #f0a020;padding:.6em 1em;margin:1em 0}
.banner.bad{background:#fdecea;border-color:#d9534f}
.note{color:#555;font-size:.9em}
</style>
{% if plotly_src %}<script src="{{ plotly_src }}" charset="utf-8"></script>{% elif plotly %}<script>{{ plotly_js|safe }}</script>{% endif %}
</head><body>
<h1>{{ title }}</h1>
{% if subtitle %}<p class="note">{{ subtitle }}</p>{% endif %}
{% for s in sections %}
<section id="{{ s.anchor }}"><h2>{{ s.title }}</h2>
{% for b in s.banners %}<div class="banner {{ 'bad' if b.startswith('!') else '' }}">{{ b.lstrip('!') }}</div>{% endfor %}
{{ s.body|safe }}
</section>
{% endfor %}
</body></html>
""")


PlotlyMode = Literal["inline", "cdn"]
PLOTLY_MODES: tuple[str, ...] = ("inline", "cdn")
_plotly_mode: list[str] = ["inline"]


def set_plotly_mode(mode: str) -> None:
    """How every page written from now on carries plotly.js: ``inline`` (embedded; offline) or
    ``cdn`` (a ``<script src>`` to the plotly CDN at the installed plotly's version)."""
    from judgeaudit.errors import InputError

    if mode not in PLOTLY_MODES:
        raise InputError(f"--plotly must be one of {', '.join(PLOTLY_MODES)}, got {mode!r}", field="plotly")
    _plotly_mode[0] = mode


def plotly_mode() -> str:
    """The mode pages are written in (``set_plotly_mode``)."""
    return _plotly_mode[0]


def plotly_cdn_url() -> str:
    """The CDN address of the plotly.js the installed plotly embeds (same version)."""
    from plotly.offline import get_plotlyjs_version

    return f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"


@dataclass
class Section:
    """One part of a report. ``body`` is trusted HTML built with ``table_html``/``figure_html``/``esc``.

    A banner starting with ``!`` is shown as a warning (red), otherwise as a notice.
    """

    title: str
    body: str
    banners: list[str] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")


def esc(text: Any) -> str:
    """Escape any text for HTML (probe texts and judge outputs are untrusted)."""
    return html.escape(str(text), quote=True)


DASH_NOTE = ("— marks a value that is not defined for that row: its denominator is empty, or this run did not "
             "measure it (result.json holds it as null).")
"""The footnote under a table that shows "—" (a report passes its own, more specific reason)."""


def _cell(v: Any, float_format: str) -> str:
    if v is None or v is pd.NA or v is pd.NaT:
        return "—"
    if isinstance(v, (float, np.floating)):
        return "—" if np.isnan(v) else float_format.format(v)
    return str(v)


def table_html(df: pd.DataFrame, *, float_format: str = "{:.3f}", index: bool = False,
               dash_note: str = DASH_NOTE) -> str:
    """An escaped HTML table of a DataFrame, floats formatted, in a container that scrolls
    sideways when the table is wider than the page (a wide table is never cut off). An undefined
    cell (None, NaN, NA) reads "—", and a table showing one is followed by ``dash_note``."""
    cells = df.astype(object).map(lambda v: _cell(v, float_format)) if len(df.columns) else df
    table = cells.to_html(index=index, escape=True, border=0)
    dash = len(df.columns) > 0 and bool(cells.eq("—").to_numpy().any())
    note = f'<p class="note">{html.escape(dash_note)}</p>' if dash and dash_note else ""
    return f'<div class="table-wrap">{table}</div>{note}'


def figure_html(fig: Any) -> str:
    """A plotly figure as an HTML fragment (plotly.js is embedded once by the page)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render_page(title: str, sections: list[Section], *, subtitle: str | None = None,
                plotly: PlotlyMode | None = None) -> str:
    """The full HTML page; plotly.js inlined or from the CDN (``plotly``, default ``plotly_mode()``)."""
    mode = plotly or plotly_mode()
    needs_plotly = any("plotly" in s.body for s in sections)
    cdn = needs_plotly and mode == "cdn"
    return _PAGE.render(title=title, subtitle=subtitle, sections=sections, plotly=needs_plotly,
                        plotly_src=plotly_cdn_url() if cdn else "",
                        plotly_js=_plotly_js() if needs_plotly and not cdn else "")


def write_page(path: str | Path, title: str, sections: list[Section], *, subtitle: str | None = None) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_page(title, sections, subtitle=subtitle), encoding="utf-8")
    return p
