"""card.html and card.md: one page per judge, rendered from the card.json content — verdict first, then
the (S, R) plane with its reference corners, per-axis R, R⁺ and wrong-way rates, CAP per condition,
validation power per set, the world arms, the loop's net per regulator, the checklist, the ledger and
the provenance. Charts are small inline SVG (``card.svg``); every number is rounded to what its
interval supports (``card.numbers``); the page has no script and no network."""

from __future__ import annotations

import re
from html import escape as esc
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from judgeaudit.card import svg
from judgeaudit.card.build import instrument_line, lead
from judgeaudit.card.numbers import num, p_value, threshold, with_ci
from judgeaudit.card.schema import (CapSection, CardFile, ChecklistSection, Lead, LedgerSection, LoopSection,
                                    Sections, Source, ValiditySection, VpSection, WorldSection)

TITLES = {"validity": "Validity profile — (S, R) at matched invariance", "cap": "CAP profile",
          "vp": "Validation power of the ruler", "world": "World gap", "loop": "Loop safety",
          "checklist": "§6.1 checklist", "ledger": "Prediction ledger", "calibrate": "Calibrated estimate",
          "migrate": "Judge migration"}
EXT = "<span class='ext'>(judgeaudit's own extension, not a paper quantity)</span>"
_ENV = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                   autoescape=select_autoescape(default=True))


def _table(head: list[str], body: list[list[str]], num_cols: tuple[int, ...] = ()) -> str:
    """A small table of already-escaped cells."""
    th = "".join(f"<th>{h}</th>" for h in head)
    lab = [esc(re.sub(r"<[^>]+>", "", h), quote=True) for h in head]     # a phone shows each cell under its name
    rows = "".join("<tr>" + "".join(f"<td class='num' data-label=\"{lab[k]}\">{c}</td>" if k in num_cols else
                                    f"<td data-label=\"{lab[k]}\">{c}</td>" for k, c in enumerate(r)) + "</tr>"
                   for r in body)
    return f"<div class='scroll'><table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table></div>"


def _src(src: Source) -> str:
    fam = src.family or "not recorded by the run"
    who = f"{esc(src.judge)} (family {esc(fam)}) · " if src.judge else ""
    changed = "".join(f"<br><strong>Input changed since the run: {esc(x)}</strong>" for x in src.inputs_changed or [])
    return (f"<p class='note'>Source: {who}run {esc(src.run_id or 'unrecorded')}, "
            f"{esc((src.created_at or 'time unrecorded')[:19])}{changed}</p>")


def _validity(s: ValiditySection, judge: str) -> str:
    m, n = s.metrics, s.n
    plane = svg.plane(m["S"].value, m["S"].ci, m["R"].value, m["R"].ci, s.s_floor, judge)
    axes = []
    for ax in ("scope", "strength"):
        a = s.per_axis[ax]
        axes += [svg.Row(f"R {ax}", a["R"].value, a["R"].ci),
                 svg.Row(f"R⁺ {ax} ¹", a["R_plus"].value, a["R_plus"].ci),
                 svg.Row(f"wrong way {ax} ¹", a["wrong_way_rate"].value, a["wrong_way_rate"].ci)]
    body = [[esc(k), esc(with_ci(m[key].value, m[key].ci, sign=key == "gap"))]
            for k, key in (("S (invariance)", "S"), ("R (sensitivity)", "R"), ("R scope", "R_scope"),
                           ("R strength", "R_strength"), ("gap (scope − strength)", "gap"), ("R⁺ ¹", "R_plus"),
                           ("wrong-way rate ¹", "wrong_way_rate"), ("control flip rate", "control_flip_rate"))]
    body.append(["gap permutation p", esc(p_value(s.gap_perm_p))])
    caveat = ("" if s.direction_source == "human" else
              "<p class='note'><strong>Directions are author-intended and not human-verified</strong>: every "
              "construct edit is assumed to change the correct verdict and every control edit to keep it.</p>")
    return (caveat + "<div class='grid'><div class='plane'>" + plane + "</div><div>" + _table(["quantity", "value [95% interval]"],
            body, (1,)) + "</div></div>" + svg.rows(axes, title="per-axis R, R⁺ and wrong-way rate")
            + f"<p class='note'>Operating point τ = {esc(threshold(s.tau))} (S ≥ {s.s_floor}, argmax R); "
            f"n = {n.base_items} base items, {n.construct_edits} construct edits, {n.control_edits} control "
            "edits; intervals: bootstrap over base items, τ re-selected in each resample. ¹ " + EXT + "</p>"
            + (f"<p class='note'>{esc(line)}</p>" if (line := instrument_line(s.template, s.scale)) else "")
            + _src(s.source))


