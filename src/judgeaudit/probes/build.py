"""Build a probe set: generator → program gates → verifier gate (construct-validity.txt §4.2, App. B).

Protocol 1, steps 1–2. A generator (family A) writes one edit per (base item, slot) from the
versioned templates; the length gate and the epistemic-marker gate run as programs; a verifier
(family B) returns the Appendix B fields, and an edit enters only if every gate passes. Step 3
(direction by human annotation) is ``probes.packets`` and ``probes.annotate``; step 4 is the
judges audited later, which must come from a third family (``audited_families``).

Every rejection is logged keyed by reason and slot; the per-slot funnel (yield) is reported beside
the result (§4.2: "Per-slot yield appears in the same table as the result"), and so is the rate
at which the verifier itself says the edited sentence claims more (Appendix H, S4).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeaudit.errors import InputError
from judgeaudit.families import parse_family, shared, unknown_family_message, vendors
from judgeaudit.io import iter_jsonl, validation_message
from judgeaudit.judges.base import Judge
from judgeaudit.probes import gates
from judgeaudit.probes.taxonomy import SLOT_BY_NAME, SLOTS, axis_of, intended_direction
from judgeaudit.probes.templates import (DEFAULT_CRITERION, TEMPLATE_VERSION, VerifierReport,
                                         parse_generator_output, parse_verifier_output,
                                         render_generator_prompt, render_verifier_prompt)
from judgeaudit.records import JudgeRequest, Probe, Verdict

if TYPE_CHECKING:
    from judgeaudit.runtime.context import RunContext


class BaseItem(BaseModel):
    """One licensed claim with its evidence: the input of a probe build."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: str = Field(min_length=1)
    evidence: str = Field(min_length=1)
    group: str
    domain: str
    base_id: str | None = None

    def resolved_id(self) -> str:
        """``base_id`` if given, else a stable hash of claim and evidence."""
        if self.base_id:
            return self.base_id
        h = hashlib.sha256(f"{self.claim}\x00{self.evidence}".encode()).hexdigest()[:12]
        return f"b_{h}"


def read_bases(path: str | Path) -> list[BaseItem]:
    """Read a JSONL of base items (claim, evidence, group, domain[, base_id]).

    Raises ``InputError`` naming file, line and field on a bad row or a repeated base id.
    """
    out: list[BaseItem] = []
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(path):
        try:
            b = BaseItem.model_validate(obj)
        except ValidationError as e:
            fld, msg = validation_message(e)
            raise InputError(msg, path=path, line=n, field=fld) from None
        bid = b.resolved_id()
        if bid in seen:
            raise InputError(f"base_id {bid!r} repeats line {seen[bid]}", path=path, line=n, field="base_id")
        seen[bid] = n
        out.append(b)
    if not out:
        raise InputError("file holds no base items", path=path)
    return out


def parse_slots(slots: Iterable[str] | None) -> list[str]:
    """Validate slot names against the frozen taxonomy (None or "all" means every slot)."""
    if slots is None:
        return [s.name for s in SLOTS]
    names = [s.strip() for s in slots if s.strip()]
    if names == ["all"]:
        return [s.name for s in SLOTS]
    bad = [s for s in names if s not in SLOT_BY_NAME]
    if bad:
        raise InputError(f"unknown slot(s) {', '.join(bad)}; known: {', '.join(SLOT_BY_NAME)}", field="slots")
    if not names:
        raise InputError("no slots requested", field="slots")
    return list(dict.fromkeys(names))


def check_families(generator_family: str | None, verifier_family: str | None,
                   audited_families: Sequence[str], allow_shared_family: bool) -> dict[str, Any]:
    """Enforce three disjoint families: generator, verifier, audited judges (Protocol 1; App. B).

    Families are compared as vendor sets (``judgeaudit.families``): two overlap when they share a
    vendor; an unknown family cannot be shown disjoint and is a violation that asks for
    ``family=``. Returns the record written into the build output: the families and, when the
    override was used, the violations it allowed. Raises ``InputError`` on a violation without
    the override.
    """
    g, v = parse_family(generator_family), parse_family(verifier_family)
    named = [parse_family(x) for x in audited_families]
    audited = sorted({a for a in named if a})
    violations: list[str] = []
    for role, fam in (("generator", g), ("verifier", v)):
        if vendors(fam) is None:
            violations.append(unknown_family_message(role))
    if any(a is None for a in named):
        violations.append("an audited judge family is given as unknown (name its vendor)")
    if not audited:
        violations.append("no audited judge family was named")
    if shared(g, v):
        violations.append(f"generator and verifier share family {'+'.join(sorted(shared(g, v) or ()))!r}")
    for role, fam in (("generator", g), ("verifier", v)):
        for a in audited:
            if shared(fam, a):
                violations.append(f"{role} family {fam!r} is also an audited family ({a!r})")
    if violations and not allow_shared_family:
        raise InputError("generator, verifier and audited judges must come from three disjoint model "
                         "families: " + "; ".join(violations) + " (override with allow_shared_family, "
                         "which is recorded in the output)", field="family")
    return {"generator": g, "verifier": v, "audited": audited,
            "override": bool(violations) and allow_shared_family, "violations": violations}


