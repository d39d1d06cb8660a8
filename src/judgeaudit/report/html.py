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
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, select_autoescape

from judgeaudit.report.pagemode import PLOTLY_MODES, PlotlyMode, plotly_mode, set_plotly_mode  # noqa: F401 - public here too

_ENV = Environment(autoescape=select_autoescape(default=True))

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222;overflow-wrap:break-word}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em;font-size:1.3em}
h2 .of{display:block;font-size:.65em;font-weight:normal;color:#666;letter-spacing:.02em}
table{border-collapse:collapse;margin:1em 0;font-size:.88em}
th,td{border:1px solid #ddd;padding:.3em .5em;text-align:right;overflow-wrap:anywhere}th{background:#f5f5f5}
td:first-child,th:first-child{text-align:left}
.table-wrap{max-width:100%;overflow-x:auto}
table.cards,table.cards tbody{display:block;border:0}
table.cards thead{display:none}
table.cards tr{display:grid;grid-template-columns:repeat(auto-fill,minmax(15em,1fr));border:1px solid #ccc;margin:0 0 .8em;padding:.3em}
table.cards td{display:block;border:0;border-bottom:1px dotted #eee;text-align:left;padding:.2em .4em}
table.cards td::before{content:attr(data-label);display:block;font-size:.8em;color:#666}
.banner{background:#fff4e5;border-left:4px solid #f0a020;padding:.6em 1em;margin:1em 0}
.banner.bad{background:#fdecea;border-color:#d9534f}
.note{color:#555;font-size:.9em}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
nav.toc{columns:2 18em;font-size:.92em;background:#fafafa;border:1px solid #eee;padding:.6em 1em}
nav.toc ul{margin:.2em 0 .6em;padding-left:1.2em}
nav.toc li,nav.toc div{break-inside:avoid}
.units input,.units select{font:inherit;margin:.2em .4em .2em 0;max-width:100%}
.units .pager{margin:.4em 0}.units .pager button{font:inherit;margin-right:.4em}
.units td{text-align:left;vertical-align:top;max-width:30em;min-width:6em}
"""
"""The page's style: a table too wide for the page is shown as one card per row (each cell under its
column's name) rather than cut, at any width; see ``_SCRIPT``. A units table's cells keep 6em each, so a table of
many columns on a phone becomes cards instead of columns one or two letters wide."""

_SCRIPT = """
(function(){
  function fit(){
    document.querySelectorAll('.table-wrap > table').forEach(function(t){
      var heads=[...t.querySelectorAll('thead th')].map(function(h){return h.innerText.trim();});
      t.querySelectorAll('tbody tr').forEach(function(r){
        [...r.children].forEach(function(c,i){ if(heads[i]!==undefined) c.setAttribute('data-label', heads[i]); });
      });
      t.classList.remove('cards');
      if (t.scrollWidth > t.parentElement.clientWidth + 1) t.classList.add('cards');
    });
  }
  window.judgeauditFit = fit;
  document.addEventListener('DOMContentLoaded', fit);
  window.addEventListener('resize', fit);
})();
"""
"""Marks each table wider than its container as ``cards`` (on load and on resize)."""

_UNITS_SCRIPT = """
(function(){
  var PAGE=window.innerWidth<700?5:20;
  function esc(s){return String(s).replace(/[&<>"']/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c];});}
  function setup(box){
    var data=JSON.parse(box.querySelector('script[type="application/json"]').textContent);
    var rows=data.rows, page=0, shown=rows;
    var q=box.querySelector('input.q'), sels=[...box.querySelectorAll('select.f')];
    var body=box.querySelector('tbody'), info=box.querySelector('.info');
    function apply(){
      var needle=q.value.toLowerCase();
      shown=rows.filter(function(r){
        for (var s of sels){ var v=s.value; if(v!=='' && String(r[+s.dataset.col])!==v) return false; }
        return !needle || r.some(function(v){return String(v).toLowerCase().indexOf(needle)>=0;});
      });
      page=0; draw();
    }
    function draw(){
      var n=shown.length, last=Math.max(0,Math.ceil(n/PAGE)-1); page=Math.min(page,last);
      body.innerHTML=shown.slice(page*PAGE,(page+1)*PAGE).map(function(r){
        return '<tr>'+r.map(function(v){return '<td>'+esc(v===null?'—':v)+'</td>';}).join('')+'</tr>';}).join('');
      info.textContent=n?('rows '+(page*PAGE+1)+'–'+Math.min(n,(page+1)*PAGE)+' of '+n+(n<rows.length?' (filtered from '+rows.length+')':'')):('no row of '+rows.length+' matches');
      box.querySelector('.prev').disabled=page===0; box.querySelector('.next').disabled=page>=last;
      if (window.judgeauditFit) window.judgeauditFit();
    }
    q.addEventListener('input',apply); sels.forEach(function(s){s.addEventListener('change',apply);});
    box.querySelector('.prev').addEventListener('click',function(){page--;draw();});
    box.querySelector('.next').addEventListener('click',function(){page++;draw();});
    apply();
  }
  document.addEventListener('DOMContentLoaded',function(){document.querySelectorAll('.units').forEach(setup);});
})();
"""
"""Pages a ``units_html`` table client-side (20 rows at a time, 5 below 700 px) with a text filter and one selector per
categorical column: the page holds the rows as JSON and the document only the rows shown."""

_PAGE = _ENV.from_string("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{{ style|safe }}</style>
<script>{{ script|safe }}</script>
{% if units %}<script>{{ units_script|safe }}</script>{% endif %}
{% if plotly_src %}<script src="{{ plotly_src }}" charset="utf-8"></script>{% elif plotly %}<script>{{ plotly_js|safe }}</script>{% endif %}
</head><body>
<h1>{{ title }}</h1>
{% if subtitle %}<p class="note">{{ subtitle }}</p>{% endif %}
{% if summary %}<section id="summary"><h2>Summary</h2>{{ summary|safe }}</section>{% endif %}
{% if toc %}<nav class="toc" aria-label="Contents"><b>Contents</b>
{% for group, items in toc %}<div>{{ group }}<ul>{% for s in items %}<li><a href="#{{ s.anchor }}">{{ s.title }}</a></li>{% endfor %}</ul></div>
{% endfor %}</nav>{% endif %}
{% for s in sections %}
<section id="{{ s.anchor }}"><h2>{% if s.analysis %}<span class="of">{{ s.analysis }}</span>{% endif %}{{ s.title }}</h2>
{% for b in s.banners %}<div class="banner {{ 'bad' if b.startswith('!') else '' }}">{{ b.lstrip('!') }}</div>{% endfor %}
{{ s.body|safe }}
</section>
{% endfor %}
</body></html>
""")


def plotly_cdn_url() -> str:
    """The CDN address of the plotly.js the installed plotly embeds (same version)."""
    from plotly.offline import get_plotlyjs_version

    return f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"


@dataclass(frozen=True)
class Headline:
    """One line of a page's summary table: a subject (a judge, a regulator, a label set), the quantity,
    its estimate with its interval as text, and one sentence reading it (true of the interval)."""

    subject: str
    quantity: str
    value: str
    reading: str


@dataclass
class Section:
    """One part of a report. ``body`` is trusted HTML built with ``table_html``/``figure_html``/``esc``.

    A banner starting with ``!`` is shown as a warning (red), otherwise as a notice. ``analysis`` names
    the analysis and run the section belongs to (shown above its title and in the contents);
    ``headlines`` are its rows of the page's summary table.
    """

    title: str
    body: str
    banners: list[str] = field(default_factory=list)
    analysis: str = ""
    headlines: list[Headline] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        text = f"{self.analysis} {self.title}" if self.analysis else self.title
        return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def of_analysis(sections: list[Section], analysis: str) -> list[Section]:
    """``sections`` with ``analysis`` set where a section names none (returns the same list)."""
    for sec in sections:
        if not sec.analysis:
            sec.analysis = analysis
    return sections


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


def legend_below(fig: Any, *, entries: int = 0, height: int = 420) -> Any:
    """Put ``fig``'s legend under the plot, at the bottom of the figure (horizontal, wrapping; the margin
    grows to hold it, so it never scrolls inside the plot nor covers its axes), and make the figure
    taller by the legend's rows (``entries``, counted as up to two per row at a phone's width) so the
    plot area keeps its height."""
    fig.update_layout(legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                              "x": 0, "xanchor": "left", "font": {"size": 11}},
                      height=height + 22 * ((entries + 1) // 2), margin={"b": 20})
    return fig


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def summary_html(sections: list[Section]) -> str:
    """The page's opening table: every section's headlines, each linked to the section it comes from."""
    rows = [(sec, h) for sec in sections for h in sec.headlines]
    if not rows:
        return ""
    body = "".join(f'<tr><td>{esc(h.subject)}</td><td><a href="#{sec.anchor}">{esc(sec.analysis or sec.title)}'
                   f"</a></td><td>{esc(h.quantity)}</td><td>{esc(h.value)}</td><td>{esc(h.reading)}</td></tr>"
                   for sec, h in rows)
    return ('<div class="table-wrap"><table class="summary"><thead><tr><th>judge or set</th><th>analysis</th>'
            "<th>quantity</th><th>estimate [95% interval]</th><th>reading</th></tr></thead><tbody>"
            + body + "</tbody></table></div><p class='note'>Each line links to the section it comes from; "
            "every estimate there carries its interval and how it was computed.</p>")


def _toc(sections: list[Section]) -> list[tuple[str, list[Section]]]:
    groups: list[tuple[str, list[Section]]] = []
    for sec in sections:
        if groups and groups[-1][0] == sec.analysis:
            groups[-1][1].append(sec)
        else:
            groups.append((sec.analysis, [sec]))
    return groups


def render_page(title: str, sections: list[Section], *, subtitle: str | None = None,
                plotly: PlotlyMode | None = None) -> str:
    """The full HTML page; plotly.js inlined or from the CDN (``plotly``, default ``plotly_mode()``).
    It opens on the summary table of the sections' headlines (when any) and, with more than two
    sections, a table of contents."""
    mode = plotly or plotly_mode()
    needs_plotly = any("plotly" in s.body for s in sections)
    cdn = needs_plotly and mode == "cdn"
    return _PAGE.render(title=title, subtitle=subtitle, sections=sections, plotly=needs_plotly,
                        plotly_src=plotly_cdn_url() if cdn else "",
                        plotly_js=_plotly_js() if needs_plotly and not cdn else "",
                        style=_STYLE, script=_SCRIPT, units=any('class="units"' in s.body for s in sections),
                        units_script=_UNITS_SCRIPT, summary=summary_html(sections),
                        toc=_toc(sections) if len(sections) > 2 else [])


def units_html(df: pd.DataFrame, *, caption: str, filters: tuple[str, ...] = (), max_chars: int = 400) -> str:
    """A browsable table of an analysis's units: the rows as JSON in the page, shown 20 at a time (5 on a phone's width) with a
    text filter over every column and a selector for each column of ``filters``. Texts longer than
    ``max_chars`` are cut (marked "…"); the full rows are in the run's files, which ``caption`` names."""
    import json

    def cell(v: Any) -> Any:
        if type(v) is str:         # most cells: a text (the checks below are for every other kind)
            return v if len(v) <= max_chars else v[:max_chars] + "…"
        if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v)):
            return None
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (float, np.floating)):
            return round(float(v), 3)
        if isinstance(v, (int, np.integer)):
            return int(v)
        text = str(v)
        return text if len(text) <= max_chars else text[:max_chars] + "…"

    cols = [str(c) for c in df.columns]
    rows = [[cell(v) for v in r] for r in df.itertuples(index=False)]
    data = json.dumps({"columns": cols, "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    data = data.replace("</", "<\\/")     # never closes the script element it sits in
    selects = "".join(
        f'<select class="f" data-col="{cols.index(c)}" aria-label="{esc(c)}"><option value="">{esc(c)}: all</option>'
        + "".join(f'<option value="{esc(v)}">{esc(v)}</option>'
                  for v in sorted({str(cell(x)) for x in df[c].dropna()}))
        + "</select>" for c in filters if c in df.columns)
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    return (f'<div class="units"><p class="note">{esc(caption)}</p>'
            '<input class="q" type="search" placeholder="filter rows (any column)" aria-label="filter rows">'
            f'{selects}<div class="pager"><button class="prev">previous</button><button class="next">next'
            f'</button> <span class="info"></span></div><div class="table-wrap"><table><thead><tr>{head}</tr>'
            f'</thead><tbody></tbody></table></div><script type="application/json">{data}</script></div>')


def reply_text(raw: Any, rationale: Any, error: Any, parse_ok: Any) -> str:
    """A judge's reply as a units table shows it: its raw text (else its rationale), "failed call: …" for a call
    that failed and "parse failure: …" before a reply no verdict could be read from."""
    text = raw if isinstance(raw, str) and raw else (rationale if isinstance(rationale, str) else "")
    if isinstance(error, str) and error:
        return f"failed call: {error}"
    if not bool(parse_ok):
        return f"parse failure: {text}"
    return text


def units_section(title: str, df: pd.DataFrame, *, caption: str, filters: tuple[str, ...] = ()) -> Section | None:
    """The section of an analysis's units (``units_html``): None when the run has no unit to show. Every
    analysis's units table (validity, world, loop, CAP, validation power) is made here."""
    if df is None or df.empty:
        return None
    return Section(title, units_html(df, caption=caption, filters=filters))


def write_page(path: str | Path, title: str, sections: list[Section], *, subtitle: str | None = None) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_page(title, sections, subtitle=subtitle), encoding="utf-8")
    return p
