"""The Table 6 shape (blind-spot.txt Appendix A) and the paper's counting rule.

The counting unit is the committed clause: a prediction written with lettered parts counts each
part as one unit, and a FAILS condition written for the whole prediction applies to each part
(§3.8). Directions are counted over the units that ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from judgeaudit.ledger.score import DIRECTIONS, VERDICTS, Score


@dataclass(frozen=True)
class Tally:
    n_units: int
    n_predictions: int
    verdicts: dict[str, int]
    directions: dict[str, int]
    per_prediction: dict[str, dict[str, int]]

    @property
    def n_ran(self) -> int:
        return self.n_units - self.verdicts["not run"]

    def sentence(self) -> str:
        v, d = self.verdicts, self.directions
        return (f"Of the {self.n_units} units in the committed clauses of the {self.n_predictions} predictions, "
                f"{v['met']} were met, {v['not met']} were not met, {v['FAILS']} triggered their FAILS clause, "
                f"{v['reversed']} reversed and {v['not run']} were not run. Of the {self.n_ran} units that ran, "
                f"the observed direction was as predicted in {d['as predicted']}, null in {d['null']} and "
                f"opposite in {d['opposite']}.")


COUNTING_RULE = ("Counting rule: the unit is the committed clause — a prediction written with lettered parts "
                 "counts each part as one unit, and a FAILS clause written for the whole prediction applies to "
                 "each part. Verdicts are taken against the bar as written. Directions are counted over the "
                 "units that ran. A unit is scored by the first run made after its commit (its verdicts answered "
                 "after it); later runs are listed, and a verdict that differs across them is flagged.")


def tally(scores: Sequence[Score]) -> Tally:
    verdicts = Counter(s.verdict for s in scores)
    directions = Counter(s.direction for s in scores if s.verdict != "not run")
    per: dict[str, dict[str, int]] = {}
    for s in scores:
        per.setdefault(s.prediction, dict.fromkeys(VERDICTS, 0))[s.verdict] += 1
    return Tally(len(scores), len(per), {v: verdicts.get(v, 0) for v in VERDICTS},
                 {d: directions.get(d, 0) for d in DIRECTIONS}, per)


def _fmt(s: Score) -> str:
    if s.value is None:
        return "—"
    ci = f" [{s.ci[0]:+.3f}, {s.ci[1]:+.3f}]" if s.ci else ""
    return f"{s.value:.3f}{ci}" + (f", {p_text(s)}" if s.p is not None else "")


OWN_NOTE = "judgeaudit's own metric, not a paper quantity"


def _vd(verdict: str | None, direction: str | None) -> str:
    return f"{verdict}; {direction}" if direction else str(verdict)


def run_notes(s: Score) -> list[str]:
    """One line per matching run of a unit whose runs need saying: more than one run, a pre-commit
    result passed over, or a result without answer times."""
    if len(s.runs) < 2 and not any(r.pre_commit for r in s.runs) and s.note is None:
        return []
    lines = []
    for r in s.runs:
        what = (f"not scored — pre-commit data: {r.pre_commit}" if r.pre_commit else
                _vd(r.verdict, r.direction) + ("" if r.value is None else f" at {r.value:.4g}")
                + ("" if r.answers_recorded else " (answer times not recorded: judged by created_at only)"))
        lines.append(f"run {r.run_id} ({r.result}, created {r.created_at}): {what}"
                     + (" ← governs" if r.run_id == s.run_id and r.result == s.result else ""))
    if s.divergent:
        lines.append(f"the verdict differs across its {len([r for r in s.scored_runs if r.verdict != 'not run'])} "
                     "post-commit runs; the first post-commit run governs")
    return lines


def p_text(s: Score) -> str:
    """``p = 0.19 (greater; one-sided 0.19 in the predicted direction)``, or "" without a run's p."""
    if s.p is None:
        return ""
    side = "two-sided" if s.p_alternative == "two-sided" else f"one-sided, {s.p_alternative}"
    q = f"; one-sided {s.p_one_sided:.3g} in the predicted direction" if s.p_one_sided is not None else ""
    return f"p = {s.p:.3g} ({side}{q})"


def score_lines(scores: Sequence[Score]) -> list[str]:
    """The ``ledger score`` table: one line per unit, then its runs where they need saying."""
    out = []
    for s in scores:
        obs = "" if s.value is None else f"  observed {s.value:.4g}" + (f" [{s.ci[0]:.4g}, {s.ci[1]:.4g}]" if s.ci else "")
        obs += f", {p_text(s)}" if s.p is not None else ""
        flags = ("  [verdict differs across runs]" if s.divergent else "") + (f"  [{OWN_NOTE}]" if s.own else "")
        out.append(f"{s.unit}\t{_vd(s.verdict, s.direction)}{obs}{flags}")
        out += [f"  {line}" for line in run_notes(s)]
    return out


def table6(scores: Sequence[Score]) -> str:
    """The Table 6 shape as Markdown: every unit with its bar as written, its verdict (and the
    direction after a semicolon where it differs from the verdict's default), and the observed value;
    then the counts per prediction, the totals and the counting rule."""
    default = {"met": "as predicted", "not met": "as predicted"}
    lines = ["| # | committed clause (bar as written) | verdict; direction | observed |", "|---|---|---|---|"]
    for s in scores:
        vd = s.verdict if s.direction in (None, default.get(s.verdict)) else f"{s.verdict}; {s.direction}"
        bar = s.bar + (f" ({OWN_NOTE})" if s.own else "")
        lines.append(f"| {s.unit} | {bar} | {vd}{' (differs across runs)' if s.divergent else ''} | {_fmt(s)} |")
    notes = [(s.unit, run_notes(s)) for s in scores]
    if any(n for _, n in notes):
        lines += ["", "Runs of each unit (every matching result; the first post-commit run governs):", ""]
        lines += [f"- {unit}: {line}" for unit, n in notes for line in n]
    t = tally(scores)
    lines += ["", "| prediction | " + " | ".join(VERDICTS) + " |", "|---|" + "---|" * len(VERDICTS)]
    for pid, c in t.per_prediction.items():
        lines.append(f"| {pid} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    lines.append(f"| **total ({t.n_units} units)** | " + " | ".join(str(t.verdicts[v]) for v in VERDICTS) + " |")
    lines += ["", t.sentence()]
    if (n := sum(s.divergent for s in scores)):
        lines.append(f"{n} unit(s) have verdicts that differ across their post-commit runs (flagged above).")
    lines += ["", COUNTING_RULE]
    return "\n".join(lines) + "\n"
