"""``card diff`` on validity reads each judge at its own matched-invariance point, with τ selected
again for each run in every paired resample (``paired.compare_validity``).

Design (the bundled probe set: 48 base items, 576 probes): a base item's latent grade ~ N(5, 1.5); a
control edit's = its base's + N(0, 0.3); a construct edit's = its base's + ``shift`` (scope) or
``shift``/2 (strength) + N(0, 0.3); each grading adds N(0, 0.7) noise and rounds to the 1–10 scale.

* size: the same judge graded twice (two independent gradings of the same texts): every row must be
  flagged "changed" in at most 5% of simulations (read at one pooled τ held across resamples, the gap
  was flagged in 8.0% of 800 simulations and R in 6.25%);
* a judge that grades everything one point harsher is the same instrument: every row B − A = 0 and
  unflagged (at one pooled τ: "S −0.142 [−0.200, −0.092], changed");
* power: a judge that moves more on construct edits (shift 3.0 vs 1.2) is flagged on R and R_scope.
  S itself is read at the matched point, where the selection holds it at the floor or just above: a
  judge whose controls move more reaches the floor at another τ, and the change shows in R at matched
  S, not in S.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from judgeaudit.card.paired import VALIDITY_STATS, compare_validity

N_SIM, N_BOOT = 200, 200


@cache
def _design():
    from judgeaudit.analyses.validity import probe_design
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    return probe_design(probes_frame(read_probes(bundled_probes_path())), 0.75)


def _latents(rng: np.random.Generator, shift: float, control_sd: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    d = _design()
    base = rng.normal(5, 1.5, len(d.bases))
    step = np.where(d.axis == "control", 0.0, np.where(d.axis == "scope", shift, shift / 2))
    sd = np.where(d.axis == "control", control_sd, 0.3)
    return base, base[d.base_index] + step + rng.normal(0, 1, len(d.probe_ids)) * sd


def _graded(rng: np.random.Generator, base: np.ndarray, edits: np.ndarray, offset: float = 0.0):
    from judgeaudit.card.paired import design_frontier

    d = _design()
    g = lambda x: np.clip(np.round(x + rng.normal(0, 0.7, len(x))), 1, 10)  # noqa: E731
    return design_frontier(d, g(base)[d.base_index] + offset, g(edits) + offset, 0.9)


def _flag_rates(seed: int, *, shift_b: float = 1.2, control_sd_b: float = 0.3) -> dict[str, float]:
    """Per row, the share of N_SIM simulations whose interval of B − A excludes zero."""
    rng = np.random.default_rng(seed)
    flags = {q: 0 for q in VALIDITY_STATS}
    for _ in range(N_SIM):
        base, edits = _latents(rng, 1.2)
        fa = _graded(rng, base, edits)
        if shift_b != 1.2 or control_sd_b != 0.3:
            base, edits = _latents(rng, shift_b, control_sd_b)
        fb = _graded(rng, base, edits)
        got = compare_validity(fa, fb, n_boot=N_BOOT, seed=int(rng.integers(1 << 30)))
        for q, c in got.items():
            flags[q] += c.ci[0] > 0 or c.ci[1] < 0
    return {q: n / N_SIM for q, n in flags.items()}


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, float]]:
    t = {"same judge twice (size)": _flag_rates(0),
         "moves more on construct (power)": _flag_rates(1, shift_b=3.0)}
    print("\nflag rate per row   " + "  ".join(f"{q.split('.')[1]:>15}" for q in VALIDITY_STATS))
    for name, row in t.items():
        print(f"{name:<34}" + "  ".join(f"{row[q]:>15.3f}" for q in VALIDITY_STATS))
    return t


def test_the_same_judge_graded_twice_is_flagged_at_most_at_the_nominal_rate_on_every_row(table):
    size = table["same judge twice (size)"]
    assert max(size.values()) <= 0.05, size


def test_a_planted_change_is_detected(table):
    assert table["moves more on construct (power)"]["validity.R"] >= 0.8
    assert table["moves more on construct (power)"]["validity.R_scope"] >= 0.8


def test_a_judge_one_grade_harsher_is_unchanged():
    rng = np.random.default_rng(3)
    base, edits = _latents(rng, 1.2)
    d = _design()
    g_base = np.clip(np.round(base + rng.normal(0, 0.7, len(base))), 2, 10)[d.base_index]
    g_edit = np.clip(np.round(edits + rng.normal(0, 0.7, len(edits))), 2, 10)
    from judgeaudit.card.paired import design_frontier

    fa = design_frontier(d, g_base, g_edit, 0.9)
    fb = design_frontier(d, g_base - 1, g_edit - 1, 0.9)    # every grade one point harsher
    got = compare_validity(fa, fb, n_boot=500)
    assert set(got) == set(VALIDITY_STATS)
    for q, c in got.items():
        assert c.diff == 0 and c.ci == (0.0, 0.0) and c.a == c.b, (q, c)
        assert c.taus[1] == c.taus[0] - 1                   # each read at its own matched τ
        assert "each run at its own matched-invariance τ" in c.how and "re-selected for each run" in c.how


def test_each_run_is_read_at_its_own_matched_point():
    from judgeaudit.analyses.validity import matched_operating_point

    rng = np.random.default_rng(4)
    base, edits = _latents(rng, 1.2)
    fa, fb = _graded(rng, base, edits), _graded(rng, base, edits)
    c = compare_validity(fa, fb, n_boot=200)["validity.R"]
    for f, tau, v in ((fa, c.taus[0], c.a), (fb, c.taus[1], c.b)):
        t = np.append(f.grades, f.grades[-1] + 1)
        s = f.counts(t).sum(axis=0)
        deg = np.zeros(len(t), bool)
        deg[[0, -1]] = True
        idx, _ = matched_operating_point(1 - s[0] / s[1], s[2] / s[3], t, deg, 0.9)
        assert tau == t[idx] and v == pytest.approx(s[2, idx] / s[3, idx], abs=1e-12)   # Eq. (6) at its own τ
