"""``card diff`` paired over shared units: the two runs' per-unit tables resampled once.

Design where pairing matters: 200 responses, 4 checked units each, whose pass probabilities q_i are
spread far apart (Beta(0.3, 0.3): most responses almost always or almost never pass), so the
between-response variance dominates each run's own interval. Run B's pass probability is q_i + δ.
The paired interval must flag at about the nominal 5% with δ = 0 (size) and detect δ = 0.06
(power), where the unpaired interval on the same runs rarely does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pandas as pd
from typer.testing import CliRunner

from judgeaudit.card.paired import Units, compare
from judgeaudit.cli import app

N_RESP, N_UNITS, N_BOOT, N_SIM = 200, 4, 300, 500


def _net(s: np.ndarray) -> np.ndarray:
    return s[..., 0] / s[..., 1]


def _runs(delta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """N_SIM pairs of runs on the same responses: (N_SIM, N_RESP, 2) counts (Σ pass_end − pass_initial, units)."""
    rng = np.random.default_rng(seed)
    q = rng.beta(0.3, 0.3, (N_SIM, N_RESP))
    init = rng.binomial(N_UNITS, 0.5, (N_SIM, N_RESP))          # the same initial outputs in both runs
    end_a = rng.binomial(N_UNITS, q)
    end_b = rng.binomial(N_UNITS, np.minimum(q + delta, 1.0))
    n = np.full((N_SIM, N_RESP), float(N_UNITS))
    return np.stack([end_a - init, n], -1).astype(float), np.stack([end_b - init, n], -1).astype(float)


def _flag_rates(delta: float, seed: int) -> tuple[float, float]:
    """(paired, unpaired) share of simulations whose interval of B − A excludes zero."""
    ca, cb = _runs(delta, seed)
    ids = np.array([f"r{i}" for i in range(N_RESP)])
    other = np.array([f"s{i}" for i in range(N_RESP)])   # the same runs with no unit shared: unpaired
    paired = unpaired = 0
    for k in range(N_SIM):
        a = Units("response", ids, ca[k], {"net": _net})
        p = compare(a, Units("response", ids, cb[k], {"net": _net}), n_boot=N_BOOT, seed=k)["net"]
        u = compare(a, Units("response", other, cb[k], {"net": _net}), n_boot=N_BOOT, seed=k)["net"]
        assert p.paired and not u.paired and p.n_shared == N_RESP and u.n_shared == 0
        assert p.diff == u.diff   # the same point difference; only the interval differs
        paired += p.ci[0] > 0 or p.ci[1] < 0
        unpaired += u.ci[0] > 0 or u.ci[1] < 0
    return paired / N_SIM, unpaired / N_SIM


def test_paired_interval_has_nominal_size_and_power_where_the_unpaired_one_does_not():
    size_p, size_u = _flag_rates(0.0, seed=11)
    power_p, power_u = _flag_rates(0.06, seed=12)
    print(f"paired: size {size_p:.3f}, power {power_p:.3f}; unpaired: size {size_u:.3f}, power {power_u:.3f}")
    assert 0.03 <= size_p <= 0.075          # nominal 5% (500 simulations: ±1 point s.e.)
    assert power_p >= 0.80                  # δ = 0.06 detected when the responses are paired
    assert power_u <= 0.35                  # ... and mostly missed when they are not
    assert size_u <= 0.01                   # between-response variance counted twice: conservative


def test_paired_on_independent_flips_matches_last_unpaired_design():
    """The stored-interval design of test_card_diff (R = mean of 200 Bernoulli(p) flips, no per-item
    heterogeneity), on shared items: pairing gains nothing there, and keeps size and power."""
    rng = np.random.default_rng(5)
    ids = np.array([f"b{i}" for i in range(200)])
    rates = {}
    for p_b in (0.30, 0.45):
        fa = rng.binomial(1, 0.30, (N_SIM, 200)).astype(float)
        fb = rng.binomial(1, p_b, (N_SIM, 200)).astype(float)
        one = np.ones(200)
        hits = [compare(Units("base item", ids, np.column_stack([fa[k], one]), {"R": _net}),
                        Units("base item", ids, np.column_stack([fb[k], one]), {"R": _net}),
                        n_boot=N_BOOT, seed=k)["R"] for k in range(N_SIM)]
        rates[p_b] = float(np.mean([c.ci[0] > 0 or c.ci[1] < 0 for c in hits]))
    print(f"independent flips, paired: size {rates[0.30]:.3f}, power {rates[0.45]:.3f}")
    assert 0.03 <= rates[0.30] <= 0.075
    assert rates[0.45] >= 0.80


# --- end to end: two loop run folders, their cards, card diff ---------------------------------------------


def _net_of(by_item: dict[str, list[bool]]) -> float:
    """The loop's net as its run records it: Σ (pass_end − pass_initial) / units (unit 0 passes initially)."""
    return (sum(sum(v) for v in by_item.values()) - len(by_item)) / sum(len(v) for v in by_item.values())


