"""Frozen result objects of a validation-power audit: a member's score and null, one set in one
mode (a_imp, a_hum, VP), and the whole audit with its tables (Table 7's shape, the per-member
breakdown) and Benjamini–Hochberg adjustment across each table's rows (construct-validity.txt
App. A.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgeaudit.stats.resample import min_attainable_p
from judgeaudit.stats.tests import bh_adjust

if TYPE_CHECKING:
    from judgeaudit.analyses.validation_power.ceiling import HumanCeiling
    from judgeaudit.analyses.validation_power.transfer import TransferScore


@dataclass(frozen=True)
class MemberScore:
    """One member's pooled out-of-fold score and its within-group label-permutation null."""

    name: str
    kappa: float
    accuracy: float
    null_mean: float
    null_p95: float
    null_n: int
    p_value: float
    broken_null: bool

    @property
    def p_value_min(self) -> float:
        """The smallest p this null can give, 1/(B + 1): the resolution of ``p_value``."""
        return min_attainable_p(self.null_n)

    @property
    def clears_null(self) -> bool:
        """κ above the upper (95%) quantile of its label-permutation null (§5.4: "every paired row
        clears its label-permutation null, which sits at or below 0.026")."""
        return bool(self.null_n > 0 and self.kappa > self.null_p95)

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "accuracy": self.accuracy,
                "null_kappa": {"mean": self.null_mean, "p95": self.null_p95, "n": self.null_n},
                "clears_null": self.clears_null,
                "p_value": self.p_value, "p_value_min": self.p_value_min, "broken_null": self.broken_null}


@dataclass(frozen=True)
class ModeResult:
    """Validation power of one label set in one input mode (Def. 6)."""

    set_name: str
    mode: str
    applicable: bool
    reason: str | None = None
    n: int = 0
    n_groups: int = 0
    folds: dict[str, Any] = field(default_factory=dict)
    label_space: tuple[str, ...] = ()
    members: tuple[MemberScore, ...] = ()
    a_imp: float | None = None
    a_imp_member: str | None = None
    a_imp_ci: tuple[float, float] | None = None
    a_imp_accuracy: float | None = None
    a_hum: float | None = None
    a_hum_ci: tuple[float, float] | None = None
    a_hum_source: str | None = None
    a_hum_detail: HumanCeiling | None = None
    a_imp_null_mean: float | None = None
    a_imp_null_p95: float | None = None
    a_imp_null_n: int = 0
    a_imp_p_value: float | None = None
    vp: float | None = None
    resolvable: bool | None = None
    broken_harness: tuple[str, ...] = ()
    prefer_longer_accuracy: float | None = None
    prefer_shorter_accuracy: float | None = None
    preferred_longer_rate: float | None = None
    n_equal_length: int | None = None
    n_ties_dropped: int = 0
    side_seed: int | None = None
    n_permutations: int = 0
    between_group_label_share: float | None = None
    predictions: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    """Per row of the set in this mode: its group (the resampling unit), its response text(s) (sides after the
    side randomisation in paired mode), its label and each member's pooled out-of-fold prediction of it
    (``audit_prepared``); not part of ``to_dict``."""

    @property
    def a_imp_p_value_min(self) -> float:
        """The resolution of ``a_imp_p_value``: 1/(B + 1)."""
        return min_attainable_p(self.a_imp_null_n)

    @property
    def a_imp_clears_null(self) -> bool:
        """a_imp above the upper (95%) quantile of its own null (the max over members, per permutation)."""
        return bool(self.a_imp_null_n > 0 and self.a_imp > self.a_imp_null_p95)

    def member(self, name: str) -> MemberScore:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        if not self.applicable:
            return {"applicable": False, "reason": self.reason}
        d: dict[str, Any] = {
            "applicable": True, "n": self.n, "n_groups": self.n_groups, "folds": self.folds,
            "label_space": list(self.label_space),
            "members": {m.name: m.to_dict() for m in self.members},
            "a_imp": self.a_imp, "a_imp_member": self.a_imp_member,
            "a_imp_ci": list(self.a_imp_ci) if self.a_imp_ci else None,
            "a_imp_null": {"mean": self.a_imp_null_mean, "p95": self.a_imp_null_p95, "n": self.a_imp_null_n,
                           "clears_null": self.a_imp_clears_null, "p_value": self.a_imp_p_value,
                           "p_value_min": self.a_imp_p_value_min},
            "a_hum": self.a_hum, "a_hum_ci": list(self.a_hum_ci) if self.a_hum_ci else None,
            "a_hum_source": self.a_hum_source,
            "a_hum_detail": self.a_hum_detail.to_dict() if self.a_hum_detail else None,
            "vp": self.vp, "resolvable": self.resolvable,
            "broken_harness": bool(self.broken_harness), "broken_members": list(self.broken_harness),
            "n_permutations": self.n_permutations, "n_ties_dropped": self.n_ties_dropped,
            "between_group_label_share": self.between_group_label_share,
        }
        if self.mode == "paired":
            d.update({"a_imp_accuracy": self.a_imp_accuracy,
                      "prefer_longer_accuracy": self.prefer_longer_accuracy,
                      "prefer_shorter_accuracy": self.prefer_shorter_accuracy,
                      "preferred_longer_rate": self.preferred_longer_rate,
                      "n_equal_length": self.n_equal_length, "side_order_seed": self.side_seed})
        return d


