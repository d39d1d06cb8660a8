"""``card.paired`` against values computed independently from the verdicts: each validity row (S, R,
R_scope, R_strength, the gap, R⁺, the wrong-way rate) by Eq. (6) at the threshold the matched-invariance
rule picks (found here by brute force over the thresholds), the loop's net, the world's rates, a CAP
cell, the paired and unpaired intervals, and the run-folder fallbacks (a moved, rerun or unreadable run)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cardshape import whole

from judgeaudit.card.paired import (VALIDITY_STATS, Frontier, Units, cap_units, compare, compare_validity,
                                    loop_units, section_units, world_units)
from judgeaudit.errors import InputError

# ------------------------------------------------------------------------------------------------ validity


def _design(rng: np.random.Generator, n_base: int = 12, control_noise: float = 0.4, lift: float = 1.5):
    """Per base item 3 control edits, 2 scope and 2 strength edits; grades on a 1–6 scale."""
    base_index, kinds = [], []
    for b in range(n_base):
        for k in ("control",) * 3 + ("scope",) * 2 + ("strength",) * 2:
            base_index.append(b)
            kinds.append(k)
    base_index, kinds = np.array(base_index), np.array(kinds)
    latent = rng.normal(3.0, 1.2, n_base)
    bg = np.clip(np.round(latent[base_index]), 1, 6)
    step = np.where(kinds == "control", 0.0, np.where(kinds == "scope", lift, lift / 2))
    noise = np.where(kinds == "control", control_noise, 0.8)
    eg = np.clip(np.round(latent[base_index] + step + rng.normal(0, 1, len(kinds)) * noise), 1, 6)
    return base_index, kinds, bg, eg


def _frontier(ids, base_index, kinds, bg, eg, s_floor):
    cons = kinds != "control"
    masks = np.column_stack([kinds == "control", cons, kinds == "scope", kinds == "strength"])
    return Frontier(np.asarray(ids), base_index, bg.astype(float), eg.astype(float), masks, s_floor)


def _eq6(base_index, x, mask) -> float:
    """Eq. (6): the mean over base items (holding an edit of the subset) of each one's mean of ``x``."""
    d = pd.DataFrame({"b": base_index[mask], "x": x[mask].astype(float)})
    return float(d.groupby("b")["x"].mean().mean()) if len(d) else float("nan")


def _by_hand(base_index, kinds, bg, eg, s_floor):
    """Every validity row at the matched-invariance τ (argmax R s.t. S ≥ floor; ties to the higher S, then
    the lower τ), by brute force over the thresholds (the grades and one above the top)."""
    g = np.unique(np.concatenate([bg, eg]))
    taus = np.append(g, g[-1] + 1)
    rows = []
    for tau in taus:
        b, e = bg >= tau, eg >= tau
        flip, toward, wrong = b != e, e & ~b, b & ~e
        con = kinds != "control"
        r = {"validity.S": 1 - _eq6(base_index, flip, kinds == "control"),
             "validity.R": _eq6(base_index, flip, con),
             "validity.R_scope": _eq6(base_index, flip, kinds == "scope"),
             "validity.R_strength": _eq6(base_index, flip, kinds == "strength"),
             "validity.R_plus": _eq6(base_index, toward, con),
             "validity.wrong_way_rate": _eq6(base_index, wrong, con)}
        r["validity.gap"] = r["validity.R_scope"] - r["validity.R_strength"]
        rows.append((tau, r))
    ok = [(t, r) for t, r in rows if r["validity.S"] >= s_floor - 1e-12]
    assert any(t not in (taus[0], taus[-1]) for t, _ in ok), "the design must reach the floor"
    best = max(ok, key=lambda tr: (tr[1]["validity.R"], tr[1]["validity.S"], -tr[0]))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_validity_row_is_eq6_at_each_runs_own_matched_point(seed):
    rng = np.random.default_rng(seed)
    bi, kinds, bg_a, eg_a = _design(rng)
    _, _, bg_b, eg_b = _design(rng, lift=2.5)
    ids = [f"b{i}" for i in range(12)]
    fa, fb = _frontier(ids, bi, kinds, bg_a, eg_a, 0.8), _frontier(ids, bi, kinds, bg_b, eg_b, 0.8)
    got = compare_validity(fa, fb, n_boot=300, seed=seed)
    tau_a, want_a = _by_hand(bi, kinds, bg_a, eg_a, 0.8)
    tau_b, want_b = _by_hand(bi, kinds, bg_b, eg_b, 0.8)
    assert set(got) == set(VALIDITY_STATS)
    for q, c in got.items():
        assert c.taus == (tau_a, tau_b), q
        assert c.a == pytest.approx(want_a[q], abs=1e-12), q
        assert c.b == pytest.approx(want_b[q], abs=1e-12), q
        assert c.diff == pytest.approx(want_b[q] - want_a[q], abs=1e-12), q
        assert c.paired and c.n_shared == 12 and (c.n_a, c.n_b) == (12, 12) and c.unit == "base item"
        assert c.ci[0] <= c.ci[1]
    # the wrong-way rate and R⁺ split R: R = R⁺ + wrong-way rate at one τ
    for w in (want_a, want_b):
        assert w["validity.R"] == pytest.approx(w["validity.R_plus"] + w["validity.wrong_way_rate"], abs=1e-12)