def _execute(judge: Judge, requests: list[JudgeRequest], store: Any, concurrency: int | None,
             progress: bool, description: str, context: RunContext | None = None) -> list[Verdict]:
    """Run requests through the project executor (call store, retries, concurrency), in ``context``."""
    if not requests:
        return []
    from judgeaudit.runtime.executor import run

    return run(judge, requests, store=store, concurrency=concurrency, progress=progress,
               description=description, context=context)


@dataclass(frozen=True)
class BuildResult:
    """What a probe build produced.

    Attributes:
        probes: accepted probes (every gate passed), in base order then taxonomy slot order.
        rejections: one row per rejected (base item, slot): base_id, slot, axis, reason (the first
            gate failed, in gate order), reasons (every verifier condition failed), detail.
        attempts: one row per (base item, slot) with the outcome of every stage (the audit trail).
        families: the family record from ``check_families`` (including any recorded override).
        length_tolerance: the tolerance fixed before generation.
        template_version: ``probes.templates.TEMPLATE_VERSION``.
    """

    probes: list[Probe]
    rejections: pd.DataFrame
    attempts: pd.DataFrame
    families: dict[str, Any]
    length_tolerance: float
    template_version: str = TEMPLATE_VERSION
    slots: list[str] = field(default_factory=list)

    def yield_table(self) -> pd.DataFrame:
        """Per-slot funnel: requested → generated → length ok → markers ok → verifier ok → accepted."""
        return yield_table(self.attempts, self.slots)

    def rejection_table(self) -> pd.DataFrame:
        """Rejection counts keyed by slot (rows) and reason (columns)."""
        return rejection_table(self.rejections, self.slots)

    def verifier_notices(self) -> pd.DataFrame:
        """Per axis: how often the verifier says the edited sentence claims more (App. H, S4)."""
        return verifier_notices(self.attempts)

    def to_frame(self) -> pd.DataFrame:
        return self.yield_table()

    def to_dict(self) -> dict[str, Any]:
        return {
            "template_version": self.template_version,
            "length_tolerance": self.length_tolerance,
            "families": self.families,
            "n_accepted": len(self.probes),
            "n_rejected": int(len(self.rejections)),
            "yield": self.yield_table().to_dict(orient="records"),
            "rejections_by_slot_and_reason": self.rejection_table().reset_index().to_dict(orient="records"),
            "verifier_notices": self.verifier_notices().to_dict(orient="records"),
        }


_STAGES = ("generated", "length_ok", "markers_ok", "verified", "accepted")


def yield_table(attempts: pd.DataFrame, slots: Sequence[str]) -> pd.DataFrame:
    """Per-slot funnel counts and yield = accepted / requested, with an ``all`` row."""
    rows = []
    for slot in slots:
        a = attempts[attempts["slot"] == slot]
        row = {"slot": slot, "axis": axis_of(slot), "requested": int(len(a))}
        for st in _STAGES:
            row[st] = int(a[st].sum()) if len(a) else 0
        row["yield"] = row["accepted"] / row["requested"] if row["requested"] else float("nan")
        rows.append(row)
    df = pd.DataFrame(rows, columns=["slot", "axis", "requested", *_STAGES, "yield"])
    if len(df):
        tot = {"slot": "all", "axis": "", **{c: int(df[c].sum()) for c in ("requested", *_STAGES)}}
        tot["yield"] = tot["accepted"] / tot["requested"] if tot["requested"] else float("nan")
        df = pd.concat([df, pd.DataFrame([tot])], ignore_index=True)
    return df


