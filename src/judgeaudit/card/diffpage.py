"""``card diff``'s page (``--html``): the two cards side by side — each card's judge, date, findings
and status as its own lead gives them — then every quantity they share with each card's value and its
own interval, B − A with the interval of the difference, its flag (changed: the interval excludes
zero; not comparable, and why) and how the interval was made (paired over shared units, or unpaired
from the stored intervals), as ``card.diff`` computed them; a dot-and-interval chart of the compared
differences around zero. No script, no network; the same page reads at desktop and phone widths (the
table's rows become stacked cards on a narrow screen)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from judgeaudit.card import svg
from judgeaudit.card.diff import Change, quantities, tally
from judgeaudit.card.numbers import with_ci
from judgeaudit.card.schema import CardFile, Lead

_ENV = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                   autoescape=select_autoescape(default=True))


def own_interval(card: CardFile | dict[str, Any], q: str) -> Sequence[float] | None:
    """The interval card ``card`` itself prints for quantity ``q`` (None when it prints none)."""
    card = CardFile.of(card)
    if (hit := quantities(card).get(q)) is not None:
        return hit[1]
    kind, _, rest = q.partition(".")
    name, _, metric = rest.rpartition(".")
    if kind == "world" and (w := card.measured("world")) is not None:
        rate = w.arms.get(name, {}).get(metric)
        return None if rate is None else rate.ci
    if kind == "loop" and metric == "net" and (lp := card.measured("loop")) is not None:
        g = lp.regulators.get(name)
        return None if g is None else g.ci
    return None


def _side(card: CardFile, tag: str) -> dict[str, Any]:
    from judgeaudit.card.build import lead

    parts = card.lead or Lead.model_validate(lead(card))
    # a card made before its lead was kept per section: its verdict, as one block
    findings = parts.findings() or [("verdict", list(card.verdict))]
    return {"tag": tag, "judge": card.judge, "generated": card.generated_at[:19].replace("T", " "),
            "family": ", ".join(card.families()) or "not recorded by its runs", "findings": findings,
            "status": list(parts.status)}


def _flag(c: Change) -> tuple[str, str]:
    if not c.comparable:
        return "not comparable", "nc"
    return ("changed", "changed") if c.flagged else ("no change shown", "same")


def diff_html(a: CardFile | dict[str, Any], b: CardFile | dict[str, Any], changes: Sequence[Change]) -> str:
    from judgeaudit import __version__
    from judgeaudit.card.numbers import interval, num
    from judgeaudit.card.render import LEAD_LABELS

    a, b = CardFile.of(a), CardFile.of(b)
    rows = []
    for c in changes:
        label, cls = _flag(c)
        rows.append({"q": c.quantity, "a": with_ci(c.a, own_interval(a, c.quantity)),
                     "b": with_ci(c.b, own_interval(b, c.quantity)),
                     "d": num(c.diff, c.ci, sign=True), "ci": interval(c.ci, sign=True), "flag": label, "cls": cls,
                     "how": c.how + (f" (τ A {c.taus[0]:g}, B {c.taus[1]:g})" if c.taus else "")})
    ok = [c for c in changes if c.comparable]
    chart = ""
    if ok:
        lim = max(0.05, max(abs(x) for c in ok for x in (*c.ci, c.diff)) * 1.1)
        chart = svg.rows([svg.Row(c.quantity, c.diff, c.ci) for c in ok], -lim, lim,
                         title="B − A with the interval of the difference")
    summary = tally(changes)
    return _ENV.get_template("diff.html").render(
        sides=[_side(a, "A"), _side(b, "B")], rows=rows, summary=summary, chart=chart, version=__version__,
        labels={**LEAD_LABELS, "verdict": "Verdict"})


def write_diff_html(a: CardFile | dict[str, Any], b: CardFile | dict[str, Any], changes: Sequence[Change],
                    path: str | Path) -> Path:
    """The page at ``path``; the paths its rows name (why a quantity is not comparable) relative to it."""
    from dataclasses import replace

    from judgeaudit.card.share import shareable

    p = Path(path)
    p.write_text(diff_html(a, b, [replace(c, how=shareable(c.how, p.parent)) for c in changes]), encoding="utf-8")
    return p
