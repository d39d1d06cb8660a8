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
                 "units that ran.")


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
    return f"{s.value:.3f}{ci}"


def table6(scores: Sequence[Score]) -> str:
    """The Table 6 shape as Markdown: every unit with its bar as written, its verdict (and the
    direction after a semicolon where it differs from the verdict's default), and the observed value;
    then the counts per prediction, the totals and the counting rule."""
    default = {"met": "as predicted", "not met": "as predicted"}
    lines = ["| # | committed clause (bar as written) | verdict; direction | observed |", "|---|---|---|---|"]
    for s in scores:
        vd = s.verdict if s.direction in (None, default.get(s.verdict)) else f"{s.verdict}; {s.direction}"
        lines.append(f"| {s.unit} | {s.bar} | {vd} | {_fmt(s)} |")
    t = tally(scores)
    lines += ["", "| prediction | " + " | ".join(VERDICTS) + " |", "|---|" + "---|" * len(VERDICTS)]
    for pid, c in t.per_prediction.items():
        lines.append(f"| {pid} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    lines.append(f"| **total ({t.n_units} units)** | " + " | ".join(str(t.verdicts[v]) for v in VERDICTS) + " |")
    lines += ["", t.sentence(), "", COUNTING_RULE]
    return "\n".join(lines) + "\n"