def rejection_table(rejections: pd.DataFrame, slots: Sequence[str]) -> pd.DataFrame:
    """Counts of rejections by slot × first-failed reason (reasons in gate order)."""
    reasons = [r for r in gates.REASONS if len(rejections) and (rejections["reason"] == r).any()]
    if not len(rejections):
        return pd.DataFrame(index=pd.Index(list(slots), name="slot"))
    tab = pd.crosstab(rejections["slot"], rejections["reason"]).reindex(index=list(slots), columns=reasons)
    tab = tab.fillna(0).astype(int)
    tab.index.name = "slot"
    return tab


def verifier_notices(attempts: pd.DataFrame) -> pd.DataFrame:
    """Per axis, among pairs the verifier answered: share it says claim more (App. H, S4).

    ``noticed`` counts ``second_claims_more``; ``axis_agree`` is the share of noticed pairs whose
    ``slot_changed`` lies on the requested slot's axis; the ``accepted`` columns repeat the rate
    on the pairs that entered the probe set.
    """
    cols = ["axis", "n_verified", "noticed", "notice_rate", "axis_agree", "n_accepted",
            "noticed_accepted", "notice_rate_accepted"]
    a = attempts[attempts["verifier_parsed"]] if len(attempts) else attempts
    rows = []
    for axis in ("scope", "strength", "control"):
        x = a[a["axis"] == axis] if len(a) else a
        if not len(x):
            continue
        noticed = x["second_claims_more"].astype(bool)
        same_axis = x["verifier_axis"] == axis
        acc = x[x["accepted"]]
        n_acc_noticed = int(acc["second_claims_more"].astype(bool).sum())
        rows.append({
            "axis": axis, "n_verified": int(len(x)), "noticed": int(noticed.sum()),
            "notice_rate": float(noticed.mean()),
            "axis_agree": float(same_axis[noticed].mean()) if noticed.any() else float("nan"),
            "n_accepted": int(len(acc)), "noticed_accepted": n_acc_noticed,
            "notice_rate_accepted": n_acc_noticed / len(acc) if len(acc) else float("nan"),
        })
    return pd.DataFrame(rows, columns=cols)