def test_the_floor_decides_the_threshold():
    """A stricter S floor moves the matched point to a threshold where fewer controls flip."""
    rng = np.random.default_rng(5)
    bi, kinds, bg, eg = _design(rng, control_noise=0.9)
    ids = [f"b{i}" for i in range(12)]
    for floor in (0.6, 0.75, 0.9):
        try:
            tau, want = _by_hand(bi, kinds, bg, eg, floor)
        except AssertionError:
            continue
        f = _frontier(ids, bi, kinds, bg, eg, floor)
        c = compare_validity(f, f, n_boot=50)["validity.R"]
        assert c.taus == (tau, tau) and c.a == pytest.approx(want["validity.R"], abs=1e-12)
        assert c.diff == 0 and c.ci == (0.0, 0.0)


def test_a_paired_difference_holds_the_units_an_unpaired_one_does_not():
    rng = np.random.default_rng(7)
    bi, kinds, bg, eg = _design(rng)
    ids = np.array([f"b{i}" for i in range(12)])
    fa = _frontier(ids, bi, kinds, bg, eg, 0.8)
    same = compare_validity(fa, fa, n_boot=600)          # more resamples than one block of 256
    assert all(c.diff == 0 and c.ci == (0.0, 0.0) for c in same.values())
    other = _frontier(np.array([f"x{i}" for i in range(12)]), bi, kinds, bg, eg, 0.8)
    un = compare_validity(fa, other, n_boot=600)
    c = un["validity.R"]
    assert not c.paired and c.n_shared == 0 and c.diff == 0
    assert c.ci[0] < 0 < c.ci[1]                        # two independent resamples of the same data
    assert c.how.startswith("unpaired (12 vs 12 base items, none shared)")
    assert same["validity.R"].how.startswith("paired over 12 shared base items")


def test_a_run_with_no_threshold_or_no_matched_point_gives_nothing():
    rng = np.random.default_rng(8)
    bi, kinds, bg, eg = _design(rng)
    ids = [f"b{i}" for i in range(12)]
    fa = _frontier(ids, bi, kinds, bg, eg, 0.8)
    empty = Frontier(np.array([]), np.array([], int), np.array([]), np.array([]), np.zeros((0, 4), bool), 0.8)
    assert compare_validity(fa, empty) == {} and compare_validity(empty, fa) == {}


def test_frontier_counts_are_each_base_items_mean_times_has():
    """Two base items; τ = 3: base 0's control edit flips (3 → 2), its construct edits move 2 → 4 (toward)
    and 3 → 1 (wrong way); base 1 has one control edit, unmoved, and no construct edit."""
    f = Frontier(np.array(["a", "b"]), np.array([0, 0, 0, 1]), np.array([3.0, 2, 3, 4]), np.array([2.0, 4, 1, 4]),
                 np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1], [1, 0, 0, 0]], bool), 0.9)
    c = f.counts(np.array([3.0]))[:, :, 0]
    # columns: (mean×has, has) for control, construct, scope, strength, construct+, construct-
    assert c[0].tolist() == [1, 1, 1, 1, 1, 1, 1, 1, 0.5, 1, 0.5, 1]
    assert c[1].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert f.grades.tolist() == [1, 2, 3, 4]


