"""What a run will take before it starts: calls to make against calls already stored, time and money.

* time, per request kind (``request_kind``: the verdict form, a regrade apart — a graded read is not a
  generation, and a regrade evaluates its whole prompt): the mean latency of the judge's own stored
  calls of that kind when there are at least ``MEASURED_MIN`` of them (measured); else, for a judge
  that can plan its calls on this machine (the local judge's ``planned_seconds``: the tokens each call
  evaluates and generates, timed by a short warm-up), that plan; else a documented per-backend
  constant (``SECONDS_PER_CALL``); unknown for hosted models until their first calls are stored. A
  composite judge costs its members' calls (``vote:K`` K times its inner judge, an ensemble the
  sum of its members). Calls running concurrently divide the wall time.
* re-estimated as the run goes (``Remaining``, judgeaudit's own method): the calls left of each kind
  times the median latency of that kind's calls completed in this run (a median, so the first call's
  model load or connection set-up does not inflate the rest), the estimate's per-call time
  standing in for a kind with none completed yet; concurrency divides it as above. It is what the
  progress lines' ETA shows, so a run whose first calls were slower or faster than planned is re-planned
  after its first completions, and warm-up time spent before the first answer does not enter the rate.
* money: an ``api`` judge is priced with the LiteLLM cost map when it knows the model — prompt
  tokens taken as the rendered prompt's characters / ``CHARS_PER_TOKEN``, completion tokens at
  their ``max_tokens`` bound, so the figure is an upper estimate; the other backends cost nothing.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judgeaudit.judges.base import Judge
from judgeaudit.records import JudgeRequest, Verdict

LOCAL_SECONDS_PER_CALL = 2.3
"""The embedded Gemma 3 270M on 2 CPU cores: ``cap run --set rm_bench:… --judge local`` made 4,788
pairwise calls in about 3 h (graded calls that share a prompt prefix are faster)."""
SECONDS_PER_CALL: dict[str, float] = {"local": LOCAL_SECONDS_PER_CALL, "reference": 0.0, "replay": 0.0}
"""Documented per-call time of the backends that run here (hosted models: measured only)."""
MEASURED_MIN = 5
"""Stored calls of a judge needed before their mean latency is used as its rate."""
CHARS_PER_TOKEN = 4
_DEFAULT_MAX_TOKENS = {"graded": 16}   # the api backend's defaults (judges/api.py); other forms 1024


@dataclass(frozen=True)
class Estimate:
    """Calls to make now, calls already stored, and the expected wall time and cost (None: unknown)."""

    calls: int
    cached: int
    seconds: float | None
    cost_usd: float | None
    time_basis: str
    cost_basis: str
    per_call: dict[str, float | None] = field(default_factory=dict)
    """Seconds per call by request kind (None: unknown) that ``seconds`` was built from."""

    def describe(self) -> str:
        if self.seconds is None:
            time_text = f"time {self.time_basis}"
        else:
            time_text = f"~{duration(self.seconds)} ({self.time_basis})"
        if self.cost_usd is None:
            cost_text = f"cost {self.cost_basis}"
        elif self.cost_usd == 0:
            cost_text = "no cost"
        else:
            cost_text = f"cost ≤ ${self.cost_usd:.4f} ({self.cost_basis})"
        return f"{time_text}, {cost_text}"


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 58 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{max(seconds, 0):.0f} s" if seconds >= 1 or seconds == 0 else f"{seconds:.1f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _parts(judge: Judge) -> list[Judge]:
    """The judges whose calls one call of ``judge`` makes (itself for a plain backend)."""
    inner = getattr(judge, "inner", None)
    if inner is not None:
        return [p for _ in range(int(getattr(judge, "k", 1))) for p in _parts(inner)]
    members = getattr(judge, "members", None)
    if members:
        return [p for m in members for p in _parts(m)]
    return [judge]


def request_kind(request: JudgeRequest | Verdict) -> str:
    """The kind a call's time is estimated by: its form, a graded regrade apart."""
    regrade = request.form == "graded" and bool(request.meta.get("regrade"))
    return "graded (regrade)" if regrade else str(request.form)


def _planned(judge: Judge, todo: list[JudgeRequest]) -> dict[str, tuple[int, float]] | None:
    """Calls and seconds by kind planned by the judge itself (``planned_seconds``), None if it cannot."""
    plan = getattr(judge, "planned_seconds", None)
    if plan is not None:
        return plan(todo)
    inner = getattr(judge, "inner", None)
    if inner is not None:   # K calls of each request, one after another
        return _planned(inner, [r for r in todo for _ in range(int(getattr(judge, "k", 1)))])
    members = getattr(judge, "members", None)
    if not members:
        return None
    total: dict[str, tuple[int, float]] = {}
    for m in members:
        part = _planned(m, todo)
        if part is None:
            return None
        for kind, (_, sec) in part.items():
            total[kind] = (sum(request_kind(r) == kind for r in todo), total.get(kind, (0, 0.0))[1] + sec)
    return total


