"""The card's charts as small inline SVG (no script, a few kB each): the (S, R) plane with its
reference corners, and dot-and-interval rows (per-axis R, CAP cells, a_imp against its null and the
human ceiling, the world arms as dumbbells from the first arm, the loop's net per regulator)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from judgeaudit.card.numbers import ci_ok, with_ci

INK, MUTED, ACCENT, GRID = "#222", "#777", "#1f5fa8", "#e4e4e4"


def plane(S: float | None, S_ci: Sequence[float] | None, R: float | None, R_ci: Sequence[float] | None,
          s_floor: float | None, label: str) -> str:
    """The (S, R) plane (construct-validity Fig. 3, Table 1): the corners — (1, 0) a judge that never
    moves, (0, 1) one that flips on anything — the invariance floor, and the judge with its intervals.
    Every label is drawn outside the plotting square (corner names above and below it, the floor's
    value above it), so none can cover the judge's point wherever it lies."""
    w, h = 400, 392
    left, right, top, bottom = 46, 14, 50, 74
    pw, ph = w - left - right, h - top - bottom
    x = lambda s: left + s * pw          # noqa: E731 - S on the x axis
    y = lambda r: top + (1 - r) * ph     # noqa: E731 - R on the y axis
    out = [f'<svg class="plane" viewBox="0 0 {w} {h}" width="100%" role="img" '
           f'aria-label="(S, R) plane: {escape(label)}" xmlns="http://www.w3.org/2000/svg" font-size="13">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="{GRID}"/>',
           f'<line x1="{x(0.5)}" y1="{top}" x2="{x(0.5)}" y2="{top + ph}" stroke="{GRID}"/>',
           f'<line x1="{left}" y1="{y(0.5)}" x2="{left + pw}" y2="{y(0.5)}" stroke="{GRID}"/>',
           f'<line x1="{x(1)}" y1="{y(0)}" x2="{x(0)}" y2="{y(1)}" stroke="{MUTED}" stroke-dasharray="3 3"/>']
    # corner names: the top corners above the square, the bottom ones below the tick values
    for s, r, text, anchor in ((0, 1, "(0, 1) unstable · flips", "start"), (1, 1, "valid (1, 1)", "end"),
                               (0, 0, "(0, 0) invalid", "start"), (1, 0, "insensitive · constant (1, 0)", "end")):
        ty = top - 26 if r == 1 else top + ph + 34
        out.append(f'<text class="corner" x="{x(s)}" y="{ty}" text-anchor="{anchor}" fill="{MUTED}">{text}</text>')
    out += [f'<circle class="corner-pt" cx="{x(1)}" cy="{y(0)}" r="3" fill="{MUTED}"/>',
            f'<circle class="corner-pt" cx="{x(0)}" cy="{y(1)}" r="3" fill="{MUTED}"/>']
    if s_floor is not None:
        out.append(f'<line x1="{x(s_floor)}" y1="{top}" x2="{x(s_floor)}" y2="{top + ph}" stroke="{ACCENT}" '
                   f'stroke-dasharray="2 2" opacity=".6"/><text class="floor" x="{x(s_floor)}" y="{top - 8}" '
                   f'text-anchor="{"end" if s_floor >= 0.4 else "start"}" fill="{ACCENT}">floor S ≥ {s_floor:g}</text>')
    out.append(f'<text class="axis" x="{left + pw / 2}" y="{h - 8}" text-anchor="middle" fill="{INK}">S (invariance)'
               f'</text><text class="axis" x="14" y="{top + ph / 2}" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle" fill="{INK}">R (sensitivity)</text>')
    for v, t in ((0, "0"), (0.5, "0.5"), (1, "1")):
        out.append(f'<text class="tick" x="{x(v)}" y="{top + ph + 16}" text-anchor="middle" fill="{MUTED}">{t}</text>'
                   f'<text class="tick" x="{left - 6}" y="{y(v) + 4}" text-anchor="end" fill="{MUTED}">{t}</text>')
    if S is not None and R is not None:
        if ci_ok(S_ci):
            out.append(f'<line x1="{x(S_ci[0])}" y1="{y(R)}" x2="{x(S_ci[1])}" y2="{y(R)}" stroke="{ACCENT}" stroke-width="2"/>')
        if ci_ok(R_ci):
            out.append(f'<line x1="{x(S)}" y1="{y(R_ci[0])}" x2="{x(S)}" y2="{y(R_ci[1])}" stroke="{ACCENT}" stroke-width="2"/>')
        out.append(f'<circle class="point" cx="{x(S)}" cy="{y(R)}" r="6" fill="{ACCENT}"><title>{escape(label)}: S '
                   f'{with_ci(S, S_ci)}, R {with_ci(R, R_ci)}</title></circle>')
    out.append("</svg>")
    return "".join(out)