# ------------------------------------------------------------------------------------- loop, world, CAP


def test_loop_net_is_the_final_rounds_ratio_of_sums():
    units = pd.DataFrame({
        "regulator": ["informed"] * 6 + ["blind"] * 3,
        "round": [1, 1, 1, 2, 2, 2, 1, 1, 1],
        "item_id": ["r1", "r1", "r2", "r1", "r1", "r2", "r1", "r2", "r3"],
        "pass_initial": [0, 0, 0, 0, 1, 1, 0, 1, 0],
        "pass_end": [0, 0, 0, 1, 1, 0, 1, 1, 1],
    })
    u = loop_units(units)
    assert u.unit == "response" and u.ids.tolist() == ["r1", "r2", "r3"]
    # informed at round 2: r1 net +1 over 2 units, r2 −1 over 1; blind: +1, 0, +1 over one unit each
    assert u.stats["loop.informed.net"](u.counts.sum(axis=0)) == pytest.approx(0 / 3)
    assert u.stats["loop.blind.net"](u.counts.sum(axis=0)) == pytest.approx(2 / 3)
    assert u.counts[:, :2].tolist() == [[1, 2], [-1, 1], [0, 0]]
    two = compare(u, loop_units(units.assign(pass_end=units["pass_initial"])), n_boot=200)
    assert two["loop.blind.net"].a == pytest.approx(2 / 3) and two["loop.blind.net"].diff == pytest.approx(-2 / 3)


def test_world_rates_are_ratios_of_the_clusters_summed_counts():
    dec = pd.DataFrame({
        "judge": ["j"] * 8 + ["k"],
        "arm": ["blind"] * 4 + ["informed"] * 4 + ["blind"],
        "group": ["g1", "g1", "g2", "g3"] * 2 + ["g1"],
        "gold": [True, False, True, False] * 2 + [True],
        "flagged": [True, True, False, False, True, False, True, None, True],
        "complaints": [1, 2, 0, 0, 1, 0, 1, 0, 1],
    })
    u = world_units(dec, "j")
    assert u.unit == "cluster" and u.ids.tolist() == ["g1", "g2", "g3"]
    s = u.counts.sum(axis=0)
    assert float(u.stats["world.blind.recall"](s)) == pytest.approx(1 / 2)
    assert float(u.stats["world.blind.specificity"](s)) == pytest.approx(1 / 2)
    assert float(u.stats["world.blind.false_alarms_per_clean"](s)) == pytest.approx(2 / 2)
    assert float(u.stats["world.blind.precision"](s)) == pytest.approx(1 / 2)
    assert float(u.stats["world.informed.recall"](s)) == pytest.approx(1.0)          # the NaN flag is left out
    assert float(u.stats["world.informed.specificity"](s)) == pytest.approx(1.0)
    c = compare(u, u, n_boot=200)["world.informed.recall"]
    assert c.paired and c.n_shared == 3 and c.unit == "cluster" and c.ci == (0.0, 0.0)


def test_cap_cells_are_ratios_of_sums_over_pairs():
    units = pd.DataFrame({
        "judge_id": ["j"] * 6 + ["k", "j"],
        "set": ["s"] * 6 + ["s", "t"],
        "unit": ["p1", "p2", "p1", "p2", "p1", "p2", "p1", "p1"],
        "condition": ["cond"] * 4 + ["overall"] * 2 + ["cond", "cond"],
        "metric": ["value", "value", "strict", "strict", "value", "value", "value", "value"],
        "num": [1, 3, 0, 1, 2, 2, 9, 9],
        "den": [2, 4, 2, 4, 4, 4, 9, 9],
    })
    u = cap_units(units, "j", "s")
    s = u.counts.sum(axis=0)
    assert u.unit == "pair" and u.ids.tolist() == ["p1", "p2"]
    assert set(u.stats) == {"cap.s.cond", "cap.s.cond.strict", "cap.s.overall"}
    assert float(u.stats["cap.s.cond"](s)) == pytest.approx(4 / 6)
    assert float(u.stats["cap.s.cond.strict"](s)) == pytest.approx(1 / 6)
    assert float(u.stats["cap.s.overall"](s)) == pytest.approx(4 / 8)


