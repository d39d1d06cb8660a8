"""The §6.1 checklist of construct-validity.txt ("What a judge author can do on Monday"), filled
from run folders. Each item is ✓ or ✗ with the evidence that decided it:

1. label provenance stated — every audited label set records how its labels were obtained
   (validation-power ``meta.label_origin``), and every validity run its direction source;
2. best impoverished predictor reported — a_imp with its member and interval, per set and mode;
3. human ceiling with interval — a_hum with its interval (and VP against it);
4. label-permutation null — a_imp's permutation null computed (``a_imp_null.n`` > 0);
5. both directions probed — a validity run with construct edits and surface (control) edits;
6. provenance field released — a label set carrying its generative condition, so the
   provenance-recoverable member could be fitted.

One rule for every item over label sets: an item is ✓ only when **every** audited label set (and, for
items 2–4, every one of its applicable modes) meets it; the evidence names the ones that do not. A
label origin that is the generic adapters' placeholder (``'user'``: nobody said how the labels were
made) does not state provenance.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from judgeaudit.analyses.validation_power.schema import Null, Row, SetMeta, reader
from judgeaudit.analyses.validity.schema import ValidityJudge
from judgeaudit.card.defaults import DEFAULT_COMMANDS
from judgeaudit.card.sources import Run, of_kind

VP_CMD = "judgeaudit vp audit --set SPEC --out DIR"
VALIDITY_CMD = DEFAULT_COMMANDS["validity"]
PLACEHOLDER_ORIGINS = frozenset({"user", "unknown", ""})
"""Label origins that state nothing: the generic table adapters' default (``datasets.registry``)."""


@dataclass(frozen=True)
class Item:
    number: int
    text: str
    ok: bool
    evidence: str
    short: str = ""
    """The evidence in a few words, as the card prints it (``evidence``, whole, is checklist.md's)."""

    def to_dict(self) -> dict:
        return {"number": self.number, "item": self.text, "ok": self.ok, "evidence": self.evidence,
                "short": self.short or self.evidence}


def _rows(vp: Sequence[Run]) -> Iterator[tuple[str, str, Row, SetMeta]]:
    """(set, mode, row, set meta) of every applicable validation-power row, each run read through its type
    (``analyses.validation_power.schema``: a key renamed or missing is an error naming it)."""
    for r in vp:
        yield from reader(r.data, path=r.path).applicable()


NO_VP = "no validation-power run found"


def _count(k: int, n: int, what: str) -> str:
    """"2 of 8 label sets" (or "the label set" when there is one)."""
    return f"the {what}" if n == 1 and k == 1 else f"{k} of {n} {what}s"


def _all(n: int, what: str) -> str:
    return f"its {what}" if n == 1 else f"all {n} {what}s"


def _ci(ci: Sequence[float] | None) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and None not in ci else ""


def _judges(validity: Sequence[Run], judge: str | None) -> Iterator[tuple[str, ValidityJudge]]:
    """Each (judge id, its block) of the validity runs (of ``judge`` when named), read through its type."""
    for r in validity:
        for j, block in r.validity.judges.items():
            if judge is None or j == judge:
                yield j, block