def _constant_seconds(judge: Judge) -> float | None:
    per = [SECONDS_PER_CALL.get(p.spec.backend) for p in _parts(judge)]
    return None if any(x is None for x in per) else float(sum(per))  # type: ignore[arg-type]


def _model_prices(model: str | None) -> dict[str, Any] | None:
    if not model:
        return None
    try:
        import litellm

        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - an unknown model raises
        return None
    if info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None
    return info


def _cost(judge: Judge, todo: list[JudgeRequest]) -> tuple[float | None, str]:
    total = 0.0
    for p in _parts(judge):
        if p.spec.backend != "api":
            continue
        info = _model_prices(p.spec.model)
        if info is None:
            return None, "unknown (model not in the LiteLLM cost map)"
        # a model whose prompt tokens cost nothing (a local server's): its prompts are not rendered to count them
        tokens_in = (sum(math.ceil(len(p.render(r)) / CHARS_PER_TOKEN) for r in todo)
                     if info["input_cost_per_token"] else 0)
        max_out = p.spec.params.get("max_tokens")
        tokens_out = sum(int(max_out or _DEFAULT_MAX_TOKENS.get(r.form, 1024)) for r in todo)
        total += tokens_in * info["input_cost_per_token"] + tokens_out * info["output_cost_per_token"]
    return total, f"LiteLLM cost map; prompt ≈ characters/{CHARS_PER_TOKEN} tokens, completion at max_tokens"


def estimate(judge: Judge, todo: list[JudgeRequest], *, cached: dict[str, Verdict],
             concurrency: int = 1) -> Estimate:
    """The estimate for calling ``judge`` on ``todo`` with ``cached`` (its calls found in the store)."""
    conc = max(1, min(concurrency, len(todo) or 1))
    lat: dict[str, list[float]] = {}
    for v in cached.values():
        if v.latency_s is not None and v.error is None:
            lat.setdefault(request_kind(v), []).append(v.latency_s)
    kinds: dict[str, list[JudgeRequest]] = {}
    for r in todo:
        kinds.setdefault(request_kind(r), []).append(r)
    plan = None
    if any(len(lat.get(k, [])) < MEASURED_MIN for k in kinds):
        plan = _planned(judge, todo)
    seconds: float | None = 0.0
    parts = []
    per_call: dict[str, float | None] = {}
    for kind, reqs in kinds.items():
        got = lat.get(kind, [])
        if len(got) >= MEASURED_MIN:
            per: float | None = sum(got) / len(got)
            parts.append(f"{kind}: {len(reqs)} × {per:.2g} s, measured on {len(got)} stored calls")
        elif plan is not None and kind in plan:
            per = plan[kind][1] / max(1, len(reqs))
            parts.append(f"{kind}: {len(reqs)} × {per:.2g} s, planned from a timed warm-up here")
        else:
            per = _constant_seconds(judge)
            parts.append(f"{kind}: unknown until calls are measured" if per is None
                         else f"{kind}: {len(reqs)} × {per:.2g} s, documented rate")
        per_call[kind] = per
        seconds = None if per is None or seconds is None else seconds + len(reqs) * per
    if seconds is not None:
        seconds /= conc
    cost, cost_basis = _cost(judge, todo)
    return Estimate(len(todo), len(cached), seconds, cost, "; ".join(parts), cost_basis, per_call)


class Remaining:
    """The remaining time of a run, re-estimated from its completed calls (see the module docstring).

    Args:
        kinds: the request kind of every call the run makes (``request_kind``).
        concurrency: calls in flight at once.
        prior: seconds per call by kind before any completed (``Estimate.per_call``; None: unknown).
    """

    def __init__(self, kinds: Iterable[str], *, concurrency: int = 1, prior: dict[str, float | None] | None = None):
        self.left = Counter(kinds)
        self.concurrency = max(1, concurrency)
        self.prior = dict(prior or {})
        self.times: dict[str, list[float]] = {}

    def done(self, kind: str, seconds: float | None) -> None:
        """One call of ``kind`` completed, taking ``seconds`` (None: not timed, e.g. a failed call)."""
        if self.left[kind] > 0:
            self.left[kind] -= 1
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            self.times.setdefault(kind, []).append(seconds)

    def per_call(self, kind: str) -> float | None:
        """Median latency of this run's completed calls of ``kind``, else the prior, else all kinds' median."""
        if self.times.get(kind):
            return statistics.median(self.times[kind])
        if self.prior.get(kind) is not None:
            return self.prior[kind]
        every = [t for ts in self.times.values() for t in ts]
        return statistics.median(every) if every else None

    def seconds(self) -> float | None:
        """Expected seconds until every call left is answered (None: no rate known yet)."""
        left = {k: n for k, n in self.left.items() if n > 0}
        if not left:
            return 0.0
        total = 0.0
        for kind, n in left.items():
            per = self.per_call(kind)
            if per is None:
                return None
            total += n * per
        return total / min(self.concurrency, sum(left.values()))
