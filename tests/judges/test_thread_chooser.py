"""The embedded judge's thread count chosen from the timed calls (``judges.threads``), on scripted speeds:
no model is loaded here (the logits' independence of the count is pinned in test_local_reuse.py)."""

from __future__ import annotations

import pytest

from judgeaudit.judges import threads
from judgeaudit.judges.threads import ThreadChooser, candidates


class Machine:
    """Seconds per evaluated token at each thread count, changed by a test; a clock that calls advance."""

    def __init__(self, per_token: dict[int, float]):
        self.per_token = dict(per_token)
        self.now = 0.0
        self.applied: list[int] = []

    def set_threads(self, n: int) -> None:
        self.applied.append(n)

    def clock(self) -> float:
        return self.now

    def call(self, chooser: ThreadChooser, tokens: int = 32) -> int:
        n = chooser.before()
        seconds = tokens * self.per_token[n]
        self.now += seconds
        chooser.after(tokens, seconds)
        return n


def _run(machine: Machine, chooser: ThreadChooser, calls: int) -> list[int]:
    return [machine.call(chooser) for _ in range(calls)]


def test_candidates_are_powers_of_two_up_to_the_cores():
    assert candidates(1) == [1]
    assert candidates(2) == [1, 2]
    assert candidates(6) == [1, 2, 4]
    assert candidates(64) == [1, 2, 4, 8]


def test_an_idle_machine_settles_on_two_threads_after_the_probe():
    m = Machine({1: 0.0040, 2: 0.0022})          # as measured here: two threads ~1.8x as fast when idle
    c = ThreadChooser([1, 2], m.set_threads, clock=m.clock)
    counts = _run(m, c, 40)
    probe = 2 * threads.PROBE_CALLS
    assert counts[:probe] == [1] * threads.PROBE_CALLS + [2] * threads.PROBE_CALLS
    assert set(counts[probe:]) == {2} and c.best == 2


def test_a_busy_core_drops_the_second_thread_after_one_call_and_is_followed_back():
    m = Machine({1: 0.0040, 2: 0.0300})          # one core busy: two threads spin at ggml's barriers
    c = ThreadChooser([1, 2], m.set_threads, clock=m.clock)
    counts = _run(m, c, 30)
    assert counts.count(2) == 1                  # one probe call at two threads, then dropped
    assert c.best == 1
    m.per_token = {1: 0.0040, 2: 0.0022}         # the other core frees up
    m.now += threads.REPROBE_MAX
    counts = _run(m, c, 30)
    assert c.best == 2 and counts[-1] == 2
    m.per_token = {1: 0.0040, 2: 0.0300}         # and is taken again
    m.now += threads.REPROBE_MAX
    _run(m, c, 30)
    assert c.best == 1 and [n for _, n in c.history] == [1, 2, 1]


def test_no_probe_before_the_interval_and_short_calls_are_not_timed():
    m = Machine({1: 0.0040, 2: 0.0022})
    c = ThreadChooser([1, 2], m.set_threads, clock=m.clock)
    for _ in range(10):                          # served almost from the cache: a few tokens each
        n = c.before()
        c.after(threads.MIN_TOKENS - 1, 0.001)
        assert n == 1
    _run(m, c, 2 * threads.PROBE_CALLS)
    assert len(c.history) == 1
    m.per_token = {1: 0.0040, 2: 0.0300}
    calls = int(threads.REPROBE_MIN / (32 * 0.0300)) - 1
    _run(m, c, calls)                            # the machine changed, but within the interval: no probe
    assert len(c.history) == 1 and c.best == 2
    m.now = c.history[-1][0] + threads.REPROBE_MIN
    _run(m, c, 2 * threads.PROBE_CALLS)        # the probe: the count in use first, then the other
    assert len(c.history) == 2 and c.best == 1


def test_a_steady_machine_is_probed_less_and_less_often_and_a_change_resets_the_interval():
    m = Machine({1: 0.0040, 2: 0.0022})
    c = ThreadChooser([1, 2], m.set_threads, clock=m.clock)
    _run(m, c, 8000)                             # ~9 min of calls on an idle machine
    gaps = [round(b - a) for (a, _), (b, _) in zip(c.history, c.history[1:])]
    assert gaps[:4] == [10, 20, 40, 80] and set(gaps[4:]) == {160}
    assert {n for _, n in c.history} == {2}
    m.per_token = {1: 0.0040, 2: 0.0300}         # a core taken: followed at the next probe, then every 10 s
    m.now += threads.REPROBE_MAX
    _run(m, c, 10)
    assert c.best == 1 and c.interval == threads.REPROBE_MIN


@pytest.mark.parametrize("fixed", [1, 3])
def test_a_fixed_count_is_applied_once_and_never_probed(fixed):
    m = Machine({fixed: 0.004})
    c = ThreadChooser([fixed], m.set_threads, clock=m.clock)
    assert set(_run(m, c, 20)) == {fixed} and m.applied == [fixed]
