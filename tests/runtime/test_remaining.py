"""The progress lines' ETA: the remaining time re-estimated from the calls completed so far
(``estimate.Remaining``), checked as a method against recorded call durations — no wall clock here.

``data/local_call_durations.csv`` holds the latencies of the embedded local judge's calls on a busy 2-core
machine, in the order they were made, with each call's request kind (the demo's validity step on one probe
base: 13 graded reads, the first of them loading the model; then its loop step on two IFEval items:
generations of at most 64 tokens), recorded by ``benchmarks/record_call_durations.py``.
Fed to the estimator one call at a time, its estimate after k calls is compared with the time the
remaining calls really took."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgeaudit.runtime.estimate import Remaining

DURATIONS = Path(__file__).parent / "data" / "local_call_durations.csv"


def _recorded() -> pd.DataFrame:
    df = pd.read_csv(DURATIONS)
    assert list(df.columns) == ["step", "kind", "latency_s"] and len(df) >= 15
    assert df["latency_s"].gt(0).all()
    return df


def _ratios(df: pd.DataFrame, prior: dict[str, float | None], *, start: int) -> list[tuple[int, float]]:
    """(k, estimate after k calls / actual time of the calls after k), for every k from ``start``."""
    lat, kinds = df["latency_s"].tolist(), df["kind"].tolist()
    rem = Remaining(kinds, concurrency=1, prior=prior)
    out = []
    for k in range(len(df) - 1):
        rem.done(kinds[k], lat[k])
        if k + 1 >= start:
            out.append((k + 1, rem.seconds() / sum(lat[k + 1:])))
    return out


def test_the_estimate_after_k_calls_is_within_2x_of_the_time_left_on_recorded_calls():
    df = _recorded()
    assert df["kind"].nunique() >= 2          # the steps differ in kind: a graded read is not a generation
    # the prior for each kind: the first call of that kind as a warm-up would time it (judgeaudit's
    # estimate plans from a timed warm-up when a judge has no stored calls)
    prior = df.groupby("kind", sort=False)["latency_s"].first().to_dict()
    ratios = _ratios(df, prior, start=3)
    off = [(k, round(r, 2)) for k, r in ratios if not 0.5 <= r <= 2.0]
    assert off == [], f"estimates off by more than 2x after k calls: {off}"


def test_a_kind_not_seen_yet_is_planned_by_its_prior_not_by_the_other_kinds_rate():
    """Generation calls take many graded reads' time: with no generation completed, an estimate that
    reused the graded rate would promise the loop in seconds; the prior keeps it within 2x."""
    df = _recorded()
    first_gen = df.index[df["kind"] != df["kind"].iloc[0]][0]
    rem = Remaining(df["kind"], concurrency=1)           # no prior: only what completed
    for kind, s in zip(df["kind"][:first_gen], df["latency_s"][:first_gen], strict=True):
        rem.done(kind, s)
    actual = df["latency_s"][first_gen:].sum()
    blind = rem.seconds() / actual
    assert blind < 0.5                                   # the graded rate alone underestimates the rest
    prior = df.groupby("kind", sort=False)["latency_s"].first().to_dict()
    rem = Remaining(df["kind"], concurrency=1, prior=prior)
    for kind, s in zip(df["kind"][:first_gen], df["latency_s"][:first_gen], strict=True):
        rem.done(kind, s)
    assert 0.5 <= rem.seconds() / actual <= 2.0


def test_remaining_counts_concurrency_failures_and_the_end():
    rem = Remaining(["graded"] * 4 + ["defects"] * 2, concurrency=2, prior={"graded": 1.0, "defects": None})
    assert rem.seconds() is None                         # no rate for defects yet
    rem.done("defects", 10.0)
    assert rem.seconds() == pytest.approx((4 * 1.0 + 1 * 10.0) / 2)
    rem.done("graded", 30.0)                             # the first call loads the model
    rem.done("graded", None)                             # a failed call: counted done, not timed
    assert rem.seconds() == pytest.approx((2 * 30.0 + 1 * 10.0) / 2)
    rem.done("graded", 3.0)
    assert rem.per_call("graded") == pytest.approx(16.5)
    rem.done("graded", 4.0)
    assert rem.per_call("graded") == 4.0                 # the median: the load no longer sets the rate
    assert rem.seconds() == pytest.approx(10.0)          # one call left: concurrency does not divide it
    rem.done("defects", 12.0)
    assert rem.seconds() == 0.0
