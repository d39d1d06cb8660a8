"""How many compute threads the embedded judge uses: chosen by its measured speed on this machine
(judgeaudit's own method).

llama.cpp computes a token's logits bit for bit the same on one thread or several (each output row of a
matrix product is computed whole by one thread; ``tests/judges/test_local_reuse.py`` pins this), so the
thread count changes the judge's speed and nothing it grades. Which count is fastest depends on the
machine's load: on an idle 2-core machine two threads grade about 1.6 times as fast as one, beside one busy
core ggml's spinning thread barriers make two threads about half as fast as one (benchmarks/local_judge.py).

``ThreadChooser`` therefore times the calls themselves. It probes each candidate count (1, 2, 4, … up to
the usable cores, at most 8) on ``PROBE_CALLS`` calls, the current best first; a candidate whose first
probe call runs more than ``ABANDON`` times slower per evaluated token than the best so far is dropped
after that one call. It then uses the fastest (seconds per evaluated token over its probe calls) and
probes again after ``REPROBE_MIN`` seconds, an interval that doubles (to ``REPROBE_MAX``) each time a probe
keeps the count and falls back to ``REPROBE_MIN`` when one changes it: a machine that becomes busy or idle
is followed within seconds of the change while the load keeps changing, and a steady one is probed
rarely. ``JUDGEAUDIT_LOCAL_THREADS=N`` fixes the count instead.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

PROBE_CALLS = 3
"""Calls timed per candidate in a probe."""
ABANDON = 1.5
"""A candidate whose first probe call is this many times slower per token than the best is dropped."""
REPROBE_MIN = 10.0
"""Seconds from a probe that changed the count to the next probe."""
REPROBE_MAX = 160.0
"""The longest interval between probes (after probes that kept the count: 10, 20, 40, 80, 160 s)."""
MIN_TOKENS = 8
"""Calls evaluating fewer tokens are not timed (their time is mostly fixed overhead)."""


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def candidates(cores: int) -> list[int]:
    """1, 2, 4, … up to ``cores`` (at most 8: a 270M model gains nothing beyond)."""
    out, n = [], 1
    while n <= min(cores, 8):
        out.append(n)
        n *= 2
    return out


class ThreadChooser:
    """Picks the compute thread count of one loaded model from the measured time of its calls.

    ``set_threads(n)`` applies a count; ``clock`` is ``time.monotonic`` (a test's own clock otherwise).
    Call ``before()`` before a call to apply the count it should run at, and ``after(tokens, seconds)``
    with the tokens it evaluated and its duration."""

    def __init__(self, options: list[int], set_threads: Callable[[int], None],
                 clock: Callable[[], float] = time.monotonic):
        if not options:
            raise ValueError("no thread count to choose from")
        self.options = list(options)
        self._set = set_threads
        self._clock = clock
        self._lock = threading.Lock()
        self.current: int | None = None
        self.best = self.options[0]
        self._plan: list[int] = []            # the counts still to run in this probe, one entry per call
        self._timed: dict[int, list[tuple[int, float]]] = {}
        self._probe_ends_at: float | None = None   # None while a probe runs
        self.interval = REPROBE_MIN
        """Seconds from the last probe to the next."""
        self.history: list[tuple[float, int]] = []
        """(clock, count) at each choice a probe ended with."""
        if len(self.options) > 1:
            self._start_probe()
        else:                                 # one count: nothing to probe, ever
            self._finish_probe()

    def apply(self, n: int) -> None:
        """Run the next calls at ``n`` threads (until ``before`` picks another count)."""
        if n != self.current:
            self._set(n)
            self.current = n

    def _start_probe(self) -> None:
        # the best first, so a probe starts where the last one ended; one entry per timed call
        order = [self.best] + [n for n in self.options if n != self.best]
        self._plan = [n for n in order for _ in range(PROBE_CALLS)]
        self._timed = {}
        self._probe_ends_at = None

    def _rate(self, n: int) -> float:
        rows = self._timed[n]
        return sum(s for _, s in rows) / sum(t for t, _ in rows)

    def _finish_probe(self) -> None:
        if self._timed:
            best = min(self._timed, key=self._rate)
            if self.history:
                self.interval = min(2 * self.interval, REPROBE_MAX) if best == self.best else REPROBE_MIN
            self.best = best
        self._plan = []
        self._probe_ends_at = self._clock()
        self.history.append((self._probe_ends_at, self.best))

    def before(self) -> int:
        """The count the next call runs at (applied)."""
        with self._lock:
            if not self._plan and len(self.options) > 1 and self._clock() - self._probe_ends_at >= self.interval:
                self._start_probe()
            n = self._plan[0] if self._plan else self.best
            self.apply(n)
            return n

    def after(self, tokens: int, seconds: float) -> None:
        """Record a call of ``tokens`` evaluated tokens that took ``seconds`` at the current count."""
        with self._lock:
            if not self._plan or tokens < MIN_TOKENS or self._plan[0] != self.current:
                return
            n = self._plan.pop(0)
            self._timed.setdefault(n, []).append((tokens, seconds))
            others = [m for m in self._timed if m != n]
            if len(self._timed[n]) == 1 and others:
                best = min(self._rate(m) for m in others)
                if seconds / tokens > ABANDON * best:      # far slower at once: not worth more calls
                    self._plan = [m for m in self._plan if m != n]
            if not self._plan:
                self._finish_probe()