def _loop_folder(path: Path, pass_end: dict[str, list[bool]]) -> Path:
    rows = [{"item_id": item, "unit": f"{item}:{u}", "regulator": reg, "round": 1, "pass_initial": u == 0,
             "pass_end": ends[u], "pass_start": u == 0, "acted": True, "flagged": False, "loose_end": ends[u],
             "loose_initial": u == 0}
            for reg, by_item in pass_end.items() for item, ends in by_item.items() for u in range(len(ends))]
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(path / "units.parquet")
    (path / "result.json").write_text(json.dumps({"run_id": path.name, "created_at": "2026-11-30T00:00:00+00:00",
                                                  "task": "ifeval", "judge": "local", "rounds": 1, "regulators": {
                                                      r: {"net": _net_of(by_item)} for r, by_item in pass_end.items()}}))
    return path


def test_card_diff_reads_the_loop_units_and_pairs_the_shared_responses(tmp_path):
    rng = np.random.default_rng(0)
    q = rng.beta(0.3, 0.3, 120)
    ends_a = {f"r{i}": list(rng.random(4) < q[i]) for i in range(120)}
    # B: on 30 responses one more unit passes (its first failing one), the rest as in A
    ends_b = {k: list(v) for k, v in ends_a.items()}
    changed = 0
    for k, v in ends_b.items():
        if changed < 30 and not all(v):
            v[v.index(False)] = True
            changed += 1
    a = _loop_folder(tmp_path / "a", {"blind": ends_a})
    b = _loop_folder(tmp_path / "b", {"blind": ends_b})
    same = _loop_folder(tmp_path / "same", {"blind": ends_a})
    r = CliRunner()
    for name, folder in (("ca", a), ("cb", b), ("cs", same)):
        res = r.invoke(app, ["card", "--judge", "local", "--from", str(folder), "--out", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
    n_units = 480
    before = sum(sum(v) for v in ends_a.values()) - 120   # Σ pass_end − Σ pass_initial (one passing unit each)
    res = r.invoke(app, ["card", "diff", str(tmp_path / "ca"), str(tmp_path / "cb")])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("| loop.blind.net |"))
    assert f"| {before / n_units:.3f} | {(before + 30) / n_units:.3f} | {30 / n_units:+.3f} |" in row
    assert "**changed**" in row and "paired over 120 shared responses" in row
    res = r.invoke(app, ["card", "diff", str(tmp_path / "ca"), str(tmp_path / "cs")])
    row = next(line for line in res.output.splitlines() if line.startswith("| loop.blind.net |"))
    assert "| +0.000 | [+0.000, +0.000] |" in row and "**changed**" not in row


def _at(frontier: list, tau: float) -> tuple[float, float]:
    """(S, R) of a judge's stored frontier at threshold ``tau`` (a τ between its grades reads as the next
    grade up: the verdict score ≥ τ is the same)."""
    s, r, _ = min((p for p in frontier if p[2] >= tau - 1e-12), key=lambda p: p[2])
    return s, r


def test_card_diff_of_two_judges_pairs_the_base_items_of_their_validity_runs(tmp_path):
    """Two judges graded on the bundled probe set: A and B are the cards' own values; the difference
    of S, R, R_scope, R_strength, the gap, R⁺ and the wrong-way rate is read with each judge at its own
    matched-invariance τ (the τ its run chose), equal to the difference of the two judges' stored
    frontiers at those τ, and its interval resamples the 48 shared base items once."""
    from judgeaudit.card.diff import diff_cards
    from judgeaudit.commands.card import card
    from judgeaudit.commands.validity import run_validity

    run_validity("bundled", ["reference:length", "reference:random"], out=tmp_path / "v", n_boot=200, n_regrade=0)
    ca = card("reference:length", [tmp_path / "v"], tmp_path / "ca")
    cb = card("reference:random", [tmp_path / "v"], tmp_path / "cb")
    changes = {c.quantity: c for c in diff_cards(ca, cb, n_boot=500)}
    res = json.loads((tmp_path / "v" / "result.json").read_text())
    for q in ("S", "R", "R_scope", "R_strength", "gap", "R_plus", "wrong_way_rate"):
        c = changes[f"validity.{q}"]
        assert c.how.startswith("paired over 48 shared base items, each run at its own matched-invariance τ")
        assert c.a == pytest.approx(ca["sections"]["validity"]["metrics"][q]["value"], abs=1e-12)
        assert c.b == pytest.approx(cb["sections"]["validity"]["metrics"][q]["value"], abs=1e-12)
        assert c.ci[0] <= c.diff <= c.ci[1]
    ta, tb = changes["validity.R"].taus
    assert (ta, tb) == (res["judges"]["reference:length"]["tau"], res["judges"]["reference:random"]["tau"])
    (sa, ra), (sb, rb) = (_at(res["judges"][j]["frontier"], t) for j, t in (("reference:length", ta),
                                                                           ("reference:random", tb)))
    assert changes["validity.R"].diff == pytest.approx(rb - ra, abs=1e-3)
    assert changes["validity.S"].diff == pytest.approx(sb - sa, abs=1e-3)
    same = {c.quantity: c for c in diff_cards(ca, ca, n_boot=500)}
    assert same["validity.R"].ci == (0.0, 0.0) and not same["validity.R"].flagged


def test_card_diff_of_two_judges_pairs_the_cap_pairs(tmp_path):
    """Two judges on the bundled JudgeBench-format fixture and LLMBar slice: every CAP cell of the card (overall,
    conditions, strict/consistency) recomputed from the run's units.parquet equals the card's value,
    and its difference is paired over the shared pairs of the set."""
    from judgeaudit.card.diff import diff_cards
    from judgeaudit.commands.card import card
    from judgeaudit.commands.cap import run_cap
    from judgeaudit.commands.default_runs import CAP_SETS

    run_cap(list(CAP_SETS), judge_specs=["reference:length", "reference:random"], n_boot=100,
            store=tmp_path / "calls.sqlite", out=tmp_path / "cap")
    ca = card("reference:length", [tmp_path / "cap"], tmp_path / "ca")
    cb = card("reference:random", [tmp_path / "cap"], tmp_path / "cb")
    changes = {c.quantity: c for c in diff_cards(ca, cb, n_boot=300)}
    jb = ca["sections"]["cap"]["sets"]["judgebench_fixture"]
    n_pairs = jb["overall"]["n"]
    overall = changes["cap.judgebench_fixture.overall"]
    assert overall.how == f"paired over {n_pairs} shared pairs"
    assert overall.a == pytest.approx(jb["overall"]["value"], abs=1e-12)
    assert overall.b == pytest.approx(cb["sections"]["cap"]["sets"]["judgebench_fixture"]["overall"]["value"], abs=1e-12)
    checked = 0
    for name, sb in ca["sections"]["cap"]["sets"].items():
        for cond, e in sb["conditions"].items():
            if e["value"] is not None and f"cap.{name}.{cond}" in changes:
                c = changes[f"cap.{name}.{cond}"]
                assert c.how.startswith("paired") and c.a == pytest.approx(e["value"], abs=1e-12)
                checked += 1
    assert checked >= 5
    assert not any(c.how.startswith("unpaired") for q, c in changes.items() if q.startswith("cap."))


def test_card_diff_of_two_world_instruments_pairs_the_answers(tmp_path):
    """The oracle against flag-all on the bundled HaluEval QA slice (40 answers of 20 questions; the 4 questions
    of the structural judge's development split left out): read from the world run's decisions.parquet,
    informed recall 1 vs 1 and specificity 1 vs 0, paired over the 16 clusters the world analysis resamples
    (a question with its right and its hallucinated answer); the specificity drop's interval is [−1, −1]
    (every resample: 1 − 0)."""
    from judgeaudit.card.diff import diff_cards
    from judgeaudit.commands.card import card
    from judgeaudit.commands.default_runs import DEFAULT_RUNS

    DEFAULT_RUNS["world"].run(["reference:oracle", "reference:flag-all"], tmp_path / "w", tmp_path / "c.sqlite", 100)
    ca = card("reference:oracle", [tmp_path / "w"], tmp_path / "ca")
    cb = card("reference:flag-all", [tmp_path / "w"], tmp_path / "cb")
    ch = {c.quantity: c for c in diff_cards(ca, cb, n_boot=300)}
    spec = ch["world.informed.specificity"]
    assert spec.how == "paired over 16 shared clusters"
    assert (spec.a, spec.b, spec.diff, spec.ci) == (1.0, 0.0, -1.0, (-1.0, -1.0)) and spec.flagged
    rec = ch["world.informed.recall"]
    assert (rec.a, rec.b, rec.diff) == (1.0, 1.0, 0.0) and not rec.flagged
    assert ca["sections"]["world"]["numbers"]["arms.informed.specificity"] == spec.a