def test_compare_pairs_the_shared_units_only_and_reads_each_side_on_its_own_units():
    ratio = lambda s: np.where(s[..., 1] > 0, s[..., 0] / np.where(s[..., 1] > 0, s[..., 1], 1), np.nan)  # noqa: E731
    a = Units("item", np.array(["x", "y", "z", "w"]), np.array([[1., 2], [0, 2], [2, 2], [5, 5]]), {"q": ratio})
    b = Units("item", np.array(["z", "y", "x", "v"]), np.array([[2., 2], [1, 2], [2, 2], [0, 9]]), {"q": ratio})
    c = compare(a, b, n_boot=300)["q"]
    # shared x, y, z: A = 3/6, B = 5/6 (w and v are left out of both)
    assert (c.a, c.b) == (pytest.approx(3 / 6), pytest.approx(5 / 6)) and c.diff == pytest.approx(2 / 6)
    assert c.paired and (c.n_a, c.n_b, c.n_shared) == (4, 4, 3)
    assert c.ci[0] <= c.diff <= c.ci[1]
    # B = A + 1/2 on every shared unit's ratio of sums: the paired interval is a point
    b2 = Units("item", a.ids[:3], a.counts[:3] + np.array([[1., 0], [1, 0], [1, 0]]), {"q": ratio})
    c2 = compare(a, b2, n_boot=300)["q"]
    assert c2.diff == pytest.approx(0.5) and c2.ci == (pytest.approx(0.5), pytest.approx(0.5))
    # nothing shared: each on its own units, resampled independently
    d = Units("item", np.array(["m", "n"]), np.array([[1., 1], [0, 1]]), {"q": ratio, "only_d": ratio})
    c3 = compare(a, d, n_boot=300)
    assert set(c3) == {"q"}
    assert not c3["q"].paired and c3["q"].a == pytest.approx(8 / 11) and c3["q"].b == pytest.approx(1 / 2)
    assert c3["q"].ci[0] < c3["q"].diff < c3["q"].ci[1]


# ------------------------------------------------------------------------------ the run-folder fallbacks


def _card(kind: str, source: dict | None, measured: bool = True) -> dict:
    sec = {"measured": measured} if measured else {"measured": False, "not_measured": "not run"}
    if source is not None:
        sec["source"] = {"run_id": None, "created_at": None, **source}
    return whole({"judge": "j", "sections": {kind: sec}})


def test_a_moved_rerun_or_unreadable_run_is_named_and_nothing_is_read(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "result.json").write_text(json.dumps({"run_id": "r1"}))
    pd.DataFrame({"regulator": ["a"], "round": [1], "item_id": ["x"], "pass_initial": [0], "pass_end": [1]}) \
        .to_parquet(run / "units.parquet")
    got, notes = section_units(_card("loop", {"path": str(run / "result.json"), "run_id": "r1"}), "loop")
    assert notes == [] and len(got) == 1 and got[0].stats["loop.a.net"](got[0].counts.sum(0)) == 1.0
    got, notes = section_units(_card("loop", {"path": str(tmp_path / "gone" / "result.json")}), "loop")
    assert got == [] and notes == [f"loop: its run's result.json is no longer at {tmp_path / 'gone' / 'result.json'}"]
    got, notes = section_units(_card("loop", {"path": str(run / "result.json"), "run_id": "r0"}), "loop")
    assert got == [] and len(notes) == 1 and "now holds another run (r1, not the card's r0)" in notes[0]
    (run / "result.json").write_text("{not json")
    got, notes = section_units(_card("loop", {"path": str(run / "result.json")}), "loop")
    assert got == [] and len(notes) == 1 and notes[0].startswith(f"loop: cannot read {run / 'result.json'}")
    # not measured: nothing and no note; a measured section without its run is a malformed card, named
    assert section_units(_card("loop", {"path": "x"}, measured=False), "loop") == ([], [])
    assert section_units(whole({"judge": "j", "sections": {}}), "world") == ([], [])
    bad = _card("loop", None)
    del bad["sections"]["loop"]["source"]
    with pytest.raises(InputError) as e:
        section_units(bad, "loop")
    assert e.value.field == "sections.loop.source"


