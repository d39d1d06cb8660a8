"""A layout checker for report pages in a browser: what a reader at a given width cannot read.

``layout_problems(page)`` takes a Playwright page already loaded at its viewport width and returns one
sentence per problem (an empty list: nothing found):

- the document is wider than the viewport (the reader scrolls the whole page sideways);
- an element reaches beyond the box of its nearest ancestor that scrolls or clips sideways, or beyond the
  viewport when it has none (a table cut off, or only readable by scrolling its container sideways);
- a text runs past that box although its element does not (a path or set name with no place to break);
- a text of a plot (tick label, axis title, legend entry, annotation) lies partly outside its figure's
  drawing (the label is clipped: "mbar (slice):Natural (item)");
- a plot's legend overlaps its title, its axis titles or its tick labels, or scrolls inside the plot
  (plotly draws a scroll bar when the legend is taller than the figure);
- a plot area (the rectangle inside a figure's axes, or a polar plot) is lower than ``min_plot_height``
  pixels (a chart crushed at a phone's width);
- a text of a chart drawn as a page's own SVG (the card's (S, R) plane and bars) lies partly outside its
  ``<svg>`` (cut off at the drawing's edge).

Plotly figures are read from the drawn SVG (``.js-plotly-plot``), so a page is checked as it is shown. This is
the one layout checker of the browser tests (reports, the card and card diff's page).
"""

from __future__ import annotations

from typing import Any

MIN_PLOT_HEIGHT = 160
"""A plot area lower than this (px) is too crushed to read its points and their intervals."""

