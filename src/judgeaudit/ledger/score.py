"""Scoring committed clauses against run results (blind-spot.txt §3.8).

Each unit receives one of five verdicts, checked in this order:

* ``not run``  — no result of the run it governs, or the metric path is absent or null there;
* ``reversed`` — the clause predicts a sign and the metric's interval excludes zero on the other side;
* ``FAILS``    — its FAILS condition (its own, or its prediction's) holds;
* ``met``      — its bar holds at the point estimate;
* ``not met``  — otherwise (the FAILS condition was not triggered).

The **direction** of a unit that ran compares the observed sign with the predicted sign: from the
interval when there is one (excludes zero above → +, below → −, else null), from the point
estimate otherwise (zero → null). A clause with no predicted sign (a level, not an effect) takes
its verdict's default: *as predicted* for met and not met, *opposite* for FAILS and reversed.

A run created before the commit that froze a clause cannot score it: a clause pinned to such a run's
id, or whose only matching results are older than its commit, raises ``InputError``; older results
beside newer ones are passed over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import verify
from judgeaudit.ledger.model import Clause, Ledger
from judgeaudit.runinfo import read_result, result_kind

VERDICTS = ("met", "not met", "FAILS", "reversed", "not run")
DIRECTIONS = ("as predicted", "null", "opposite")
_DEFAULT_DIRECTION = {"met": "as predicted", "not met": "as predicted", "FAILS": "opposite",
                      "reversed": "opposite"}


@dataclass(frozen=True)
class RunResult:
    path: Path
    run_id: str
    created_at: datetime
    kind: str | None
    data: dict[str, Any]

    def answers(self, run: str | None) -> bool:
        """Whether this result is (one of) the run(s) ``run`` names: its run id, its folder's name,
        or its analysis kind; ``None`` names any run."""
        return run is None or run in (self.run_id, self.path.parent.name, self.kind)


def load_results(paths: Iterable[str | Path]) -> list[RunResult]:
    """Every ``result.json`` at or under ``paths`` (files or folders)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(p.rglob("result.json")))
        elif p.exists():
            files.append(p)
        else:
            raise InputError("no such file or folder", path=p, field="--results")
    out = []
    for f in files:
        d = read_result(f)
        out.append(RunResult(f, d["run_id"], datetime.fromisoformat(d["created_at"]), result_kind(d), d))
    return out


def split_path(path: str) -> list[str]:
    if path.startswith("/"):
        return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
    return path.split(".")


def _step(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        if key not in node:
            raise KeyError(key)
        return node[key]
    if isinstance(node, list):
        return node[int(key)]
    raise KeyError(key)


def resolve(data: dict[str, Any], path: str) -> tuple[float | None, tuple[float, float] | None]:
    """``(value, interval)`` at the metric ``path``; value None when the path is absent or null.
    The interval is the ``ci`` sibling (see ``judgeaudit.ledger.model``)."""
    keys = split_path(path)
    parent: Any = None
    node: Any = data
    try:
        for k in keys:
            parent, node = node, _step(node, k)
    except (KeyError, IndexError, ValueError):
        return None, None
    ci: Any = None
    if isinstance(node, dict) and "value" in node:
        node, ci = node.get("value"), node.get("ci")
    elif isinstance(parent, dict):
        ci = parent.get(f"{keys[-1]}_ci") if keys[-1] != "value" else parent.get("ci")
    if node is None or isinstance(node, bool) or not isinstance(node, int | float):
        return None, None
    ok = (isinstance(ci, list | tuple) and len(ci) == 2 and all(isinstance(x, int | float) and not isinstance(x, bool)
                                                                  for x in ci))
    return float(node), (float(ci[0]), float(ci[1])) if ok else None


@dataclass(frozen=True)
class Score:
    """The verdict of one unit."""

    prediction: str
    unit: str
    bar: str
    verdict: str
    direction: str | None
    value: float | None = None
    ci: tuple[float, float] | None = None
    run_id: str | None = None
    result: str | None = None


def _observed_sign(value: float, ci: tuple[float, float] | None) -> int:
    if ci is not None:
        return 1 if ci[0] > 0 else -1 if ci[1] < 0 else 0
    return (value > 0) - (value < 0)


def judge_unit(clause: Clause, value: float | None, ci: tuple[float, float] | None,
               fails_value: float | None) -> tuple[str, str | None]:
    """``(verdict, direction)`` of one clause at an observed value (None: not run)."""
    if value is None:
        return "not run", None
    s = clause.predicted_sign
    if s and ci is not None and _observed_sign(value, ci) == -s:
        verdict = "reversed"
    elif clause.fails is not None and fails_value is not None and clause.fails.holds(fails_value):
        verdict = "FAILS"
    elif clause.holds(value):
        verdict = "met"
    else:
        verdict = "not met"
    if not s:
        return verdict, _DEFAULT_DIRECTION[verdict]
    obs = _observed_sign(value, ci)
    return verdict, "as predicted" if obs == s else "null" if obs == 0 else "opposite"


def score(ledger: Ledger, results: list[RunResult], *, path: str | Path | None = None) -> list[Score]:
    """Score every committed unit against ``results`` (the newest result of the run each clause
    governs). Uncommitted predictions are not scored. ``InputError`` when the ledger was tampered
    with, or when the only result of a clause's run predates its commit."""
    verify(ledger, path)
    committed = ledger.committed_at()
    scores = []
    for p in ledger.predictions:
        if p.id not in committed:
            continue
        at = datetime.fromisoformat(committed[p.id].at)
        for unit, c in p.units():
            runs = [r for r in results if r.answers(c.run)]
            pinned = [r for r in runs if r.run_id == c.run]
            stale = [r for r in (pinned or runs) if r.created_at < at]
            if pinned and stale:
                raise InputError(f"{unit}: run {c.run} was created at {stale[0].created_at.isoformat()}, before "
                                 f"the clause was committed at {committed[p.id].at}; a run made before its "
                                 "prediction cannot score it", path=stale[0].path, field="created_at")
            fresh = sorted((r for r in runs if r.created_at >= at), key=lambda r: r.created_at)
            if not fresh and stale:
                raise InputError(f"{unit}: every result of run {c.run or '(any)'} was created before the clause "
                                 f"was committed at {committed[p.id].at} (newest "
                                 f"{max(r.created_at for r in stale).isoformat()}); a run made before its "
                                 "prediction cannot score it", path=stale[-1].path, field="created_at")
            hit = next((r for r in reversed(fresh) if resolve(r.data, c.metric)[0] is not None), None)
            if hit is None:
                scores.append(Score(p.id, unit, c.bar, "not run", None))
                continue
            value, ci = resolve(hit.data, c.metric)
            fails_value = resolve(hit.data, c.fails.metric or c.metric)[0] if c.fails else None
            verdict, direction = judge_unit(c, value, ci, fails_value)
            scores.append(Score(p.id, unit, c.bar, verdict, direction, value, ci, hit.run_id, str(hit.path)))
    return scores
