"""Scoring committed clauses against run results (blind-spot.txt §3.8).

Each unit receives one of five verdicts, checked in this order:

* ``not run``  — no result of the run it governs, or the metric path is absent or null there;
* ``reversed`` — the clause predicts a sign and the metric's interval excludes zero on the other side;
* ``FAILS``    — its FAILS condition (its own, or its prediction's) holds;
* ``met``      — its bar holds at the point estimate;
* ``not met``  — otherwise (the FAILS condition was not triggered).

The **direction** of a unit that ran is one rule: a one-sided test of zero in the predicted
direction at level ``alpha`` (``ALPHA`` = 0.05 unless ``score(..., alpha=)`` says otherwise). With
``p`` the one-sided p-value in the predicted direction, ``p < alpha`` → *as predicted*,
``1 − p < alpha`` → *opposite*, else *null*. ``p`` is, in this order:

* the run's p-value of the metric (its ``_p`` sibling, or the path the clause names; see
  ``judgeaudit.ledger.model``), turned one-sided: a ``greater`` p is kept for a predicted +
  (1 − p for a predicted −), a ``less`` p the mirror image, a ``two-sided`` p halved on the observed
  side (p/2 when the estimate has the predicted sign, 1 − p/2 otherwise);
* else the one-sided p its interval implies (a two-sided 95% interval, ``CI_LEVEL``, read as a normal
  one: the standard error is the half-interval on zero's side over z₀.₉₇₅; Altman & Bland, BMJ 2011,
  "How to obtain the P value from a confidence interval") — at α = 0.05 the direction is
  *as predicted* when the 90% interval excludes zero;
* else none: the point estimate's sign decides (zero → null).

A clause whose metric carries a p states an effect in the direction its bar points (see
``Clause.tested_sign``). A clause with no predicted sign (a level, not an effect) takes its verdict's
default: *as predicted* for met and not met, *opposite* for FAILS and reversed. The verdict
*reversed* is read from the interval alone (it excludes zero on the other side; blind-spot.txt
Appendix A), never from a p.

A clause may be scored only by data made after its commit. A result is **pre-commit** for a clause
when it was created before the commit, or when it records (under ``answers``, see
``judgeaudit.runinfo.answer_record``) a verdict answered before the commit — a rerun answered from
the call store keeps its first answer times — or a verdict read from a file (``replay:``, or the published judge
outputs of ``cap --published``), whose answer time nobody recorded and which is therefore treated as
pre-commit. A result that records no answer times
(an analysis that calls no judge, or a result written before they were recorded) is judged by its
``created_at`` alone, and its scores say so. A clause pinned to a pre-commit run's id, or whose
every matching result is pre-commit, raises ``InputError``.

**Every** post-commit result of a clause's run is scored (``Score.runs``, oldest first, with the
pre-commit ones listed and not scored). The unit's verdict is that of the **first** post-commit run
— the run the prediction governed; a later rerun (another ``--s-floor``, say) cannot replace it —
and ``Score.divergent`` flags a unit whose verdict differs across its runs. A clause that names its
run by id is scored by that run only.

A metric path present with a null value is a run that happened and reported no number: *not met*,
direction null (Table 6 keeps *not run* for clauses committed and never run). A FAILS condition
whose metric path is absent from a result that holds the clause's own metric raises ``InputError``
(a FAILS that reads nothing can never trigger).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from scipy.stats import norm

from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import verify
from judgeaudit.ledger.model import ALTERNATIVES, Clause, Ledger, is_own
from judgeaudit.runfolder import result_files
from judgeaudit.runinfo import Answers, RunStamp, read_stamped, result_kind

VERDICTS = ("met", "not met", "FAILS", "reversed", "not run")
DIRECTIONS = ("as predicted", "null", "opposite")
ALPHA = 0.05
"""Level of the one-sided direction test (module docstring)."""
CI_LEVEL = 0.95
"""The level of the two-sided intervals a run writes (judgeaudit's intervals are 95%)."""
_DEFAULT_DIRECTION = {"met": "as predicted", "not met": "as predicted", "FAILS": "opposite",
                      "reversed": "opposite"}


@dataclass(frozen=True)
class RunResult:
    path: Path
    run_id: str
    created_at: datetime
    kind: str | None
    data: dict[str, Any]
    """The result's object, read by a clause's metric path (``resolve``): a path names any key of any result."""
    stamp: RunStamp

    def answers(self, run: str | None) -> bool:
        """Whether this result is (one of) the run(s) ``run`` names: its run id, its folder's name,
        or its analysis kind; ``None`` names any run."""
        return run is None or run in (self.run_id, self.path.parent.name, self.kind)

    @property
    def answer_times(self) -> Answers | None:
        """The ``answers`` record of the result (see ``judgeaudit.runinfo.answer_record``), or None."""
        return self.stamp.answers

    def pre_commit(self, at: datetime) -> str | None:
        """Why this result cannot score a clause committed at ``at`` (None: it can)."""
        if self.created_at < at:
            return f"created at {self.created_at.isoformat()}"
        a = self.answer_times
        if a is None:
            return None
        if a.replayed:
            return (f"fed {a.replayed} of its {a.calls} verdicts from a file (replay: or published judge "
                    "outputs), whose answer times are not recorded (treated as pre-commit)")
        if a.untimed:
            return f"fed {a.untimed} of its {a.calls} verdicts without a recorded answer time"
        if a.earliest and _when(a.earliest, self.path, "answers.earliest") < at:
            return (f"answered from {a.earliest} (earliest of its {a.calls} verdicts) to {a.latest} "
                    "— served from the call store")
        return None


def _when(text: str, path: Path | str | None, field: str) -> datetime:
    """A zoned ISO 8601 time, or ``InputError`` naming the file and field."""
    try:
        t = datetime.fromisoformat(str(text))
    except ValueError:
        raise InputError(f"{text!r} is not an ISO 8601 time", path=path, field=field) from None
    if t.tzinfo is None:
        raise InputError(f"{text!r} has no time zone", path=path, field=field)
    return t


def load_results(paths: Iterable[str | Path]) -> list[RunResult]:
    """Every ``result.json`` at or under ``paths`` (files or folders)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(result_files(p))
        elif p.exists():
            files.append(p)
        else:
            raise InputError("no such file or folder", path=p, field="--results")
    out = []
    for f in files:
        stamp, d = read_stamped(f)
        out.append(RunResult(f, str(stamp.run_id), stamp.when(f), result_kind(d), d, stamp))
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


def present(data: dict[str, Any], path: str) -> bool:
    """Whether the metric ``path`` exists in ``data`` (its value may be null)."""
    node: Any = data
    try:
        for k in split_path(path):
            node = _step(node, k)
    except (KeyError, IndexError, ValueError):
        return False
    return True


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


def resolve_p(data: dict[str, Any], clause: Clause, path: Path | str | None = None) -> tuple[float, str] | None:
    """``(p, alternative)`` of the clause's metric: the path the clause names (``p``), else the ``_p``
    sibling of the metric (or ``p`` beside ``value``); None when the run writes none. A p outside
    [0, 1] or an unknown sidedness raises ``InputError`` naming the field."""
    keys = split_path(clause.metric)
    if clause.p is not None:
        pkeys = split_path(clause.p)
        if not present(data, clause.p):
            raise InputError(f"the clause names its p-value {clause.p!r}, which this result does not hold",
                             path=path, field=clause.p)
        holder: Any = data
        for k in pkeys[:-1]:
            holder = _step(holder, k)
        pkey = pkeys[-1]
    else:
        try:
            node: Any = data
            holder = None
            for k in keys:
                holder, node = node, _step(node, k)
        except (KeyError, IndexError, ValueError):
            return None
        if isinstance(node, dict) and "value" in node:
            holder, pkey = node, "p"
        elif keys[-1] == "value" and isinstance(holder, dict):
            pkey = "p"
        elif isinstance(holder, dict):
            pkey = f"{keys[-1]}_p"
        else:
            return None
    if not isinstance(holder, dict) or holder.get(pkey) is None:
        return None
    p, field = holder[pkey], ".".join([*keys[:-1], pkey]) if clause.p is None else clause.p
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise InputError(f"p-value {p!r} is not a number in [0, 1]", path=path, field=field)
    alt = clause.p_alternative or holder.get(f"{pkey}_alternative") or "two-sided"
    if alt not in ALTERNATIVES:
        raise InputError(f"sidedness {alt!r} is not one of {', '.join(ALTERNATIVES)}", path=path,
                         field=f"{field}_alternative")
    return float(p), str(alt)


def one_sided_p(sign: int, value: float, ci: tuple[float, float] | None,
                p: tuple[float, str] | None) -> float | None:
    """The one-sided p-value for an effect of sign ``sign`` (module docstring): from the run's p,
    else from the interval, else None."""
    if p is not None:
        pv, alt = p
        if alt == "two-sided":
            return pv / 2 if (value > 0) - (value < 0) == sign else 1 - pv / 2
        return pv if (alt == "greater") == (sign > 0) else 1 - pv
    if ci is None or value == 0:
        return None
    half = (value - ci[0]) if value > 0 else (ci[1] - value)
    if half <= 0:   # a degenerate interval: read its sign
        obs = _observed_sign(value, ci)
        return None if obs == 0 else 0.0 if obs == sign else 1.0
    z = value / (half / norm.ppf(0.5 + CI_LEVEL / 2))
    return float(norm.sf(z * sign))


@dataclass(frozen=True)
class RunScore:
    """A unit's verdict against one matching result; ``pre_commit`` says why a result was not
    scored (its verdict is then None)."""

    run_id: str
    result: str
    created_at: str
    verdict: str | None
    direction: str | None
    value: float | None = None
    ci: tuple[float, float] | None = None
    pre_commit: str | None = None
    answers_recorded: bool = True
    p: float | None = None
    p_alternative: str | None = None
    p_one_sided: float | None = None   # in the predicted direction: what the direction was read from


@dataclass(frozen=True)
class Score:
    """The verdict of one unit: that of its first post-commit run (``run_id``, ``result``), with every
    matching run in ``runs``."""

    prediction: str
    unit: str
    bar: str
    verdict: str
    direction: str | None
    value: float | None = None
    ci: tuple[float, float] | None = None
    run_id: str | None = None
    result: str | None = None
    runs: tuple[RunScore, ...] = ()
    note: str | None = None
    own: bool = False   # the metric is a judgeaudit extension, not a paper quantity
    p: float | None = None
    p_alternative: str | None = None
    p_one_sided: float | None = None

    @property
    def scored_runs(self) -> tuple[RunScore, ...]:
        return tuple(r for r in self.runs if r.pre_commit is None)

    @property
    def divergent(self) -> bool:
        """Whether the verdict differs across the post-commit runs that hold this unit's metric."""
        return len({(r.verdict, r.direction) for r in self.scored_runs if r.verdict != "not run"}) > 1


def _observed_sign(value: float, ci: tuple[float, float] | None) -> int:
    if ci is not None:
        return 1 if ci[0] > 0 else -1 if ci[1] < 0 else 0
    return (value > 0) - (value < 0)


def judge_unit(clause: Clause, value: float | None, ci: tuple[float, float] | None,
               fails_value: float | None, p: tuple[float, str] | None = None,
               alpha: float = ALPHA) -> tuple[str, str | None]:
    """``(verdict, direction)`` of one clause at an observed value (None: not run), with the run's
    ``(p, alternative)`` when it writes one."""
    if value is None:
        return "not run", None
    s = clause.tested_sign(p is not None)
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
    q = one_sided_p(s, value, ci, p)
    if q is None:
        obs = _observed_sign(value, None)
        return verdict, "as predicted" if obs == s else "null" if obs == 0 else "opposite"
    return verdict, "as predicted" if q < alpha else "opposite" if 1 - q < alpha else "null"


def _field(why: str | None) -> str:
    return "created_at" if (why or "").startswith("created") else "answers"


def _score_one(c: Clause, unit: str, r: RunResult, alpha: float = ALPHA) -> RunScore:
    value, ci = resolve(r.data, c.metric)
    base = {"run_id": r.run_id, "result": str(r.path), "created_at": r.created_at.isoformat(),
            "answers_recorded": r.answer_times is not None}
    if value is None and not present(r.data, c.metric):
        return RunScore(**base, verdict="not run", direction=None)
    fails_value = None
    if c.fails is not None:
        fm = c.fails.metric or c.metric
        if not present(r.data, fm):
            raise InputError(f"{unit}: its FAILS condition reads {fm!r}, which this result does not hold; a FAILS "
                             "clause that reads nothing can never trigger", path=r.path, field=fm)
        fails_value = resolve(r.data, fm)[0]
    if value is None:   # the run happened and reported no number: short of its bar, no direction
        failed = c.fails is not None and fails_value is not None and c.fails.holds(fails_value)
        return RunScore(**base, verdict="FAILS" if failed else "not met", direction="null")
    p = resolve_p(r.data, c, r.path)
    verdict, direction = judge_unit(c, value, ci, fails_value, p, alpha)
    s = c.tested_sign(p is not None)
    q = one_sided_p(s, value, ci, p) if s else None
    return RunScore(**base, verdict=verdict, direction=direction, value=value, ci=ci,
                    p=p[0] if p else None, p_alternative=p[1] if p else None, p_one_sided=q)


def score(ledger: Ledger, results: list[RunResult], *, path: str | Path | None = None,
          alpha: float = ALPHA) -> list[Score]:
    """Score every committed unit against ``results``: every post-commit result of the run each
    clause governs (see the module docstring), the unit taking its first one's verdict; ``alpha`` is
    the level of the one-sided direction test.
    Uncommitted predictions are not scored. ``InputError`` when the ledger was tampered with, or
    when every result of a clause's run (or the one it pins) is pre-commit."""
    verify(ledger, path)
    committed = ledger.committed_at()
    scores = []
    for p in ledger.predictions:
        if p.id not in committed:
            continue
        at = _when(committed[p.id].at, path, "commits.at")
        for unit, c in p.units():
            runs = sorted((r for r in results if r.answers(c.run)), key=lambda r: r.created_at)
            pinned = [r for r in runs if r.run_id == c.run]
            runs = pinned or runs
            why = [r.pre_commit(at) for r in runs]
            stale = [(r, w) for r, w in zip(runs, why, strict=True) if w]
            if pinned and stale:
                r, w = stale[0]
                raise InputError(f"{unit}: run {c.run} was {w}, before the clause was committed at "
                                 f"{committed[p.id].at}; a run made before its prediction cannot score it",
                                 path=r.path, field=_field(w))
            if runs and len(stale) == len(runs):
                r, w = stale[-1]
                raise InputError(f"{unit}: every result of run {c.run or '(any)'} was created before the clause was "
                                 f"committed at {committed[p.id].at}, or answered before it (newest: was {w}); a "
                                 "run made before its prediction cannot score it", path=r.path, field=_field(w))
            rows = tuple(RunScore(r.run_id, str(r.path), r.created_at.isoformat(), None, None, pre_commit=w,
                                  answers_recorded=r.answer_times is not None) if w else _score_one(c, unit, r, alpha)
                         for r, w in zip(runs, why, strict=True))
            fresh = [s for s in rows if s.pre_commit is None]
            ran = [s for s in fresh if s.verdict != "not run"]
            first = (ran or fresh or [None])[0]
            if first is None:
                scores.append(Score(p.id, unit, c.bar, "not run", None, runs=rows, own=is_own(c.metric)))
                continue
            note = None if first.answers_recorded else \
                "this result records no answer times: judged by its created_at only"
            scores.append(Score(p.id, unit, c.bar, first.verdict, first.direction, first.value, first.ci,
                                first.run_id, first.result, rows, note, is_own(c.metric), first.p,
                                first.p_alternative, first.p_one_sided))
    return scores