@dataclass
class Row:
    label: str
    value: float | None
    ci: Sequence[float] | None = None
    start: float | None = None                   # a dumbbell's other end
    marks: dict[str, float] = field(default_factory=dict)   # reference ticks (name → value)
    note: str = ""


def rows(items: Sequence[Row], lo: float = 0.0, hi: float = 1.0, *, title: str = "") -> str:
    """Dot-and-interval rows on one axis [lo, hi]; each row's value printed with its interval (the label
    and value columns as wide as their longest text, so none is cut at the drawing's edge)."""
    longest = max((len(r.label) for r in items), default=0)
    lw, pw, rh = max(150, 8 + 7 * longest), 220, 22
    tw = max(160, 12 + 7 * max((len(with_ci(r.value, r.ci) + r.note) for r in items), default=0))
    w, h = lw + pw + tw, rh * len(items) + 26
    x = lambda v: lw + (min(max(v, lo), hi) - lo) / (hi - lo) * pw    # noqa: E731
    out = [f'<svg viewBox="0 0 {w} {h}" width="100%" style="max-width:{w}px" role="img" aria-label="{escape(title)}" '
           f'xmlns="http://www.w3.org/2000/svg" font-size="11">']
    for v in (lo, (lo + hi) / 2, hi):
        out.append(f'<line x1="{x(v)}" y1="4" x2="{x(v)}" y2="{h - 18}" stroke="{GRID}"/>'
                   f'<text x="{x(v)}" y="{h - 6}" text-anchor="middle" fill="{MUTED}">{v:.2g}</text>')
    if lo < 0 < hi:
        out.append(f'<line x1="{x(0)}" y1="4" x2="{x(0)}" y2="{h - 18}" stroke="{MUTED}"/>')
    for i, r in enumerate(items):
        cy = 14 + i * rh
        out.append(f'<text x="{lw - 6}" y="{cy + 4}" text-anchor="end" fill="{INK}">{escape(r.label)}</text>')
        if r.value is None:
            out.append(f'<text x="{lw + 4}" y="{cy + 4}" fill="{MUTED}">not measured</text>')
            continue
        if r.start is not None:
            out.append(f'<line x1="{x(r.start)}" y1="{cy}" x2="{x(r.value)}" y2="{cy}" stroke="{MUTED}" stroke-width="3" '
                       f'opacity=".5"/><circle cx="{x(r.start)}" cy="{cy}" r="3.5" fill="#fff" stroke="{MUTED}"/>')
        if ci_ok(r.ci):
            out.append(f'<line x1="{x(r.ci[0])}" y1="{cy}" x2="{x(r.ci[1])}" y2="{cy}" stroke="{ACCENT}" stroke-width="2"/>')
        for name, v in r.marks.items():
            out.append(f'<line x1="{x(v)}" y1="{cy - 7}" x2="{x(v)}" y2="{cy + 7}" stroke="#b5402a" stroke-width="2">'
                       f'<title>{escape(name)} {v:.3g}</title></line>')
        out.append(f'<circle cx="{x(r.value)}" cy="{cy}" r="4.5" fill="{ACCENT}"/>'
                   f'<text x="{lw + pw + 8}" y="{cy + 4}" fill="{INK}">{escape(with_ci(r.value, r.ci))}'
                   f'{escape(r.note)}</text>')
    out.append("</svg>")
    return "".join(out)
