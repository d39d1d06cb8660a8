"""The estimate printed before each demo step, checked as a method against the embedded judge's recorded
calls of one cut demo run — no wall clock here.

``data/demo_call_durations.csv`` holds every call the embedded judge made in ``judgeaudit demo`` (the cut
sizes) on a shared 2-core machine, in the order they were stored, with its step, judge and request kind;
``data/demo_step_estimates.json`` the seconds per call by judge and kind that the demo's estimate used
before each step (the judge's timed warm-up plan: no call was stored before the run). Both were written by
``benchmarks/demo_estimates.py --record tests/runtime/data``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime.estimate import MEASURED_MIN, estimate, request_kind

DATA = Path(__file__).parent / "data"
CALLS = pd.read_csv(DATA / "demo_call_durations.csv")
ESTIMATES = json.loads((DATA / "demo_step_estimates.json").read_text(encoding="utf-8"))


class Planned:
    """A judge that plans its calls from a warm-up, as the local judge does (``planned_seconds``), at the
    per-call seconds the demo's estimate used."""

    cacheable = True

    def __init__(self, per_call: dict[str, float]):
        self.per_call = per_call
        self.spec = SimpleNamespace(backend="local", model=None, params={})

    def planned_seconds(self, todo: list[JudgeRequest]) -> dict[str, tuple[int, float]]:
        counts = Counter(request_kind(r) for r in todo)
        return {k: (n, n * self.per_call[k]) for k, n in counts.items()}


def _request(kind: str, i: int) -> JudgeRequest:
    form = kind.removesuffix(" (regrade)")
    return JudgeRequest(request_id=f"r{i}", form=form, text="t", prompt="p",
                        meta={"regrade": True} if kind.endswith("(regrade)") else {})


def test_the_recording_is_the_cut_demo_s_three_model_steps():
    assert list(CALLS.columns) == ["step", "judge", "kind", "latency_s"]
    assert list(dict.fromkeys(CALLS["step"])) == ["validity", "world", "loop"] == list(ESTIMATES)
    assert CALLS["latency_s"].gt(0).all()
    assert set(CALLS["kind"]) == {"graded", "graded (regrade)", "label", "generate"}


def _warm_up_estimate(step: str) -> tuple[float, float]:
    """(the warm-up estimate of the calls the step made, their recorded seconds)."""
    calls = CALLS[CALLS["step"] == step]
    total = 0.0
    for judge, part in calls.groupby("judge", sort=False):
        todo = [_request(k, i) for i, k in enumerate(part["kind"])]
        e = estimate(Planned(ESTIMATES[step]["per_call"][judge]), todo, cached={})
        assert "planned from a timed warm-up" in e.time_basis
        total += e.seconds
    return total, float(calls["latency_s"].sum())


@pytest.mark.parametrize("step", ["validity", "world"])
def test_the_warm_up_estimate_of_a_reading_step_is_within_2x_of_its_recorded_calls(step):
    """Graded reads, regrades and world labels: one forward pass over the prompt, planned token by token."""
    est, actual = _warm_up_estimate(step)
    assert 0.5 <= est / actual <= 2.0, (step, est, actual)


def test_the_warm_up_estimate_of_the_loop_s_generations_is_an_upper_bound():
    """Generations are planned at their max_tokens bound; the recorded ones stopped well before it (their
    calls ran ~4x faster than planned), so the loop's estimate is an upper bound, not within 2x; the progress
    lines re-estimate from the first completed call (test_remaining.py)."""
    est, actual = _warm_up_estimate("loop")
    assert est >= actual


def test_the_demo_s_own_step_estimates_are_those_of_the_method():
    """The estimate each step printed (steps.json) is the method's estimate of the calls it was to make:
    at least the calls it made, since no call was stored before the run."""
    for step in ESTIMATES:
        est, _ = _warm_up_estimate(step)
        assert ESTIMATES[step]["estimate_s"] >= est - 1e-6


@pytest.mark.parametrize("step", ["validity", "world"])
def test_a_rerun_estimated_from_the_first_calls_stored_is_within_2x_of_the_calls_left(step):
    """The judge's own stored calls, once there are enough of a kind, set its rate: the first calls of a step
    stored, the rest estimated from them."""
    calls = CALLS[(CALLS["step"] == step) & (CALLS["judge"] == "local")].reset_index(drop=True)
    split = max(MEASURED_MIN, len(calls) // 4)
    cached = {f"k{i}": Verdict(call_key=f"k{i}", request_id=f"s{i}", judge_id="local", latency_s=lat,
                               parse_ok=True, form=kind.removesuffix(" (regrade)"),
                               meta={"regrade": True} if kind.endswith("(regrade)") else {})
              for i, (kind, lat) in enumerate(zip(calls["kind"][:split], calls["latency_s"][:split], strict=True))}
    rest = calls.iloc[split:]
    todo = [_request(k, i) for i, k in enumerate(rest["kind"])]
    e = estimate(Planned(ESTIMATES[step]["per_call"]["local"]), todo, cached=cached)
    assert "measured on" in e.time_basis
    assert 0.5 <= e.seconds / rest["latency_s"].sum() <= 2.0, (step, e.seconds, rest["latency_s"].sum())