def checklist(runs: Sequence[Run], judge: str | None = None) -> list[Item]:
    """The six items, decided from ``runs`` (for ``judge`` where an item is per judge)."""
    vp, validity = of_kind(runs, "vp"), of_kind(runs, "validity")
    rows = list(_rows(vp))
    sets = {name: meta for name, _, _, meta in rows}
    no_vp = f"no validation-power run found — run: {VP_CMD}"
    items = []

    # 1. label provenance
    def stated(m: SetMeta) -> bool:
        return str(m.label_origin or "").strip().lower() not in PLACEHOLDER_ORIGINS

    origins = [f"{n}: labels '{m.label_origin}'" for n, m in sets.items() if stated(m)]
    unstated = [f"no label origin recorded for {n}" if not m.label_origin else
                f"{n}: label origin '{m.label_origin}' is the adapter's placeholder, not a provenance"
                for n, m in sets.items() if not stated(m)]
    dirs = [f"probes ({r.path.parent.name}): directions '{r.validity.direction_source}'" for r in validity
            if r.validity.direction_source]
    no_dir = [r.path.parent.name for r in validity if not r.validity.direction_source]
    ok = bool(origins or dirs) and not unstated and not no_dir
    ev = "; ".join(origins + dirs + unstated
                   + [f"no direction source recorded for probes ({n})" for n in no_dir]) or no_vp
    short = "; ".join(([f"no stated origin for {_count(len(unstated), len(sets), 'label set')}"] if unstated else [])
                      + ([f"no direction source for {_count(len(no_dir), len(validity), 'probe run')}"]
                         if no_dir else [])) or "; ".join(
        ([f"stated for {_all(len(sets), 'label set')}"] if sets else [])
        + ([f"directions of {_all(len(dirs), 'probe run')}"] if dirs else [])) or NO_VP
    items.append(Item(1, "label provenance stated", ok, ev, short))

    # 2. best impoverished predictor (every set and mode)
    aimp = [f"{n}/{mode}: a_imp {mb.a_imp:.3f}{_ci(mb.a_imp_ci)} ({mb.a_imp_member})"
            for n, mode, mb, _ in rows if mb.a_imp is not None]
    no_aimp = [f"no a_imp for {n}/{mode}" for n, mode, mb, _ in rows if mb.a_imp is None]
    items.append(Item(2, "best impoverished predictor reported", bool(aimp) and not no_aimp,
                      "; ".join(aimp + no_aimp) or no_vp,
                      f"no a_imp for {_count(len(no_aimp), len(rows), 'label-set row')}" if no_aimp else
                      f"a_imp for {_all(len(rows), 'label-set row')}" if rows else NO_VP))

    # 3. human ceiling with interval (every set and mode)
    hum = [f"{n}/{mode}: a_hum {mb.a_hum:.3f}{_ci(mb.a_hum_ci)}"
           + (f", VP {mb.vp:+.3f}" if mb.vp is not None else "")
           for n, mode, mb, _ in rows if mb.a_hum is not None and mb.a_hum_ci]
    no_hum = [f"{n}/{mode}" for n, mode, mb, _ in rows if not (mb.a_hum is not None and mb.a_hum_ci)]
    items.append(Item(3, "human ceiling with interval", bool(hum) and not no_hum,
                      "; ".join(hum + ([f"no human ceiling in {', '.join(no_hum)} — run: {VP_CMD} "
                                        "--ceiling NAME=VALUE,LO,HI, or a set with annotator labels"]
                                       if no_hum else [])) or no_vp,
                      f"no human ceiling for {_count(len(no_hum), len(rows), 'label-set row')}" if no_hum else
                      f"a_hum with its interval for {_all(len(rows), 'label-set row')}" if rows else NO_VP))

    # 4. label-permutation null
    null = [(n, mode, mb.a_imp_null or Null()) for n, mode, mb, _ in rows]
    done = [f"{n}/{mode}: {x.n} permutations, p {x.p_value:.3g}" if x.p_value is not None
            else f"{n}/{mode}: {x.n} permutations" for n, mode, x in null if (x.n or 0) > 0]
    missing = [f"{n}/{mode}" for n, mode, x in null if not (x.n or 0) > 0]
    items.append(Item(4, "label-permutation null", bool(done) and not missing,
                      "; ".join(done + [f"no null for {m} (--permutations 0)" for m in missing]) or no_vp,
                      f"no null for {_count(len(missing), len(null), 'label-set row')}" if missing else
                      f"a permutation null for {_all(len(null), 'label-set row')}" if null else NO_VP))

    # 5. both directions
    both = [(j, b.n_construct, b.n_control) for j, b in _judges(validity, judge)]
    items.append(Item(5, "both directions probed", any(a > 0 and c > 0 for _, a, c in both),
                      "; ".join(f"{j}: {a} construct edits, {c} surface (control) edits" for j, a, c in both)
                      or f"no validity run{' of ' + judge if judge else ''} found — run: "
                         + VALIDITY_CMD.format(judge=judge or "SPEC"),
                      "; ".join(f"{a} construct, {c} surface edits" for _, a, c in both) or "no validity run found"))

    # 6. provenance field (every set)
    prov: dict[str, str] = {}
    for n, mode, mb, _ in rows:
        member = (mb.members or {}).get("provenance_recoverable")
        k = member.kappa if member is not None else None
        if k is not None:
            prov.setdefault(n, f"{n}/{mode}: provenance-recoverable κ {k:.3f}")
    no_prov = [n for n in sets if n not in prov]
    items.append(Item(6, "provenance field released", bool(prov) and not no_prov, "; ".join(
        list(prov.values()) + ([f"no generative-condition field in {', '.join(no_prov)} (the provenance-recoverable "
                                "member could not be fitted)"] if no_prov else [])) or no_vp,
                      f"no generative-condition field in {_count(len(no_prov), len(sets), 'label set')}" if no_prov else
                      f"a generative-condition field in {_all(len(sets), 'label set')}" if sets else NO_VP))
    return items


def checklist_md(items: Sequence[Item], title: str = "§6.1 checklist") -> str:
    lines = [f"# {title}", "", "construct-validity.txt §6.1, filled from the run folders given.", ""]
    lines += [f"- {'✓' if i.ok else '✗'} {i.number}. {i.text} — {i.evidence}" for i in items]
    return "\n".join(lines) + "\n"