def test_a_world_and_a_cap_section_read_their_units_and_name_a_moved_set(tmp_path):
    run = tmp_path / "w"
    run.mkdir()
    (run / "result.json").write_text(json.dumps({"run_id": "w1"}))
    pd.DataFrame({"judge": ["j", "j"], "arm": ["a", "a"], "group": ["g1", "g2"], "gold": [True, True],
                  "flagged": [True, False], "complaints": [1, 0]}).to_parquet(run / "decisions.parquet")
    got, notes = section_units(_card("world", {"path": str(run / "result.json"), "run_id": "w1"}), "world")
    assert notes == [] and float(got[0].stats["world.a.recall"](got[0].counts.sum(0))) == 0.5
    # a world run without decisions: nothing to pair, no note (the card's intervals are used)
    (run / "decisions.parquet").unlink()
    assert section_units(_card("world", {"path": str(run / "result.json")}), "world") == ([], [])
    cap = tmp_path / "c"
    cap.mkdir()
    (cap / "result.json").write_text(json.dumps({"run_id": "c1"}))
    pd.DataFrame({"judge_id": ["j"], "set": ["s"], "unit": ["p"], "condition": ["x"], "metric": ["value"],
                  "num": [1], "den": [2]}).to_parquet(cap / "units.parquet")
    cell = {"value": 0.5, "ci": None, "n": 2}
    card = whole({"judge": "j", "sections": {"cap": {"measured": True, "sets": {
        "s": {"source": {"path": str(cap / "result.json"), "run_id": "c1", "created_at": None}, "overall": cell,
              "conditions": {}},
        "t": {"source": {"path": str(tmp_path / "moved" / "result.json"), "run_id": None, "created_at": None},
              "overall": cell, "conditions": {}}}}}})
    got, notes = section_units(card, "cap")
    assert len(got) == 1 and float(got[0].stats["cap.s.x"](got[0].counts.sum(0))) == 0.5
    assert notes == [f"cap.t: its run's result.json is no longer at {tmp_path / 'moved' / 'result.json'}"]


def test_a_validity_run_without_its_probe_file_or_hash_is_named(tmp_path):
    run = tmp_path / "v"
    run.mkdir()
    src = {"path": str(run / "result.json")}
    whole = json.loads((Path(__file__).parents[1] / "analyses" / "data" / "validity_result_schema0.json").read_text())
    for k in ("probe_set", "inputs"):
        whole.pop(k, None)
    (run / "result.json").write_text(json.dumps({**whole, "run_id": "v1"}))
    got, notes = section_units(_card("validity", src), "validity")
    assert got == [] and notes == [f"validity: the validity run in {run} keeps no verdicts.parquet or probe set"]
    pd.DataFrame({"judge_id": ["j"], "request_id": ["x"], "score": [1.0]}).to_parquet(run / "verdicts.parquet")
    (run / "result.json").write_text(json.dumps({**whole, "run_id": "v1", "probe_set": "mine.jsonl"}))
    got, notes = section_units(_card("validity", src), "validity")
    assert got == [] and len(notes) == 1 and "records no hash of its probe file mine.jsonl" in notes[0]


# ------------------------------------------------------------------ a validity run's verdicts, as the run reads them


def _bundled_design():
    from judgeaudit.analyses.validity import probe_design
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    probes = probes_frame(read_probes(bundled_probes_path()))
    return probes, probe_design(probes, 0.75)


