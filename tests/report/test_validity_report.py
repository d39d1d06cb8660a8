"""Report sections of the validity profile."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from judgeaudit.analyses.validity import validity_profile
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, CONTROL_SLOTS
from judgeaudit.report.html import render_page
from judgeaudit.report.validity import NOT_VERIFIED, judge_table, slot_table, validity_sections

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyses"))
from simulate_validity import grades_frame, make_probes, planted, simulate_grades  # noqa: E402


def _result(labels=None):
    probes = make_probes(24, labels=labels)
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    flip = grades_frame("flip", {**{b: 1 for b in pd.unique(probes["base_id"])},
                                 **{p: 9 for p in probes["probe_id"]}})
    v = pd.concat([simulate_grades(probes, planted(0.05, 0.5, 0.3), seed=1, judge_id="good"), flip,
                   grades_frame("constant", {k: 5 for k in ids})])
    return validity_profile(probes, v, n_boot=100, n_perm=50)


def test_sections_carry_plane_bars_tables_and_banners():
    res = _result()
    secs = validity_sections(res)
    titles = [s.title for s in secs]
    assert titles[:4] == ["Validity profile: the (S, R) plane", "Per-slot sensitivity at matched invariance",
                          "Per-judge profiles", "Slots: n, agreement and yield"]
    plane = secs[0]
    assert "plotly" in plane.body and "S + R = 1" in plane.body and "circle-open" in plane.body
    assert "constant (1, 0)" in plane.body and "flip (0, 1)" in plane.body and "S floor 0.9" in plane.body
    banners = " ".join(plane.banners)
    assert NOT_VERIFIED in banners.lower()
    assert "Judge flip is uninterpretable" in banners
    assert "Judge constant is reported as a single point" in banners
    assert "control (all)" in secs[1].body
    # per-judge table: Table 5's columns, numbers from the result
    table = secs[2].body
    for col in ("R scope", "R strength", "gap (scope − strength)", "pts", "regrade", "parse failures"):
        assert col in table
    good = res["good"]
    assert f"{good['S']:.3f} [{good['S_ci'][0]:.3f}, {good['S_ci'][1]:.3f}]" in table
    # slot table: agreement and yield are dashes without labels
    slot_df = slot_table(res)
    assert "<td>—</td>" in secs[3].body
    assert set(slot_df["agreement"]) == {"—"} and set(slot_df["human dir."]) == {"—"}
    assert slot_df["n"].tolist() == [24] * 12
    assert judge_table(res).set_index("judge").loc["flip", "status"].startswith("uninterpretable")
    html = render_page("validity", secs)
    assert html.count("<section") == len(secs)


def test_human_labels_show_agreement_yield_and_the_excluded_slot():
    n = 24
    labels = {s: [["edited"] * 3 for _ in range(n)] for s in CONSTRUCT_SLOTS}
    labels.update({s: [["neither"] * 3 for _ in range(n)] for s in CONTROL_SLOTS})
    labels["elaboration"] = [["neither", "edited", "original"] for _ in range(n)]
    res = _result(labels)
    secs = validity_sections(res)
    assert not any(NOT_VERIFIED in b.lower() for s in secs for b in s.banners)
    assert any("Not measurable" in b and "elaboration" in b for b in secs[0].banners)
    slot_df = slot_table(res).set_index("intervention")
    assert "0.000 †" in secs[3].body
    assert slot_df.loc["elaboration", "agreement"] == "0.000 †"
    assert slot_df.loc["format shift", "agreement"] == "1.000"
    assert slot_df.loc["format shift", "human dir."] == "100%"
    assert int(slot_df.loc["elaboration", "n"]) == 0


def test_direction_table_and_regrade_columns_show_the_result_numbers():
    probes = make_probes(24)
    v = simulate_grades(probes, planted(0.05, 0.5, 0.3), seed=1, judge_id="good", p_high=0.7)
    res = validity_profile(probes, v, n_boot=100, n_perm=50)
    secs = validity_sections(res)
    titles = [s.title for s in secs]
    assert "Direction of construct flips" in titles
    body = secs[titles.index("Direction of construct flips")].body
    g = res["good"]
    d = g["directional"]
    assert f"{d['n_wrong_way']} of {d['n_flips']}" in body
    assert f"{g['R_plus']:.3f} [{g['R_plus_ci'][0]:.3f}, {g['R_plus_ci'][1]:.3f}]" in body
    assert f"{d['strength']['wrong_way_rate']:.3f}" in body
    # most flips of a judge that grades most originals high go the wrong way: the reader is told
    assert d["n_wrong_way"] * 2 > d["n_flips"]
    assert any(f"{d['n_wrong_way']} of its {d['n_flips']} construct flips go the wrong way" in b
               for b in secs[2].banners)
    table = judge_table(res).set_index("judge")
    assert {"R⁺ (toward label)", "wrong way", "regrade", "regrade (verdict at τ)"} <= set(table.columns)
    # every base item carries every slot: the gap's null is permuted within base items, and says why
    assert "labels permuted within base items in the construct arm" in secs[0].body
    assert "chosen by the design: 24 of 24 base items in the construct arm carry edits on both axes" in secs[0].body
    assert "τ re-selected in every resample" in secs[0].body