_MEASURE = """(minPlot) => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const docW = document.documentElement.scrollWidth;
  if (docW > vw + 1) out.push(`the document is ${docW}px wide in a ${vw}px viewport`);
  const name = (e) => {
    const t = (e.innerText || e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    return `<${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className && typeof e.className === 'string'
      ? '.' + e.className.trim().split(/\\s+/)[0] : ''}> "${t}"`;
  };
  const clips = (e) => getComputedStyle(e).overflowX !== 'visible';
  const holder = new Map();          // an element's nearest ancestor that scrolls or clips sideways
  const nearest = (e) => {
    const a = e.parentElement;
    if (!a || a === document.body || a === document.documentElement) return null;
    if (holder.has(a)) return holder.get(a);
    const h = clips(a) ? a : nearest(a);
    holder.set(a, h);
    return h;
  };
  const cut = [];
  for (const e of document.body.querySelectorAll('*')) {
    if (e.closest('svg') || e.closest('.js-plotly-plot')) continue;   // plots: checked on their drawing
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const c = nearest(e);
    const cr = c ? c.getBoundingClientRect() : {left: 0, right: vw};
    const left = c ? cr.left + c.clientLeft : 0, right = c ? left + c.clientWidth : vw;
    if (r.right <= right + 1 && r.left >= left - 1) continue;
    if (cut.some(x => x.e.contains(e))) continue;     // the outermost element cut, not each of its children
    cut.push({e, c, r, left, right});
  }
  // text that runs past its box (a name with no place to break) widens the page without its element doing so
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const e = n.parentElement;
    if (!e || !n.textContent.trim() || e.closest('svg') || e.closest('.js-plotly-plot')) continue;
    if (cut.some(x => x.e.contains(e))) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const c = clips(e) ? e : nearest(e);
    const cr = c ? c.getBoundingClientRect() : {left: 0, right: vw};
    const left = c ? cr.left + c.clientLeft : 0, right = c ? left + c.clientWidth : vw;
    if (r.right <= right + 1 && r.left >= left - 1) continue;
    out.push(`text "${n.textContent.trim().slice(0, 40)}" in ${name(e)} spans ${Math.round(r.left)}–` +
             `${Math.round(r.right)}px, beyond ` + (c ? `its container ${name(c)}` : `the ${vw}px viewport`));
  }
  for (const {e, c, r, left, right} of cut)
    out.push(`${name(e)} spans ${Math.round(r.left)}–${Math.round(r.right)}px, beyond ` +
             (c ? `its container ${name(c)} (${Math.round(left)}–${Math.round(right)}px): hidden or scrolled`
                : `the ${vw}px viewport`));
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, r: r.right, b: r.bottom}; };
  const overlap = (p, q) => p.x < q.r - 1 && q.x < p.r - 1 && p.y < q.b - 1 && q.y < p.b - 1;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  plots.forEach((plot, i) => {
    const svg = plot.querySelector('svg.main-svg');
    if (!svg) { out.push(`plot ${i + 1} is not drawn`); return; }
    const title = (plot.querySelector('.gtitle') || {}).textContent || '';
    const label = `plot ${i + 1}${title ? ' ("' + title.slice(0, 40) + '")' : ''}`;
    const frame = box(svg);
    for (const t of plot.querySelectorAll('svg.main-svg text')) {
      if (!t.textContent.trim()) continue;
      const st = getComputedStyle(t);
      if (st.display === 'none' || st.visibility === 'hidden' || st.opacity === '0') continue;
      const b = box(t);
      if (b.r - b.x === 0) continue;
      if (b.x < frame.x - 1 || b.r > frame.r + 1 || b.y < frame.y - 1 || b.b > frame.b + 1)
        out.push(`${label}: text "${t.textContent.slice(0, 40)}" is clipped (${Math.round(b.x)}–${Math.round(b.r)}px ` +
                 `× ${Math.round(b.y)}–${Math.round(b.b)}px outside the figure's ${Math.round(frame.x)}–` +
                 `${Math.round(frame.r)} × ${Math.round(frame.y)}–${Math.round(frame.b)})`);
    }
    const legend = plot.querySelector('.legend');
    if (legend) {
      const lb = legend.querySelector('.bg') ? box(legend.querySelector('.bg')) : box(legend);
      const bar = legend.querySelector('.scrollbar');
      if (bar && bar.getBoundingClientRect().height > 0)
        out.push(`${label}: the legend scrolls inside the plot`);
      const others = [...plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .xtick text, .ytick text')];
      for (const o of others) {
        if (!o.textContent.trim()) continue;
        if (overlap(lb, box(o))) {
          out.push(`${label}: the legend overlaps "${o.textContent.slice(0, 40)}"`);
          break;
        }
      }
    }
    const areas = [...plot.querySelectorAll('.draglayer .nsewdrag, .polarlayer .bg, .polarlayer path.bg')];
    for (const a of areas) {
      const h = a.getBoundingClientRect().height;
      if (h < minPlot) out.push(`${label}: its plot area is ${Math.round(h)}px high (minimum ${minPlot}px)`);
    }
  });
  [...document.querySelectorAll('svg')].filter(g => !g.closest('.js-plotly-plot') && !g.parentElement.closest('svg'))
    .forEach((g, i) => {
      const frame = box(g);
      for (const t of g.querySelectorAll('text')) {
        if (!t.textContent.trim()) continue;
        const b = box(t);
        if (b.r - b.x === 0) continue;
        if (b.x < frame.x - 1 || b.r > frame.r + 1 || b.y < frame.y - 1 || b.b > frame.b + 1)
          out.push(`svg ${i + 1}${g.getAttribute('class') ? ' (' + g.getAttribute('class') + ')' : ''}: text ` +
                   `"${t.textContent.slice(0, 40)}" is clipped (${Math.round(b.x)}–${Math.round(b.r)}px × ` +
                   `${Math.round(b.y)}–${Math.round(b.b)}px outside the drawing's ${Math.round(frame.x)}–` +
                   `${Math.round(frame.r)} × ${Math.round(frame.y)}–${Math.round(frame.b)})`);
      }
    });
  return out;
}"""


def layout_problems(page: Any, *, min_plot_height: int = MIN_PLOT_HEIGHT) -> list[str]:
    """One sentence per layout problem of ``page`` (a Playwright page loaded at its width); [] when none."""
    return list(page.evaluate(_MEASURE, min_plot_height))