def test_the_frontier_reads_epoch_zero_usable_grades_once():
    """Each request's epoch-0 grade; a row with an error, an unparsed reply or a missing score is unusable (its
    probes left out); a repeated request counts once (its first row); another judge's rows are ignored."""
    from judgeaudit.card.paired import validity_frontier

    probes, d = _bundled_design()
    rng = np.random.default_rng(0)
    base_g = {b: float(g) for b, g in zip(d.bases, rng.integers(1, 11, len(d.bases)), strict=True)}
    edit_g = {p: float(g) for p, g in zip(d.probe_ids, rng.integers(1, 11, len(d.probe_ids)), strict=True)}
    rows = [{"judge_id": "j", "request_id": k, "score": v, "epoch": 0, "error": None, "parse_ok": True}
            for k, v in {**base_g, **edit_g}.items()]
    bad_probe, bad_base, none_probe, dup_probe = d.probe_ids[0], d.bases[3], d.probe_ids[10], d.probe_ids[20]
    extra = [
        {"judge_id": "j", "request_id": d.probe_ids[5], "score": 99.0, "epoch": 1, "error": None, "parse_ok": True},
        {"judge_id": "k", "request_id": d.probe_ids[6], "score": 99.0, "epoch": 0, "error": None, "parse_ok": True},
        {"judge_id": "j", "request_id": dup_probe, "score": 77.0, "epoch": 0, "error": None, "parse_ok": True},
    ]
    table = pd.DataFrame(rows + extra).astype({"error": object, "parse_ok": object, "score": float})
    table.loc[table["request_id"] == bad_probe, "error"] = "timeout"
    table.loc[table["request_id"] == bad_base, "parse_ok"] = None
    table.loc[table["request_id"] == none_probe, "score"] = None
    f = validity_frontier(probes, table, "j")
    assert f.s_floor == 0.90                                    # the validity run's default floor
    assert validity_frontier(probes, table, "j", s_floor=0.5).s_floor == 0.5
    arm = d.in_arm.copy()
    keep = arm & (d.probe_ids != bad_probe) & (d.bases[d.base_index] != bad_base) & (d.probe_ids != none_probe)
    assert len(f.base_index) == int(keep.sum())
    want_b = np.array([base_g[b] for b in d.bases[d.base_index][keep]])
    want_e = np.array([edit_g[p] for p in d.probe_ids[keep]])
    assert np.array_equal(f.base_grade, want_b) and np.array_equal(f.edit_grade, want_e)
    assert np.array_equal(f.masks[:, 0], d.is_control[keep])
    assert np.array_equal(f.masks[:, 1], ~d.is_control[keep])
    assert np.array_equal(f.masks[:, 2], ~d.is_control[keep] & (d.axis[keep] == "scope"))
    assert np.array_equal(f.masks[:, 3], ~d.is_control[keep] & (d.axis[keep] == "strength"))
    from judgeaudit.card.paired import design_frontier

    assert design_frontier(d, np.ones(len(d.probe_ids)), np.ones(len(d.probe_ids))).s_floor == 0.90
    # no epoch column: every row is read
    g = validity_frontier(probes, table[table["epoch"] == 0].drop(columns="epoch"), "j")
    assert np.array_equal(g.edit_grade, f.edit_grade)


def test_resamples_are_read_alike_whatever_the_block_size():
    from judgeaudit.card.paired import _boot_at_own_tau, _taus
    from judgeaudit.stats.resample import bootstrap_counts

    rng = np.random.default_rng(2)
    bi, kinds, bg, eg = _design(rng)
    f = _frontier([f"b{i}" for i in range(12)], bi, kinds, bg, eg, 0.8)
    t = _taus(f)
    w = bootstrap_counts(12, 41, 0)
    small, big = _boot_at_own_tau(w, f.counts(t), t, 0.8, block=4), _boot_at_own_tau(w, f.counts(t), t, 0.8)
    for q in VALIDITY_STATS:
        assert len(small[q]) == 41 and np.array_equal(small[q], big[q], equal_nan=True), q


