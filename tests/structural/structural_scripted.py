"""A scripted NLI backend for the structural tests: known probabilities per (premise, hypothesis)."""

from __future__ import annotations

import numpy as np

from judgeaudit.structural.nli import NLIBackend

NEUTRAL = (0.1, 0.8, 0.1)


class ScriptedNLI(NLIBackend):
    spec = "scripted"

    def __init__(self, table: dict[tuple[str, str], tuple[float, float, float]], default=NEUTRAL, batch_size=16):
        self.table = dict(table)
        self.default = default
        self.batch_size = batch_size
        self.asked: list[tuple[str, str]] = []
        self.calls = 0

    def _predict_batch(self, pairs):
        self.calls += 1
        self.asked.extend(pairs)
        return np.array([self.table.get(p, self.default) for p in pairs], dtype=float)
