"""Every card sentence is true of its numbers with their intervals: planted judges for each verdict
sentence (where it must and must not fire), a card without S, a constant judge, sections attributed to
the judge that produced them, the checklist's one rule, the extensions marked, an unknown judge refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgeaudit.card.build import build_card
from judgeaudit.card.checklist import checklist
from judgeaudit.card.sources import collect
from judgeaudit.cli import app

J = "api:acme/judge-1"


def _write(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps({**data, "run_id": f"run-{folder.name}",
                                                    "created_at": "2026-09-02T00:00:00+00:00"}))
    return folder


def _block(**kw) -> dict:
    b = {"S": 0.93, "S_ci": [0.9, 0.96], "R": 0.31, "R_ci": [0.25, 0.37], "R_scope": 0.40,
         "R_scope_ci": [0.33, 0.47], "R_strength": 0.20, "R_strength_ci": [0.14, 0.27], "gap": 0.20,
         "gap_ci": [0.10, 0.30], "gap_perm_p": None, "R_plus": 0.2, "R_plus_ci": [0.15, 0.25],
         "wrong_way_rate": 0.11, "wrong_way_rate_ci": [0.07, 0.15], "control_flip_rate": 0.07,
         "control_flip_rate_ci": [0.04, 0.10], "R_excess": None, "R_excess_ci": None, "tau": 5.0,
         "interpretable": True, "single_point": False, "n_construct": 336, "n_control": 240, "notes": []}
    return {**b, **kw}


def _validity(judges: dict, direction_source: str | None = "human") -> dict:
    """A validity result with every key a run writes (the card reads it through ``ValidityFile``)."""
    return {"s_floor": 0.9, "bar": 0.75, "n_base": 48, "n_probes": 576, "direction_source": direction_source,
            "level": 0.95, "n_boot": 1000, "n_perm": 1000, "seed": 0, "bootstrap_unit": "base_id",
            "tau_in_bootstrap": "reselected", "judges": judges, "slots": {}, "axes": {}, "notes": []}


def _verdict(tmp_path: Path, block: dict, direction_source: str = "human", vp: dict | None = None) -> list[str]:
    _write(tmp_path / "v", _validity({J: block}, direction_source))
    if vp is not None:
        _write(tmp_path / "p", vp)
    return build_card(J, collect([tmp_path])).verdict


def _has(lines: list[str], text: str) -> bool:
    return any(text in line for line in lines)


# --- item 8: S undefined ------------------------------------------------------------------------------


def test_a_card_without_S_says_so_instead_of_raising(tmp_path):
    block = _block(S=None, S_ci=None, R=None, R_ci=None, tau=None, interpretable=False, n_control=0,
                   control_flip_rate=None, control_flip_rate_ci=None)
    lines = _verdict(tmp_path, block)
    assert lines[0] == (f"{J} has no invariance measured (S undefined: no usable control edits), so its R is not "
                        "read (Corollary 1).")
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(tmp_path), "--out", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert "no invariance measured" in (tmp_path / "c" / "card.html").read_text()


# --- item 9: wrong-way flips, insensitive on strength, surface recovery ---------------------------------


@pytest.mark.parametrize(("ww", "rp", "fires"), [
    ((0.30, [0.24, 0.36]), (0.05, [0.02, 0.09]), True),     # wrong-way interval above R⁺'s
    ((0.12, [0.05, 0.20]), (0.10, [0.04, 0.17]), False),    # no sensitivity: both noise, point ww > R⁺
    ((0.03, [0.00, 0.08]), (0.09, [0.03, 0.16]), False),    # 3 right-way flips of 4
    ((0.16, [0.10, 0.22]), (0.12, [0.07, 0.18]), False),    # ww > R⁺ on the point, intervals overlap
])
def test_wrong_way_sentence_fires_only_when_its_interval_is_above_R_plus(tmp_path, ww, rp, fires):
    lines = _verdict(tmp_path, _block(wrong_way_rate=ww[0], wrong_way_rate_ci=ww[1], R_plus=rp[0], R_plus_ci=rp[1]))
    assert _has(lines, "Most of its construct flips go the wrong way") is fires
    if fires:
        assert _has(lines, "judgeaudit's own extensions, not paper quantities")


@pytest.mark.parametrize(("st", "gap", "text"), [
    ((0.20, [0.14, 0.27]), (0.20, [0.10, 0.30]), "It is insensitive on strength"),
    ((0.56, [0.48, 0.64]), (0.20, [0.10, 0.30]), "It moves less on strength than on scope"),   # not the low-R corner
    ((0.20, [0.14, 0.27]), (0.05, [-0.05, 0.15]), None),                                       # gap not resolved
])
def test_insensitive_on_strength_is_reserved_for_the_low_R_corner(tmp_path, st, gap, text):
    block = _block(R_strength=st[0], R_strength_ci=st[1], R_scope=st[0] + gap[0],
                   R_scope_ci=[st[1][0] + gap[0], st[1][1] + gap[0]], gap=gap[0], gap_ci=gap[1])
    lines = _verdict(tmp_path, block)
    assert _has(lines, "insensitive on strength") is (text == "It is insensitive on strength")
    assert _has(lines, "moves less on strength") is (text == "It moves less on strength than on scope")


@pytest.mark.parametrize(("p", "claimed"), [(0.002, True), (0.31, False), (None, True)])
def test_the_axis_gap_is_claimed_only_when_its_permutation_null_agrees_with_its_interval(tmp_path, p, claimed):
    """§5.2 reports the gap with a bootstrap interval excluding zero *and* an axis-label permutation p:
    an interval that excludes zero against a permutation p ≥ 0.05 claims no gap and says so."""
    lines = _verdict(tmp_path, _block(gap_perm_p=p))
    assert _has(lines, "It is insensitive on strength") is claimed
    if p is not None and claimed:
        assert _has(lines, f"the gap's interval excludes zero and its axis-label permutation p = {p:.2g}")
    if p is None:
        assert _has(lines, "the gap's interval excludes zero; no permutation null was run")
    if not claimed:
        assert _has(lines, "The scope − strength gap (+0.20 [+0.10, +0.30]) is not established: its interval "
                           "excludes zero but its axis-label permutation p = 0.31.")


def _vp(a_imp: float, ci: list[float], clears: bool = True, origin: str = "human vote") -> dict:
    mode = {"applicable": True, "n": 6710, "a_imp": a_imp, "a_imp_ci": ci, "a_imp_member": "surface_features",
            "a_imp_null": {"n": 200, "p_value": 0.005 if clears else 0.4, "p95": 0.02, "clears_null": clears},
            "members": {}}
    return {"config": {}, "transfer": [], "sets": {"helpsteer2": {"meta": {"label_origin": origin}, "item": mode}}}


@pytest.mark.parametrize(("a_imp", "ci", "clears", "recoverable", "partial"), [
    (0.068, [0.05, 0.086], True, False, True),     # HelpSteer2's κ: §5.4 reads it as headroom
    (0.993, [0.99, 0.995], True, True, False),     # the provenance-inherited case
    (0.30, [0.25, 0.35], True, False, True),       # interval straddles the scale's 0.30
    (0.01, [-0.01, 0.03], False, False, False),    # under its null: nothing said
])
def test_recoverable_from_surface_form_reads_the_a_imp_scale(tmp_path, a_imp, ci, clears, recoverable, partial):
    lines = _verdict(tmp_path, _block(), vp=_vp(a_imp, ci, clears))
    assert _has(lines, "is recoverable from surface form alone") is recoverable
    assert _has(lines, "reproduces part of its validation set") is partial


@pytest.mark.parametrize(("a_imp", "ci", "clears", "rests_on"), [
    (0.40, [-0.08, 0.88], True, "is above its permutation null (Benjamini–Hochberg-adjusted p = 0.005) but its "
                                "95% interval includes 0"),
    (0.05, [0.01, 0.09], False, "its 95% interval excludes 0 but it is not above its permutation null at the rows' "
                                "false discovery rate (Benjamini–Hochberg-adjusted p = 0.4)"),
])
def test_surface_recovery_is_claimed_only_when_the_null_and_the_interval_both_support_it(tmp_path, a_imp, ci,
                                                                                         clears, rests_on):
    """§5.4 reports a_imp against its label-permutation null and with its interval: where the two
    disagree the card claims no recovery and says which test the reading would rest on."""
    lines = _verdict(tmp_path, _block(), vp=_vp(a_imp, ci, clears))
    assert not _has(lines, "reproduces part of its validation set")
    assert not _has(lines, "is recoverable from")
    (line,) = [x for x in lines if "helpsteer2" in x]
    assert rests_on in line and "not established" in line, line


# --- item 11: caveats, checklist rule, constant judge, CAP weakest cell --------------------------------


def test_directions_not_human_verified_are_said(tmp_path):
    assert _has(_verdict(tmp_path, _block(), direction_source="intended"), "not human-verified")
    assert not _has(_verdict(tmp_path / "h", _block(), direction_source="human"), "not human-verified")


def test_a_constant_judge_is_named_as_one_not_told_it_misses_the_floor(tmp_path):
    block = _block(S=1.0, S_ci=[1.0, 1.0], R=0.0, R_ci=[0.0, 0.0], single_point=True, interpretable=False)
    lines = _verdict(tmp_path, block)
    assert lines[0].startswith(f"{J} gives a single grade: a constant instrument at the corner (S, R) = (1, 0)")
    assert not _has(lines, "no operating point")


def _vp_sets(**sets: dict) -> dict:
    out = {}
    for name, kw in sets.items():
        mode = {"applicable": True, "n": 100, "a_imp": 0.2, "a_imp_ci": [0.1, 0.3], "a_imp_member": "length_only",
                "a_imp_null": {"n": 200, "p_value": 0.01, "p95": 0.05, "clears_null": True},
                "a_hum": kw.get("a_hum"), "a_hum_ci": [0.6, 0.8] if kw.get("a_hum") else None,
                "members": {"provenance_recoverable": {"kappa": 0.3}} if kw.get("prov") else {}}
        out[name] = {"meta": {"label_origin": kw.get("origin", "human vote")}, "item": mode}
    return {"config": {}, "transfer": [], "sets": out}


def test_checklist_placeholder_label_origin_is_not_provenance(tmp_path):
    _write(tmp_path / "p", _vp_sets(mine={"origin": "user", "a_hum": 0.7, "prov": True}))
    item = checklist(collect([tmp_path]), J)[0]
    assert not item.ok and "placeholder" in item.evidence


def test_checklist_items_3_and_6_need_every_set_as_item_4_does(tmp_path):
    _write(tmp_path / "p", _vp_sets(a={"a_hum": 0.7, "prov": True}, b={}))
    items = {i.number: i for i in checklist(collect([tmp_path]), J)}
    assert (items[3].ok, items[4].ok, items[6].ok) == (False, True, False)
    assert "no human ceiling in b/item" in items[3].evidence
    assert "no generative-condition field in b" in items[6].evidence


def test_cap_weakest_compares_direct_cells_with_intervals_only(tmp_path):
    cond = lambda v, w, n=60, cov="direct": {"value": v, "ci": [v - w, v + w], "n": n, "coverage": cov}  # noqa: E731
    cap = {"conditions": [], "sets": {"judgebench": {"judges": {J: {
        "overall": {"value": 0.6, "ci": [0.5, 0.7], "n": 100},
        "conditions": {"C1": cond(0.80, 0.05), "C2": cond(0.45, 0.08), "C8": cond(0.10, 0.3, 10, "approx")}}}}}}
    _write(tmp_path / "cap", cap)
    lines = build_card(J, collect([tmp_path])).verdict
    weakest = next(x for x in lines if "CAP profile" in x)
    assert "weakest on C2 (0.45 [0.37, 0.53], n = 60" in weakest and "C8" not in weakest
    cap["sets"]["judgebench"]["judges"][J]["conditions"]["C2"] = cond(0.70, 0.12)   # overlaps C1
    _write(tmp_path / "cap", cap)
    lines = build_card(J, collect([tmp_path])).verdict
    assert _has(lines, "no direct-coverage CAP condition is distinguishably weakest")


# --- item 7: a section from another judge is not shown ----------------------------------------------------


def test_a_loop_run_of_another_judge_is_not_on_this_judges_card(tmp_path):
    _write(tmp_path / "loop", {"judge": "api:openai/gpt-4o-mini", "judge2": None,
                               "regulators": {"blind": {"net": -0.04, "net_ci": [-0.08, 0.0]}}})
    _write(tmp_path / "v", _validity({"local": _block()}))
    card = build_card("local", collect([tmp_path])).to_json()
    assert not card["sections"]["loop"]["measured"]
    assert card["sections"]["validity"]["source"]["judge"] == "local"
    assert card["sections"]["validity"]["source"]["family"] is None   # the run recorded none (no verdicts)
    other = build_card("api:openai/gpt-4o-mini", collect([tmp_path])).to_json()
    assert other["sections"]["loop"]["measured"] and other["sections"]["loop"]["source"]["judge"] == \
        "api:openai/gpt-4o-mini"


# --- reliability: an unknown judge ------------------------------------------------------------------------


def test_an_unknown_judge_is_refused_with_the_judges_the_folders_hold(tmp_path):
    _write(tmp_path / "v", _validity({J: _block()}, None))
    res = CliRunner().invoke(app, ["card", "--judge", "api:acme/judge-2", "--from", str(tmp_path),
                                   "--out", str(tmp_path / "c")])
    from judgeaudit.errors import InputError

    assert isinstance(res.exception, InputError) and res.exception.field == "--judge"   # the CLI: one line, exit 2
    assert f"has judge 'api:acme/judge-2'; the folders hold: {J}" in str(res.exception)
    assert not (tmp_path / "c" / "card.json").exists()


# --- item 15: the extensions are marked ----------------------------------------------------------------


def test_the_extensions_are_marked_in_the_card_and_the_validity_report(tmp_path):
    _write(tmp_path / "v", _validity({J: _block()}))
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(tmp_path), "--out", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "c" / "card.html").read_text()
    assert "judgeaudit's own extension" in html and "judgeaudit's own extension" in \
        (tmp_path / "c" / "card.md").read_text()
    from judgeaudit.report.validity import EXTENSION_NOTE

    assert "R⁺" in EXTENSION_NOTE and "R_excess" in EXTENSION_NOTE and "not paper quantities" in EXTENSION_NOTE