def _uneven_design(rng: np.random.Generator, n_base: int = 12, lift: float = 1.5):
    """``_design`` with base items that lack a kind of edit: items 0–3 have no control edit, 4–6 no strength
    edit, 7–8 no scope edit (so the items holding each subset differ in number from the base items)."""
    bi, kinds, bg, eg = _design(rng, n_base=n_base, lift=lift)
    drop = ((bi <= 3) & (kinds == "control")) | ((bi >= 4) & (bi <= 6) & (kinds == "strength")) \
        | ((bi >= 7) & (bi <= 8) & (kinds == "scope"))
    return bi[~drop], kinds[~drop], bg[~drop], eg[~drop]


@pytest.mark.parametrize("seed", [3, 4, 6])
def test_each_subset_is_averaged_over_the_base_items_that_hold_it(seed):
    """Eq. (6) over the base items holding an edit of each subset (not over every base item, nor over the
    items of another subset), at each run's matched point found by brute force."""
    rng = np.random.default_rng(seed)
    bi, kinds, bg_a, eg_a = _uneven_design(rng)
    bi_b, kinds_b, bg_b, eg_b = _uneven_design(rng, lift=2.5)
    ids = [f"b{i}" for i in range(12)]
    fa = _frontier(ids, bi, kinds, bg_a, eg_a, 0.8)
    fb = _frontier(ids, bi_b, kinds_b, bg_b, eg_b, 0.8)
    got = compare_validity(fa, fb, n_boot=50, seed=seed)
    tau_a, want_a = _by_hand(bi, kinds, bg_a, eg_a, 0.8)
    tau_b, want_b = _by_hand(bi_b, kinds_b, bg_b, eg_b, 0.8)
    assert set(got) == set(VALIDITY_STATS)
    for q, c in got.items():
        assert c.taus == (tau_a, tau_b), q
        assert c.a == pytest.approx(want_a[q], abs=1e-12), q
        assert c.b == pytest.approx(want_b[q], abs=1e-12), q


def test_a_run_without_construct_edits_has_no_matched_point():
    """Only control edits: R is undefined at every threshold, so no matched point (not R = 0)."""
    rng = np.random.default_rng(0)
    bi, kinds, bg, eg = _design(rng)
    ids = [f"b{i}" for i in range(12)]
    control = kinds == "control"
    only = _frontier(ids, bi[control], kinds[control], bg[control], eg[control], 0.8)
    full = _frontier(ids, bi, kinds, bg, eg, 0.8)
    assert compare_validity(only, full, n_boot=20) == {} and compare_validity(full, only, n_boot=20) == {}


def test_a_judge_blind_to_scope_edits_is_read_at_its_matched_point():
    """Scope edits never move the grade (R_scope = 0 at every threshold): R is the strength edits' flips
    alone, still defined, and every row is Eq. (6) at the brute-force matched point."""
    rng = np.random.default_rng(0)
    bi, kinds, bg, eg = _design(rng)
    eg = np.where(kinds == "scope", bg, eg)
    ids = [f"b{i}" for i in range(12)]
    f = _frontier(ids, bi, kinds, bg, eg, 0.8)
    tau, want = _by_hand(bi, kinds, bg, eg, 0.8)
    assert want["validity.R_scope"] == 0 and want["validity.R"] > 0
    got = compare_validity(f, f, n_boot=20)
    assert set(got) == set(VALIDITY_STATS)
    for q, c in got.items():
        assert c.taus == (tau, tau) and c.a == pytest.approx(want[q], abs=1e-12), q


