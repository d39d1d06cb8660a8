"""The card's migrate section: a ``judgeaudit migrate`` run in which the judge is the old or the new one, read as
it was written (``analyses.migrate.MigrateResult``, never recomputed) — the verdict, its reasons and each
quantity with its interval and margin; and the retirement line for a judge whose model LiteLLM's map retires.

Gate names (``judgeaudit.gate.quantities``): ``migrate.equivalent`` (1 when the verdict is EQUIVALENT, else 0),
``migrate.comparable`` (1 when EQUIVALENT or LINKABLE), ``migrate.<quantity>`` and ``migrate.linked.<quantity>``
(e.g. ``migrate.agreement``, ``migrate.mean_diff``); a BLIND verdict reads BLIND; units: the anchors (or clusters)
resampled."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as esc
from typing import Any

from judgeaudit.card.numbers import with_ci
from judgeaudit.card.schema import MigrateSection
from judgeaudit.card.sources import Run, of_kind, one_run


def migrate_section(runs: Sequence[Run], judge: str, src, chosen: Sequence = ()) -> dict[str, Any] | None:  # noqa: ANN001
    """The section, or None when no migrate run names ``judge`` as its old or new judge. Each migrate run is read
    as ``MigrateFile``: a key missing or renamed is an error naming the file and the key."""
    from judgeaudit.analyses.migrate.result import MigrateFile

    typed = {r.path: MigrateFile.of(r.data, path=r.path).migrate for r in of_kind(runs, "migrate")}
    hits = [r for r in of_kind(runs, "migrate") if judge in (typed[r.path].old_judge, typed[r.path].new_judge)]
    if not hits:
        return None
    r = one_run(hits, f"migrate runs naming {judge}", chosen)   # never the newest silently
    m = typed[r.path]

    def q(x) -> dict[str, Any]:  # noqa: ANN001 - analyses.migrate.Quantity
        return {"name": x.name, "label": x.label, "value": x.estimate, "ci": x.ci, "margin": x.margin,
                "test": x.test, "status": x.status, "n": x.n_units, "unit": x.unit, "anchors_needed": x.anchors_needed}

    return {"measured": True, "source": src(r, judge), "verdict": m.verdict, "reasons": m.reasons,
            "role": "old" if m.old_judge == judge else "new", "old_judge": m.old_judge, "new_judge": m.new_judge,
            "n": {"anchors": m.n_anchors, "units": m.n_clusters, "unit": m.unit},
            "quantities": [q(x) for x in m.raw + m.audits], "linked": [q(x) for x in m.linked],
            "link_hash": m.link_hash}


def migrate_verdict(s: MigrateSection) -> list[str]:
    what = {"EQUIVALENT": "can replace it on these anchors: every quantity is equivalent within its margin",
            "LINKABLE": "can replace it through the fitted link (equivalent on held-out anchors after linking)",
            "NOT_COMPARABLE": "measures something else on these anchors (not equivalent even after the link)",
            "BLIND": "cannot be compared on these anchors: too few to decide"}[s.verdict]
    return [f"Migration {s.old_judge} → {s.new_judge}: {s.verdict} — {s.new_judge} {what} ({s.n.anchors} anchors)."]


def render_migrate(s: MigrateSection, judge: str) -> str:  # noqa: ARG001
    rows = "".join(f"<tr><td>{esc(x.label)}</td><td>{esc(with_ci(x.value, x.ci))}</td>"
                   f"<td>{'' if x.margin is None else esc(format(x.margin, 'g'))}"
                   f"</td><td>{esc(x.status.replace('_', ' '))}</td></tr>"
                   for x in s.quantities + s.linked)
    reasons = "".join(f"<p class='note'>{esc(r)}</p>" for r in s.reasons)
    return (f"<p><b>{esc(s.verdict)}</b>: {esc(s.old_judge)} → {esc(s.new_judge)}, {s.n.anchors} "
            f"anchors</p>{reasons}<table><tr><th>quantity</th><th>estimate [95% CI]</th><th>margin</th>"
            f"<th>test</th></tr>{rows}</table>")


def retirement_line(runs: Sequence[Run], judge: str) -> str | None:
    """The retirement note of the judge's model as its runs recorded it (the verdicts' ``model``)."""
    from judgeaudit.judges.retirement import retirement_note

    for r in runs:
        model = _recorded_model(r, judge)
        if model:
            return retirement_note(judge, model)
    return None


def _recorded_model(run: Run, judge: str) -> str | None:
    import pandas as pd

    path = run.path.parent / "verdicts.parquet" if hasattr(run, "path") else None
    if path is None or not path.is_file():
        return None
    try:
        df = pd.read_parquet(path, columns=["judge_id", "model"])
    except (OSError, ValueError, KeyError):
        return None
    models = df.loc[df["judge_id"] == judge, "model"].dropna().unique()
    return str(models[0]) if len(models) else None
