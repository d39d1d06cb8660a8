"""The register of predicted values (construct-validity.txt Appendix F) for a run: each headline
number of an analysis's ``result.json`` is *registered* when a committed clause of the ledger reads
it (same metric path, a ``*`` path segment matching any key) and governs this run (no ``run``, or
the run's analysis kind, or its output folder's name). ``--strict-register`` fails a run that
reports a headline number the register does not hold. R⁺ (``R_plus``) and the wrong-way rate are
headline numbers of judgeaudit's own, not quantities of the papers, and are marked so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from judgeaudit.ledger.commit import verify
from judgeaudit.ledger.model import Ledger, is_own
from judgeaudit.ledger.score import split_path

# The headline numbers of each analysis, as paths under its per-judge / per-set blocks.
VALIDITY_HEADLINES = ("S", "R", "R_plus", "wrong_way_rate", "R_scope", "R_strength", "gap")
VP_HEADLINES = ("a_imp", "a_hum", "vp")


def _ptr(*keys: str) -> str:
    return "/" + "/".join(str(k).replace("~", "~0").replace("/", "~1") for k in keys)


def headlines(kind: str | None, d: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(JSON pointer, value)`` of every headline number of a result of analysis ``kind``."""
    if kind == "validity":
        for j, block in d.get("judges", {}).items():
            for k in VALIDITY_HEADLINES:
                yield _ptr("judges", j, k), block.get(k)
    elif kind == "cap":
        from judgeaudit.analyses.cap.schema import CapFile

        for s, sb in CapFile.of(d).sets.items():   # a key renamed: an error naming it
            for j, jb in sb.judges.items():
                yield _ptr("sets", s, "judges", j, "overall"), jb.overall.value
    elif kind == "vp":
        for s, sb in d.get("sets", {}).items():
            for mode, mb in sb.items():
                if isinstance(mb, dict) and mb.get("applicable"):
                    for k in VP_HEADLINES:
                        yield _ptr("sets", s, mode, k), mb.get(k)


@dataclass(frozen=True)
class RegisterEntry:
    path: str
    value: Any
    units: tuple[str, ...]  # the committed clauses that registered it

    @property
    def registered(self) -> bool:
        return bool(self.units)

    @property
    def own(self) -> bool:
        """A judgeaudit extension (R⁺, wrong-way rate, R_excess), not a quantity of the papers."""
        return is_own(self.path)


def _matches(metric: str, path: str) -> bool:
    a, b = split_path(metric), split_path(path)
    return len(a) == len(b) and all(x in ("*", y) for x, y in zip(a, b, strict=True))


def register(ledger: Ledger, kind: str, d: dict[str, Any], folder: str | None = None) -> list[RegisterEntry]:
    """Every headline number of the result ``d`` with the committed clauses that registered it."""
    verify(ledger)
    committed = ledger.committed_at()
    clauses = [(unit, c) for p in ledger.predictions if p.id in committed for unit, c in p.units()
               if c.run in (None, kind, folder)]
    return [RegisterEntry(path, value, tuple(u for u, c in clauses if _matches(c.metric, path)))
            for path, value in headlines(kind, d)]