def test_a_validity_run_folder_reads_the_frontier_the_run_graded(tmp_path):
    """A validity run on the bundled probes whose recorded hash still matches: its frontier is the one its
    verdicts give at the run's own bar and floor; once the probe file's hash differs, it is named instead."""
    from judgeaudit.card.paired import validity_frontier
    from judgeaudit.probes.io import bundled_probes_path
    from judgeaudit.runinfo import file_sha256

    probes, d = _bundled_design()
    rng = np.random.default_rng(1)
    ids = list(d.bases) + list(d.probe_ids)
    verdicts = pd.DataFrame({"judge_id": "j", "request_id": ids, "score": rng.integers(1, 11, len(ids)).astype(float)})
    run = tmp_path / "v"
    run.mkdir()
    verdicts.to_parquet(run / "verdicts.parquet")
    whole = json.loads((Path(__file__).parents[1] / "analyses" / "data" / "validity_result_schema0.json").read_text())
    path = bundled_probes_path()
    whole.update(run_id="v1", probe_set="bundled", s_floor=0.8,
                 inputs={"files": {"probes": {"path": str(path), "sha256": file_sha256(path)}}})
    (run / "result.json").write_text(json.dumps(whole))
    got, notes = section_units(_card("validity", {"path": str(run / "result.json"), "run_id": "v1"}), "validity")
    want = validity_frontier(probes, verdicts, "j", bar=0.75, s_floor=0.8)
    assert notes == [] and len(got) == 1 and isinstance(got[0], Frontier)
    f = got[0]
    assert f.s_floor == 0.8 and np.array_equal(f.ids, want.ids) and np.array_equal(f.base_index, want.base_index)
    assert np.array_equal(f.base_grade, want.base_grade) and np.array_equal(f.edit_grade, want.edit_grade)
    assert np.array_equal(f.masks, want.masks) and len(f.base_index) == int(d.in_arm.sum())
    whole["inputs"]["files"]["probes"]["sha256"] = "0" * 64
    (run / "result.json").write_text(json.dumps(whole))
    got, notes = section_units(_card("validity", {"path": str(run / "result.json")}), "validity")
    assert got == [] and len(notes) == 1 and "changed after the run" in notes[0]


def test_a_judge_blind_to_every_construct_edit_is_read_at_the_lowest_threshold():
    """No construct edit ever moves the grade: R = 0 at every threshold, so the rule (argmax R s.t. S ≥ the
    floor, ties to the higher S, then the lower τ) picks the lowest threshold, where S = 1 — a matched point
    (R = 0 is a finding), read there, not "no matched point"."""
    rng = np.random.default_rng(0)
    bi, kinds, bg, eg = _design(rng)
    blind = np.where(kinds == "control", eg, bg)
    ids = [f"b{i}" for i in range(12)]
    f = _frontier(ids, bi, kinds, bg, blind, 0.8)
    tau, want = _by_hand(bi, kinds, bg, blind, 0.8)
    assert want["validity.R"] == 0 and want["validity.S"] == 1 and tau == min(bg.min(), blind.min())
    got = compare_validity(f, _frontier(ids, bi, kinds, bg, eg, 0.8), n_boot=20)
    assert set(got) == set(VALIDITY_STATS)
    for q, c in got.items():
        assert c.taus[0] == tau and c.a == pytest.approx(want[q], abs=1e-12), q
    back = compare_validity(_frontier(ids, bi, kinds, bg, eg, 0.8), f, n_boot=20)    # the blind judge as B
    assert all(c.taus[1] == tau and c.b == pytest.approx(want[q], abs=1e-12) for q, c in back.items()) and back


def test_a_pair_outside_a_condition_adds_nothing_to_its_cell():
    """p3 is measured overall but holds no item of ``cond``: the cell stays Σ num / Σ den over p1 and p2,
    and p3 counts 0 items there (a resample drawing p3 moves only the overall cell)."""
    units = pd.DataFrame({"judge_id": "j", "set": "s", "unit": ["p1", "p2", "p1", "p2", "p3"],
                          "condition": ["cond", "cond", "overall", "overall", "overall"], "metric": "value",
                          "num": [1, 3, 2, 2, 1], "den": [2, 4, 4, 4, 2]})
    u = cap_units(units, "j", "s")
    assert u.ids.tolist() == ["p1", "p2", "p3"]
    s = u.counts.sum(axis=0)
    assert float(u.stats["cap.s.cond"](s)) == pytest.approx(4 / 6)
    assert float(u.stats["cap.s.overall"](s)) == pytest.approx(5 / 10)
    only_p3 = u.counts[2]
    assert np.isnan(float(u.stats["cap.s.cond"](only_p3)))
