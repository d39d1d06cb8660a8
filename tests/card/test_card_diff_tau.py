"""``card diff`` on validity reads both runs at one τ: the same judge graded twice on the bundled
design's 48 base items is flagged "changed" on R at about the nominal 5% (each run read at its own τ,
as ``card diff`` did, this simulation flagged it in 21% of 400 runs; at the pooled frontier's common τ
5.0%), and a judge that really moves more is flagged."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from judgeaudit.card.paired import compare_validity

N_SIM, N_BOOT = 200, 400


@cache
def _design():
    from judgeaudit.analyses.validity import _design as design
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    return design(probes_frame(read_probes(bundled_probes_path())), 0.75)


def _latents(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """One set of texts on the bundled design: a base item's latent grade ~ N(5, 1.5); a control edit's
    = its base's + N(0, 0.3); a construct edit's = its base's + ``shift`` (scope) or ``shift``/2
    (strength) + N(0, 0.3). Returns the latents of the bases and of the edits."""
    d = _design()
    base = rng.normal(5, 1.5, len(d.bases))
    step = np.where(d.axis == "control", 0.0, np.where(d.axis == "scope", shift, shift / 2))
    return base, base[d.base_index] + step + rng.normal(0, 0.3, len(d.probe_ids))


def _graded(rng: np.random.Generator, base: np.ndarray, edits: np.ndarray, s_floor: float = 0.9):
    """One grading: every text's latent + N(0, 0.7) grading noise, rounded to the 1–10 scale."""
    from judgeaudit.card.paired import design_frontier

    d = _design()
    g = lambda x: np.clip(np.round(x + rng.normal(0, 0.7, len(x))), 1, 10)  # noqa: E731
    return design_frontier(d, g(base)[d.base_index], g(edits), s_floor)


def _flag_rate(shift_b: float, seed: int) -> tuple[float, float]:
    """Share of simulations flagging validity.R, and the share in which the two runs' own operating
    points differ (the design where each run's own τ broke the diff)."""
    from judgeaudit.analyses.validity import matched_operating_point

    rng = np.random.default_rng(seed)
    flags, own_tau_differs = [], []
    for _ in range(N_SIM):
        base, edits = _latents(rng, 1.2)
        fa = _graded(rng, base, edits)
        if shift_b != 1.2:
            base, edits = _latents(rng, shift_b)
        fb = _graded(rng, base, edits)
        c = compare_validity(fa, fb, n_boot=N_BOOT, seed=int(rng.integers(1 << 30)))["validity.R"]
        flags.append(c.ci[0] > 0 or c.ci[1] < 0)
        taus = []
        for f in (fa, fb):
            t = np.append(f.grades, f.grades[-1] + 1)
            s = f.counts(t).sum(axis=0)
            deg = np.zeros(len(t), bool)
            deg[[0, -1]] = True
            idx, _ = matched_operating_point(1 - s[0] / s[1], s[2] / s[3], t, deg, 0.9)
            taus.append(t[idx])
        own_tau_differs.append(taus[0] != taus[1])
    return float(np.mean(flags)), float(np.mean(own_tau_differs))


def test_same_judge_graded_twice_is_flagged_at_the_nominal_rate_at_one_common_tau():
    rate, differs = _flag_rate(1.2, seed=0)
    assert differs >= 0.3          # the design that broke the diff: the runs' own τ often differ
    assert 0.01 <= rate <= 0.10    # nominal 5%, ±3.5 binomial standard errors at N_SIM = 200


def test_a_judge_that_moves_more_is_flagged():
    rate, _ = _flag_rate(2.5, seed=1)
    assert rate >= 0.8


def test_the_common_tau_reads_both_runs_at_one_threshold():
    rng = np.random.default_rng(3)
    base, edits = _latents(rng, 1.2)
    fa, fb = _graded(rng, base, edits), _graded(rng, base, edits)
    c = compare_validity(fa, fb, n_boot=200)
    assert {q: c[q].tau for q in c} == {q: c["validity.R"].tau for q in c}
    t = np.array([c["validity.R"].tau])
    for f, v in ((fa, c["validity.R"].a), (fb, c["validity.R"].b)):
        s = f.counts(t).sum(axis=0)[:, 0]
        assert v == pytest.approx(s[2] / s[3], abs=1e-12)    # R of each run at the common τ (Eq. 6)