def _cap(s: CapSection, judge: str) -> str:
    out = ""
    for name, sb in s.sets.items():
        ov = sb.overall
        rows = [svg.Row(f"{c} ({e.coverage or '—'})", e.value, e.ci, note=f" n={e.n}")
                for c, e in sb.conditions.items()]
        out += (f"<h3>{esc(name)}</h3><p>overall accuracy {esc(with_ci(ov.value, ov.ci))}, n = {ov.n} "
                "pairs</p>" + svg.rows(rows, title=f"CAP {name}") + _src(sb.source))
    return out + ("<p class='note'>Per condition: accuracy with its bootstrap interval over base items; the "
                  "coverage status (direct, approx, augmented) says how the set measures the condition.</p>")


def _vp(s: VpSection, judge: str) -> str:
    rows = []
    for r in s.rows:
        marks = {k: v for k, v in (("null p95", r.null_p95), ("human ceiling", r.a_hum)) if v is not None}
        rows.append(svg.Row(f"{r.set} ({r.mode})", r.a_imp, r.a_imp_ci, marks=marks, note=f" {r.a_imp_member or ''}"))
    table = _table(["set", "labels", "n", "a_imp", "null p", "null p (BH)", "a_hum", "VP"], [
        [esc(f"{r.set} ({r.mode})"), esc(r.label_origin or "—"), str(r.n), esc(with_ci(r.a_imp, r.a_imp_ci)),
         esc(p_value(r.null_p)), esc(p_value(r.null_p_bh)), esc(with_ci(r.a_hum, r.a_hum_ci)),
         esc(num(r.vp, sign=True))] for r in s.rows],
        (2, 3, 4, 5, 6, 7))
    return (svg.rows(rows, -0.1, 1.0, title="a_imp per label set") + table
            + "<p class='note'>a_imp: the best impoverished predictor's chance-corrected agreement (dot, with its "
              "interval); red ticks: its label-permutation null's 95% quantile and the human ceiling a_hum; "
              "null p (BH): Benjamini–Hochberg-adjusted across the run's rows, the p the verdict reads.</p>"
            + "".join(_src(x) for x in {r.source.path: r.source for r in s.rows}.values()))


def _world(s: WorldSection, judge: str) -> str:
    arms = s.arms
    if not arms:
        return _numbers(s)
    first = next(iter(arms))
    out = ""
    for metric in ("recall", "specificity"):
        base = arms[first].get(metric)
        rows = [svg.Row(arm, a[metric].value, a[metric].ci,
                        start=None if arm == first else (None if base is None else base.value))
                for arm, a in arms.items() if metric in a]
        if rows:
            out += f"<h3>{metric}</h3>" + svg.rows(rows, title=f"world {metric} per arm")
    return out + (f"<p class='note'>Each arm's rate with its cluster-bootstrap interval; the grey bar runs from the "
                  f"{esc(first)} arm's value (the world gap is the bar's length).</p>") + _src(s.source)


def _loop(s: LoopSection, judge: str) -> str:
    regs = {k: v for k, v in s.regulators.items() if v.net is not None}
    if not regs:
        return _numbers(s)
    vals = [x for r in regs.values() for x in [r.net, *(r.ci or [])] if x is not None]
    lim = max(0.1, max(abs(v) for v in vals) * 1.2)
    rows = [svg.Row(name, r.net, r.ci) for name, r in regs.items()]
    j2 = f"; second judge {esc(s.judge2)}" if s.judge2 else ""
    return (svg.rows(rows, -lim, lim, title="loop net per regulator")
            + f"<p class='note'>net = (fixed − broken) / units, scored by the checker outside the loop; below 0 "
              f"the loop harms{j2}.</p>" + _src(s.source))


def _numbers(s: WorldSection | LoopSection) -> str:
    return _table(["quantity", "value"], [[esc(k), esc(f"{v:.4g}")] for k, v in s.numbers.items()], (1,)) \
        + _src(s.source)


def _checklist(s: ChecklistSection, judge: str) -> str:
    return _table(["", "item", "evidence"], [
        [f"<span class='{'ok' if i.ok else 'no'}'>{'✓' if i.ok else '✗'}</span>", esc(f"{i.number}. {i.item}"),
         esc(i.short or i.evidence)] for i in s.items]) + (
        "<p class='note'>The §6.1 checklist of the construct-validity paper. An item over label sets is met only when "
        "every audited set meets it; the whole evidence (each set and mode) is in checklist.md beside this card.</p>")


def _ledger(s: LedgerSection, judge: str) -> str:
    return f"<p>{esc(s.sentence)}</p>" + _table(["unit", "bar", "verdict", "direction", "observed"], [
        [esc(u.unit), esc(u.bar), esc(u.verdict), esc(u.direction or "—"), esc(with_ci(u.value, u.ci))]
        for u in s.units], (4,)) + f"<p class='note'>Ledger: {esc(s.ledger)}</p>"


def _calibrate(s: Any, judge: str) -> str:
    from judgeaudit.card.calibrate import render_calibrate

    return render_calibrate(s, judge)


def _migrate(s: Any, judge: str) -> str:
    from judgeaudit.card.migrate import render_migrate

    return render_migrate(s, judge)