@dataclass(frozen=True)
class ValidationPowerResult:
    """Per set and mode: the family's scores, nulls, a_imp, a_hum and VP; plus transfer."""

    sets: tuple[ModeResult, ...]
    transfer: tuple[TransferScore, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    set_meta: dict[str, dict[str, Any]] = field(default_factory=dict)

    def find(self, set_name: str, mode: str) -> ModeResult | None:
        """The result of ``set_name`` in ``mode``; None where that mode was not requested."""
        return next((r for r in self.sets if r.set_name == set_name and r.mode == mode), None)

    def get(self, set_name: str, mode: str) -> ModeResult:
        r = self.find(set_name, mode)
        if r is None:
            raise KeyError((set_name, mode))
        return r

    @property
    def set_names(self) -> list[str]:
        return list(dict.fromkeys(r.set_name for r in self.sets))

    def predictions_frame(self) -> pd.DataFrame:
        """Every set's and mode's ``ModeResult.predictions`` in one table (``label set`` and ``mode`` first; a
        member a set did not run reads None)."""
        frames = [r.predictions.assign(**{"label set": r.set_name, "mode": r.mode}) for r in self.sets
                  if r.applicable and r.predictions is not None]
        if not frames:
            return pd.DataFrame(columns=["label set", "mode"])
        df = pd.concat(frames, ignore_index=True)
        return df[["label set", "mode", *[c for c in df.columns if c not in ("label set", "mode")]]]

    def member_p_bh(self) -> dict[tuple[str, str, str], float]:
        """Benjamini–Hochberg adjusted member p-values, the family being every (set, mode, member)
        row of the per-member table (construct-validity.txt App. A.2)."""
        keys = [(r.set_name, r.mode, m.name) for r in self.sets if r.applicable for m in r.members]
        p = [m.p_value for r in self.sets if r.applicable for m in r.members]
        return dict(zip(keys, bh_adjust(p).tolist(), strict=True))

    def a_imp_p_bh(self) -> dict[tuple[str, str], float]:
        """Benjamini–Hochberg adjusted p-values of a_imp against its null, across every (set, mode)
        row of the ceiling table."""
        rows = [r for r in self.sets if r.applicable]
        p = [r.a_imp_p_value if r.a_imp_p_value is not None else float("nan") for r in rows]
        return dict(zip([(r.set_name, r.mode) for r in rows], bh_adjust(p).tolist(), strict=True))

    def to_dict(self) -> dict[str, Any]:
        sets: dict[str, Any] = {}
        member_bh, a_imp_bh = self.member_p_bh(), self.a_imp_p_bh()
        for r in self.sets:
            entry = sets.setdefault(r.set_name, {"meta": self.set_meta.get(r.set_name, {})})
            d = r.to_dict()
            if r.applicable:
                d["a_imp_null"]["p_value_bh"] = a_imp_bh[(r.set_name, r.mode)]
                for m in r.members:
                    d["members"][m.name]["p_value_bh"] = member_bh[(r.set_name, r.mode, m.name)]
            entry[r.mode] = d
        return {"config": self.config, "sets": sets, "transfer": [t.to_dict() for t in self.transfer]}

    def to_frame(self) -> pd.DataFrame:
        """Table 7's shape: one row per set, per-item and paired columns side by side."""
        rows = []
        for name in self.set_names:
            meta = self.set_meta.get(name, {})
            row: dict[str, Any] = {"label set": name, "label origin": meta.get("label_origin", "—")}
            for mode in ("item", "paired"):
                r = self.find(name, mode)
                ok = r is not None and r.applicable
                if mode == "item":
                    row["n"] = r.n if ok else None
                    row["a_imp (item κ)"] = r.a_imp if ok else None
                    row["item best"] = r.a_imp_member if ok else None
                else:
                    row["pairs"] = r.n if ok else None
                    row["κ (paired)"] = r.a_imp if ok else None
                    row["accuracy (paired)"] = r.a_imp_accuracy if ok else None
                    row["paired best"] = r.a_imp_member if ok else None
                    row["prefer shorter"] = r.prefer_shorter_accuracy if ok else None
            rows.append(row)
        return pd.DataFrame(rows)

    def members_frame(self) -> pd.DataFrame:
        """The per-member breakdown: one row per (set, mode, member)."""
        bh = self.member_p_bh()
        rows = []
        for r in self.sets:
            if not r.applicable:
                continue
            for m in r.members:
                rows.append({"label set": r.set_name, "mode": r.mode, "member": m.name, "κ": m.kappa,
                             "accuracy": m.accuracy, "null mean κ": m.null_mean, "null p95 κ": m.null_p95,
                             "clears null": ("yes" if m.clears_null else "no") if m.null_n else "—",
                             "p": m.p_value, "min attainable p": m.p_value_min,
                             "p (BH)": bh[(r.set_name, r.mode, m.name)], "broken null": m.broken_null})
        return pd.DataFrame(rows)
