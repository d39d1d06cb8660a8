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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from judgeaudit.card.sources import Run, of_kind

VP_CMD = "judgeaudit vp audit --set SPEC --out DIR"
VALIDITY_CMD = "judgeaudit validity run --judge {judge} --probes bundled --out DIR"


@dataclass(frozen=True)
class Item:
    number: int
    text: str
    ok: bool
    evidence: str

    def to_dict(self) -> dict:
        return {"number": self.number, "item": self.text, "ok": self.ok, "evidence": self.evidence}


def _rows(vp: Sequence[Run]) -> Iterator[tuple[str, str, dict, dict]]:
    """(set, mode, mode block, set meta) of every applicable validation-power row."""
    for r in vp:
        for name, sb in r.data.get("sets", {}).items():
            for mode, mb in sb.items():
                if isinstance(mb, dict) and mb.get("applicable"):
                    yield name, mode, mb, sb.get("meta", {})


def _ci(ci: Sequence[float] | None) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and None not in ci else ""


def _judges(validity: Sequence[Run], judge: str | None) -> Iterator[tuple[str, dict]]:
    for r in validity:
        for j, block in r.data.get("judges", {}).items():
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
    origins = [f"{n}: labels '{m.get('label_origin')}'" for n, m in sets.items() if m.get("label_origin")]
    unstated = [n for n, m in sets.items() if not m.get("label_origin")]
    dirs = [f"probes ({r.path.parent.name}): directions '{r.data.get('direction_source')}'" for r in validity
            if r.data.get("direction_source")]
    no_dir = [r.path.parent.name for r in validity if not r.data.get("direction_source")]
    ok = bool(origins or dirs) and not unstated and not no_dir
    ev = "; ".join(origins + dirs + [f"no label origin recorded for {n}" for n in unstated]
                   + [f"no direction source recorded for probes ({n})" for n in no_dir]) or no_vp
    items.append(Item(1, "label provenance stated", ok, ev))

    # 2. best impoverished predictor
    aimp = [f"{n}/{mode}: a_imp {mb['a_imp']:.3f}{_ci(mb.get('a_imp_ci'))} ({mb.get('a_imp_member')})"
            for n, mode, mb, _ in rows if mb.get("a_imp") is not None]
    items.append(Item(2, "best impoverished predictor reported", bool(aimp), "; ".join(aimp) or no_vp))

    # 3. human ceiling with interval
    hum = [f"{n}/{mode}: a_hum {mb['a_hum']:.3f}{_ci(mb.get('a_hum_ci'))}"
           + (f", VP {mb['vp']:+.3f}" if mb.get("vp") is not None else "")
           for n, mode, mb, _ in rows if mb.get("a_hum") is not None and mb.get("a_hum_ci")]
    items.append(Item(3, "human ceiling with interval", bool(hum),
                      "; ".join(hum) or (f"no human ceiling in {', '.join(sets)} — run: {VP_CMD} "
                                         "--ceiling NAME=VALUE,LO,HI, or a set with annotator labels"
                                         if sets else no_vp)))

    # 4. label-permutation null
    null = [(n, mode, (mb.get("a_imp_null") or {})) for n, mode, mb, _ in rows]
    done = [f"{n}/{mode}: {x['n']} permutations, p {x.get('p_value'):.3g}" if x.get("p_value") is not None
            else f"{n}/{mode}: {x['n']} permutations" for n, mode, x in null if (x.get("n") or 0) > 0]
    missing = [f"{n}/{mode}" for n, mode, x in null if not (x.get("n") or 0) > 0]
    items.append(Item(4, "label-permutation null", bool(done) and not missing,
                      "; ".join(done + [f"no null for {m} (--permutations 0)" for m in missing]) or no_vp))

    # 5. both directions
    both = [(j, b.get("n_construct") or 0, b.get("n_control") or 0) for j, b in _judges(validity, judge)]
    items.append(Item(5, "both directions probed", any(a > 0 and c > 0 for _, a, c in both),
                      "; ".join(f"{j}: {a} construct edits, {c} surface (control) edits" for j, a, c in both)
                      or f"no validity run{' of ' + judge if judge else ''} found — run: "
                         + VALIDITY_CMD.format(judge=judge or "SPEC")))

    # 6. provenance field
    prov = [f"{n}/{mode}: provenance-recoverable κ {mb['members'][m]['kappa']:.3f}"
            for n, mode, mb, _ in rows for m in mb.get("members", {})
            if m == "provenance_recoverable" and mb["members"][m].get("kappa") is not None]
    items.append(Item(6, "provenance field released", bool(prov), "; ".join(prov) or (
        f"no generative-condition field in {', '.join(sets)} (the provenance-recoverable member could not be "
        "fitted)" if sets else no_vp)))
    return items


def checklist_md(items: Sequence[Item], title: str = "§6.1 checklist") -> str:
    lines = [f"# {title}", "", "construct-validity.txt §6.1, filled from the run folders given.", ""]
    lines += [f"- {'✓' if i.ok else '✗'} {i.number}. {i.text} — {i.evidence}" for i in items]
    return "\n".join(lines) + "\n"