RENDER = {"validity": _validity, "cap": _cap, "vp": _vp, "world": _world, "loop": _loop,
          "checklist": _checklist, "ledger": _ledger, "calibrate": _calibrate, "migrate": _migrate}


def _shown(card: CardFile) -> list[str]:
    """The sections the card holds, in its order."""
    return [k for k in Sections.model_fields if getattr(card.sections, k) is not None]


def _provenance(card: CardFile) -> str:
    rows, inputs = [], {}
    for key in _shown(card):
        for src in card.sources(key):
            rows.append([esc(key), esc(src.judge or "—"), esc(src.family or "—"), esc(src.run_id or "—"),
                         esc((src.created_at or "—")[:19]), f"<code>{esc(src.path)}</code>"])
            for name, f in ((src.inputs or {}).get("files") or {}).items():
                sha = f["sha256"] if isinstance(f["sha256"], str) else f"{len(f['sha256'])} files"
                inputs[f["path"]] = [esc(name), f"<code>{esc(f['path'])}</code>", esc(sha[:16])]
            ver = src.inputs or {}
            if ver.get("judgeaudit"):
                rows[-1][3] += esc(f" (judgeaudit {ver['judgeaudit']}, templates {ver.get('template_version')})")
    out = _table(["section", "judge", "family", "run", "made", "result"], rows) if rows else \
        "<p class='absent'>no run read</p>"
    if inputs:
        out += "<h3>Input files (SHA-256 at run time)</h3>" + _table(["input", "path", "sha256"], list(inputs.values()))
    return out


def _lead(card: CardFile) -> Lead:
    """What the card opens on: as it recorded it, or (a card made before it recorded its lead) as ``lead`` says."""
    return card.lead or Lead.model_validate(lead(card))


def card_html(card: CardFile | dict[str, Any]) -> str:
    from judgeaudit import __version__

    card = CardFile.of(card)
    sections = []
    for key in _shown(card):
        s = getattr(card.sections, key)
        sections.append({"key": key, "title": TITLES[key], "body": RENDER[key](s, card.judge) if s.measured else "",
                         "absent": "" if s.measured else s.not_measured})
    sections.append({"key": "provenance", "title": "Provenance", "body": _provenance(card), "absent": ""})
    parts = _lead(card)
    return _ENV.get_template("card.html").render(
        judge=card.judge, family=", ".join(card.families()) or None, version=__version__,
        generated=card.generated_at[:19].replace("T", " ") + " UTC", findings=parts.judge,
        status=parts.status, label_sets=parts.label_sets, labels=LEAD_LABELS,
        no_label_sets=_no_label_sets(card), sections=sections)


LEAD_LABELS = {"validity": "Validity", "cap": "CAP", "world": "World", "loop": "Loop", "calibrate": "Calibrated",
               "migrate": "Migration"}


def _no_label_sets(card: CardFile) -> str:
    return ("No sentence applies to the label sets' numbers (they are in the validation-power section below)."
            if card.measured("vp") is not None else "No validation-power run of a label set was read.")


def write_card_html(card: CardFile | dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.write_text(card_html(card), encoding="utf-8")
    return p


def card_md(card: CardFile | dict[str, Any]) -> str:
    """card.md: the verdict, the headline numbers with their intervals and the checklist, for a README."""
    card = CardFile.of(card)
    lines = [f"## Validity card: `{card.judge}`", ""]
    parts = _lead(card)
    lines += [f"- **{LEAD_LABELS.get(k, k)}**: {' '.join(xs)}" for k, xs in parts.judge] + [""]
    lines += [" ".join(parts.status), ""]
    if (v := card.measured("validity")) is not None:
        m = v.metrics
        lines += ["| quantity | value [95% interval] |", "|---|---|"]
        for k, label in (("S", "S (invariance)"), ("R", "R (sensitivity)"), ("R_scope", "R scope"),
                         ("R_strength", "R strength"), ("gap", "gap (scope − strength)"),
                         ("R_plus", "R⁺ ¹"), ("wrong_way_rate", "wrong-way rate ¹")):
            lines.append(f"| {label} | {with_ci(m[k].value, m[k].ci)} |")
        lines += ["", f"At τ = {threshold(v.tau)}; n = {v.n.base_items} base items. "
                  "¹ judgeaudit's own extension, not a paper quantity.", ""]
        if (line := instrument_line(v.template, v.scale)) is not None:
            lines += [line, ""]
    lines += ["**The label sets you validate against** (about the data, not the judge)", ""]
    lines += [f"- {x}" for x in parts.label_sets] or [f"- {_no_label_sets(card)}"]
    lines += ["", "**§6.1 checklist**", ""]
    lines += [f"- {'✓' if i.ok else '✗'} {i.number}. {i.item}: {i.short or i.evidence}"
              for i in card.sections.checklist.items]
    lines += ["", f"_Generated by judgeaudit from run folders on {card.generated_at[:10]}; full card: card.html._"]
    return "\n".join(lines) + "\n"


def write_card_md(card: CardFile | dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.write_text(card_md(card), encoding="utf-8")
    return p
