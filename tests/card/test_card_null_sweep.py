"""The card's sentences that assert an effect, on simulated judges and label sets run through the real
analyses (``null_sweep``): on those with no effect planted each fires on at most the nominal 5% of seeds
(the count is held to the binomial 99% quantile at 5%), and on a planted effect the sentence that names
it fires. The null rates run 20 seeds of each null (marked slow: about 10 s each); ``python
tests/card/null_sweep.py 100`` prints the rates over more seeds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))

from null_sweep import SENTENCES, fires, verdicts  # noqa: E402

SEEDS = range(20)
MAX_NULL = int(stats.binom.ppf(0.99, len(SEEDS), 0.05))   # 3 of 20
EFFECTS = [name for name, (_, effect) in SENTENCES.items() if effect]


def _count(runs: list[list[str]], name: str) -> int:
    return sum(fires(lines, name) for lines in runs)


@pytest.mark.slow
@pytest.mark.parametrize(("analysis", "kind"), [
    ("validity", "equal axes"), ("validity", "ignores the edit"), ("validity", "random verdicts"),
    ("vp", "random labels"), ("cap", "equal accuracy"), ("cap", "coin flips"),
])
def test_no_effect_sentence_fires_beyond_its_nominal_rate_on_a_null(analysis, kind):
    runs = verdicts(analysis, kind, SEEDS)
    counts = {name: _count(runs, name) for name in EFFECTS if name.startswith(analysis)}
    assert all(c <= MAX_NULL for c in counts.values()), counts


@pytest.mark.parametrize(("analysis", "kind", "sentences"), [
    ("validity", "blind to strength", ("validity: insensitive on an axis", "validity: moves less on an axis")),
    ("validity", "wrong way", ("validity: wrong-way flips",)),
    ("validity", "constant", ("validity: constant instrument",)),
    ("vp", "length labels", ("vp: recoverable from surface form",)),
    ("cap", "weak on C2", ("cap: weakest condition",)),
])
def test_each_effect_sentence_fires_on_its_planted_effect(analysis, kind, sentences):
    runs = verdicts(analysis, kind, range(3))
    assert all(any(fires(lines, s) for s in sentences) for lines in runs), runs


def test_a_constant_judge_asserts_nothing_but_being_constant():
    runs = verdicts("validity", "constant", range(3))
    assert all(_count(runs, name) == 0 for name in EFFECTS if name != "validity: constant instrument")
