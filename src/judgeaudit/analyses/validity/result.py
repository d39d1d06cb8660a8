"""The result objects of a validity analysis: one ``JudgeProfile`` per judge and the
``ValidityResult`` that holds them with the design's tables (the ``result.json`` shape).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity.design import SLOT_ORDER


def _in_cross_judge_means(j: JudgeProfile) -> bool:
    """Whether a judge enters the cross-judge means (per-slot mean flip rate, η² over judges): an
    interpretable judge under study, not a reference instrument and not a single point."""
    s = j.stats
    return bool(s["interpretable"] and not s["single_point"] and not s.get("reference_instrument"))


def _mean_flip_rate(judges: Sequence[JudgeProfile], slot: str) -> float | None:
    """Mean flip rate on ``slot`` at the operating points of the judges that enter cross-judge means
    (``_in_cross_judge_means``) and measured it."""
    rates = [j.stats["per_slot"][slot]["flip_rate"] for j in judges
             if _in_cross_judge_means(j) and j.stats["per_slot"].get(slot, {}).get("flip_rate") is not None]
    return float(np.mean(rates)) if rates else None


@dataclass(frozen=True)
class JudgeProfile:
    """One judge's profile at its matched-invariance operating point, with its frontier.

    ``stats`` holds everything in the ``judges[<id>]`` block of ``result.json``.
    """

    judge_id: str
    stats: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.stats[key]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.stats)


@dataclass(frozen=True)
class ValidityResult:
    """The validity analysis of one probe set and one or more judges.

    ``to_dict()`` is the ``result.json`` shape: top-level ``s_floor, bar, n_base, n_probes,
    direction_source`` (plus the slot/axis measurability tables, the length checks and notes) and
    one block per judge under ``judges``.
    """

    s_floor: float
    bar: float
    level: float
    n_boot: int
    n_perm: int
    seed: int
    n_base: int
    n_probes: int
    direction_source: str
    judges: tuple[JudgeProfile, ...]
    slots: Mapping[str, Mapping[str, Any]]
    axes: Mapping[str, Mapping[str, Any]]
    length: Mapping[str, Any]
    notes: tuple[str, ...] = field(default_factory=tuple)
    gap_null: str = "construct_arm"
    tau_in_bootstrap: str = "reselect"
    gap_null_reason: str = ""

    def judge(self, judge_id: str) -> JudgeProfile:
        for j in self.judges:
            if j.judge_id == judge_id:
                return j
        raise KeyError(judge_id)

    def __getitem__(self, judge_id: str) -> JudgeProfile:
        return self.judge(judge_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "s_floor": self.s_floor,
            "bar": self.bar,
            "n_base": self.n_base,
            "n_probes": self.n_probes,
            "direction_source": self.direction_source,
            "level": self.level,
            "n_boot": self.n_boot,
            "n_perm": self.n_perm,
            "seed": self.seed,
            "bootstrap_unit": "base_id",
            "gap_null": self.gap_null,
            "gap_null_reason": self.gap_null_reason,
            "tau_in_bootstrap": self.tau_in_bootstrap,
            "cross_judge_judges": [j.judge_id for j in self.judges if _in_cross_judge_means(j)],
            "slots": {k: dict(v) for k, v in self.slots.items()},
            "axes": {k: dict(v) for k, v in self.axes.items()},
            "length": dict(self.length),
            "notes": list(self.notes),
            "judges": {j.judge_id: j.to_dict() for j in self.judges},
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per judge, in the shape of the paper's Table 5 (with intervals)."""
        rows = []
        for j in self.judges:
            s = j.stats
            ci = lambda k, i: (s[k][i] if s.get(k) else None)  # noqa: E731
            rows.append({
                "judge": j.judge_id, "tau": s["tau"], "S": s["S"], "S_lo": ci("S_ci", 0),
                "S_hi": ci("S_ci", 1), "R": s["R"], "R_lo": ci("R_ci", 0), "R_hi": ci("R_ci", 1),
                "R_scope": s["R_scope"], "R_strength": s["R_strength"], "gap": s["gap"],
                "gap_lo": ci("gap_ci", 0), "gap_hi": ci("gap_ci", 1), "gap_perm_p": s["gap_perm_p"],
                "control_flip_rate": s["control_flip_rate"], "usable_points": s["usable_points"],
                "regrade_agreement": s["regrade_agreement"],
                "regrade_binary_agreement": s["regrade_binary_agreement"], "parse_failures": s["parse_failures"],
                "interpretable": s["interpretable"], "single_point": s["single_point"],
                "R_plus": s["R_plus"], "wrong_way_rate": s["wrong_way_rate"], "R_excess": s["R_excess"],
                "reference_instrument": s["reference_instrument"],
            })
        return pd.DataFrame(rows)

    def slot_frame(self) -> pd.DataFrame:
        """One row per slot, in the shape of the paper's Tables 3–4 (n, agreement, yield) plus the
        mean flip rate at their operating points over the judges under study (interpretable, not a
        reference instrument, not a single point)."""
        rows = []
        for slot in SLOT_ORDER:
            info = self.slots[slot]
            rows.append({"slot": slot, "axis": info["axis"], "n": info["n_in_arm"],
                         "n_probes": info["n_probes"], "agreement": info["agreement"],
                         "yield": info["yield"], "measurable": info["measurable"],
                         "mean_flip_rate": _mean_flip_rate(self.judges, slot)})
        return pd.DataFrame(rows)