def build_probes(bases: Sequence[BaseItem], slots: Iterable[str] | None, generator: Judge, verifier: Judge, *,
                 audited_families: Sequence[str], allow_shared_family: bool = False,
                 length_tolerance: float = gates.DEFAULT_LENGTH_TOLERANCE, store: Any = None,
                 concurrency: int | None = None, criterion: str = DEFAULT_CRITERION,
                 progress: bool = False, context: RunContext | None = None) -> BuildResult:
    """Run Protocol 1 steps 1–2 over every (base item, slot) (construct-validity.txt §4.2, App. B), every call
    made in ``context`` (the command's ``RunContext``; None: the defaults).

    Args:
        bases: the licensed base claims with their evidence.
        slots: slot names from the frozen taxonomy (None: all twelve).
        generator: the family-A judge that writes edits (form ``generate``).
        verifier: the family-B judge that checks them (form ``generate``).
        audited_families: the families of the judges this probe set will audit (family C).
        allow_shared_family: allow a family overlap; the override is recorded in the output.
        length_tolerance: fixed before generation; it is also stated in the generator prompt.
        store: a ``runtime.store.CallStore`` (reruns pay nothing twice), or None.
        concurrency: executor concurrency bound.
        criterion: the construct the probes are graded against (``Probe.criterion``).

    Returns:
        A ``BuildResult``. Raises ``InputError`` on unknown slots, a bad tolerance or a family
        overlap without the override.
    """
    if not 0 < length_tolerance < 1:
        raise InputError(f"length tolerance must be in (0, 1), got {length_tolerance}", field="length_tolerance")
    slot_list = parse_slots(slots)
    fam = check_families(generator.spec.family, verifier.spec.family, audited_families, allow_shared_family)
    ids = [b.resolved_id() for b in bases]
    if len(set(ids)) != len(ids):
        raise InputError("base ids repeat", field="base_id")

    cells = [(b, bid, slot) for b, bid in zip(bases, ids, strict=True) for slot in slot_list]
    gen_reqs = [JudgeRequest(form="generate", request_id=f"gen:{bid}:{slot}",
                             prompt=render_generator_prompt(b.claim, b.evidence, slot, length_tolerance),
                             meta={"base_id": bid, "slot": slot, "stage": "generate"})
                for b, bid, slot in cells]
    gen_out = _execute(generator, gen_reqs, store, concurrency, progress, "generating edits", context)

    attempts: list[dict[str, Any]] = []
    to_verify: list[int] = []
    for i, ((b, bid, slot), v) in enumerate(zip(cells, gen_out, strict=True)):
        att: dict[str, Any] = {"base_id": bid, "slot": slot, "axis": axis_of(slot), "edited": None,
                               "generated": False, "length_ok": False, "markers_ok": False,
                               "verified": False, "accepted": False, "reason": None, "reasons": [],
                               "detail": "", "length_ratio": float("nan"), "verifier_parsed": False,
                               "second_claims_more": None, "verifier_axis": None, "verifier_report": None}
        attempts.append(att)
        if v.error is not None:
            att.update(reason=gates.GENERATOR_ERROR, detail=v.error)
            continue
        edited = parse_generator_output(v.raw)
        if edited is None:
            att.update(reason=gates.GENERATOR_UNPARSEABLE, detail=(v.raw or "")[:200])
            continue
        att.update(edited=edited, generated=True)
        if " ".join(edited.split()) == " ".join(b.claim.split()):
            att.update(reason=gates.UNCHANGED)
            continue
        att["length_ratio"] = gates.length_ratio(b.claim, edited)
        if gates.length_gate(b.claim, edited, length_tolerance):
            att.update(reason=gates.LENGTH, detail=f"length ratio {att['length_ratio']:.3f}")
            continue
        att["length_ok"] = True
        if gates.epistemic_marker_gate(b.claim, edited, slot):
            ch = gates.marker_changes(b.claim, edited)
            att.update(reason=gates.EPISTEMIC_MARKER,
                       detail="; ".join(f"{k}: {', '.join(v)}" for k, v in ch.items() if v))
            continue
        att["markers_ok"] = True
        to_verify.append(i)

    ver_reqs = [JudgeRequest(form="generate", request_id=f"ver:{cells[i][1]}:{cells[i][2]}",
                             prompt=render_verifier_prompt(cells[i][0].claim, attempts[i]["edited"],
                                                           cells[i][0].evidence),
                             meta={"base_id": cells[i][1], "slot": cells[i][2], "stage": "verify"})
                for i in to_verify]
    ver_out = _execute(verifier, ver_reqs, store, concurrency, progress, "verifying edits", context)

    probes: list[Probe] = []
    for i, v in zip(to_verify, ver_out, strict=True):
        b, bid, slot = cells[i]
        att = attempts[i]
        if v.error is not None:
            att.update(reason=gates.VERIFIER_ERROR, detail=v.error)
            continue
        rep: VerifierReport | None = parse_verifier_output(v.raw)
        if rep is None:
            att.update(reason=gates.VERIFIER_UNPARSEABLE, detail=(v.raw or "")[:200])
            continue
        att.update(verifier_parsed=True, second_claims_more=rep.second_claims_more,
                   verifier_axis=axis_of(rep.slot_changed) if rep.slot_changed in SLOT_BY_NAME else None,
                   verifier_report=rep.to_dict())
        failed = gates.verifier_gate(rep, slot)
        if failed:
            att.update(reason=failed[0], reasons=failed,
                       detail=f"verifier: slot_changed={rep.slot_changed}, scope_relation={rep.scope_relation}")
            continue
        att.update(verified=True, accepted=True)
        probes.append(Probe(
            probe_id=f"{bid}__{slot}", base_id=bid, group=b.group, domain=b.domain, criterion=criterion,
            evidence=b.evidence, original=b.claim, edited=att["edited"], slot=slot,
            intended_direction=intended_direction(slot),  # type: ignore[arg-type]
            meta={"template_version": TEMPLATE_VERSION, "length_tolerance": length_tolerance,
                  "length_ratio": round(att["length_ratio"], 4),
                  "generator": generator.id, "generator_family": fam["generator"],
                  "verifier": verifier.id, "verifier_family": fam["verifier"],
                  "audited_families": fam["audited"], "family_override": fam["override"],
                  "verifier_report": rep.to_dict()},
        ))

    att_df = pd.DataFrame(attempts)
    rej = att_df[~att_df["accepted"]]
    rej_df = pd.DataFrame({"base_id": rej["base_id"], "slot": rej["slot"], "axis": rej["axis"],
                           "reason": rej["reason"], "reasons": rej["reasons"], "detail": rej["detail"]})
    rej_df = rej_df.reset_index(drop=True)
    for r in rej_df.itertuples():
        if not r.reasons:
            rej_df.at[r.Index, "reasons"] = [r.reason]
    return BuildResult(probes=probes, rejections=rej_df, attempts=att_df, families=fam,
                       length_tolerance=length_tolerance, slots=slot_list)
