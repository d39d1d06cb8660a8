"""What a run will take before it starts: calls to make against calls already stored, time and money.

* time per call: the mean latency of the judge's own calls already in the store when there are at
  least ``MEASURED_MIN`` of them (measured), else a documented per-backend constant
  (``SECONDS_PER_CALL``); unknown for hosted models until their first calls are stored. A
  composite judge costs its members' calls (``vote:K`` K times its inner judge, an ensemble the
  sum of its members). Calls running concurrently divide the wall time.
* money: an ``api`` judge is priced with the LiteLLM cost map when it knows the model — prompt
  tokens taken as the rendered prompt's characters / ``CHARS_PER_TOKEN``, completion tokens at
  their ``max_tokens`` bound, so the figure is an upper estimate; the other backends cost nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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
        tokens_in = sum(math.ceil(len(p.render(r)) / CHARS_PER_TOKEN) for r in todo)
        max_out = p.spec.params.get("max_tokens")
        tokens_out = sum(int(max_out or _DEFAULT_MAX_TOKENS.get(r.form, 1024)) for r in todo)
        total += tokens_in * info["input_cost_per_token"] + tokens_out * info["output_cost_per_token"]
    return total, f"LiteLLM cost map; prompt ≈ characters/{CHARS_PER_TOKEN} tokens, completion at max_tokens"


def estimate(judge: Judge, todo: list[JudgeRequest], *, cached: dict[str, Verdict],
             concurrency: int = 1) -> Estimate:
    """The estimate for calling ``judge`` on ``todo`` with ``cached`` (its calls found in the store)."""
    lat = [v.latency_s for v in cached.values() if v.latency_s is not None and v.error is None]
    conc = max(1, min(concurrency, len(todo) or 1))
    if len(lat) >= MEASURED_MIN:
        per: float | None = sum(lat) / len(lat)
        basis = f"{per:.2g} s per call, measured on {len(lat)} stored calls"
    else:
        per = _constant_seconds(judge)
        basis = "unknown until calls are measured" if per is None else f"{per:.2g} s per call, documented rate"
    seconds = None if per is None else len(todo) * per / conc
    cost, cost_basis = _cost(judge, todo)
    return Estimate(len(todo), len(cached), seconds, cost, basis, cost_basis)
