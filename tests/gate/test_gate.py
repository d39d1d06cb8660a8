"""``judgeaudit gate``: the three outcomes on planted cards, the interval rules, the summaries, bad
policy files, and a gate on a validity run fed by replayed verdicts (no model call)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from cardshape import whole
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.gate import evaluate, load_policy
from judgeaudit.gate.policy import parse_expression


def planted_card(**over):
    """A card shaped as judgeaudit.card.build writes it, with planted numbers."""
    metric = lambda v, lo, hi: {"value": v, "ci": [lo, hi]}  # noqa: E731
    sections = {
        "validity": {"measured": True, "s_floor": 0.9, "interpretable": True,
                     "n": {"base_items": 48, "construct_edits": 336, "control_edits": 240},
                     "bootstrap": {"unit": "base_id", "n": 48},
                     "metrics": {"S": metric(0.95, 0.92, 0.97), "R": metric(0.42, 0.36, 0.48),
                                 "R_scope": metric(0.60, 0.52, 0.68), "R_strength": metric(0.20, 0.13, 0.27),
                                 "gap": metric(0.40, 0.29, 0.50)}},
        "cap": {"measured": False, "not_measured": "not measured — run: judgeaudit cap run …"},
        "vp": {"measured": True, "rows": [
            {"set": "llmbar", "mode": "item", "n": 400, "a_imp": 0.08, "a_imp_ci": [0.03, 0.13]},
            {"set": "mtbench", "mode": "item", "n": 300, "a_imp": 0.18, "a_imp_ci": [0.10, 0.26]}]},
        "world": {"measured": True,
                  "arms": {"blind": {"recall": {**metric(0.30, 0.22, 0.38), "n": 60, "unit": "group"}},
                           "informed": {"recall": {**metric(0.62, 0.55, 0.69), "n": 60, "unit": "group"}}},
                  "numbers": {"arms.blind.n": 120, "arms.informed.n": 120}},
        "loop": {"measured": True, "regulators": {"informed": {"net": 4.0, "ci": [-2.0, 9.0]}}, "numbers": {}},
    }
    for path, value in over.items():
        node = sections
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return whole({"judge": "api:openai/gpt-4.1-mini", "sections": sections})


def _policy(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    return p


def _outcomes(tmp_path, bars: list[str], card=None):
    policy = load_policy(_policy(tmp_path, "bars:\n" + "".join(f"  - {json.dumps(b)}\n" for b in bars)))
    r = evaluate(policy, card or planted_card())
    return [b.outcome for b in r.bars], r


def test_pass_fail_blind_on_a_planted_card(tmp_path):
    got, r = _outcomes(tmp_path, [
        "R >= 0.30 at S >= 0.90",                                # [0.36, 0.48] clears 0.30
        "R_strength >= 0.30",                                    # [0.13, 0.27] wholly below
        "R >= 0.40",                                             # [0.36, 0.48] straddles
        "world.informed.recall - world.blind.recall >= 0.1",     # [0.55−0.38, 0.69−0.22] = [0.17, 0.47]
        "vp.a_imp <= 0.2",                                       # llmbar clears, mtbench straddles
        "loop.informed.net >= 0",                                # [−2, 9] straddles
        "cap.llmbar.overall >= 0.7",                             # section not measured
        "R >= 0.30 at S >= 0.96",                                # S = 0.95: not read at that point
        "world.placebo.recall <= 0.5",                           # no such arm
    ])
    assert got == ["PASS", "FAIL", "BLIND", "PASS", "BLIND", "BLIND", "BLIND", "BLIND", "BLIND"]
    assert r.outcome == "FAIL" and r.exit_code == 1
    by = {b.bar.text: b for b in r.bars}
    diff = by["world.informed.recall - world.blind.recall >= 0.1"].checks[0]
    assert diff.ci == pytest.approx((0.55 - 0.38, 0.69 - 0.22)) and diff.n == 60       # no paired row: unpaired
    assert "(60 source items resampled, unpaired bound)" in diff.why
    assert [c.outcome for c in by["vp.a_imp <= 0.2"].checks] == ["PASS", "BLIND"]
    assert "not measured" in by["cap.llmbar.overall >= 0.7"].checks[0].why
    assert "not at S >= 0.96" in by["R >= 0.30 at S >= 0.96"].checks[0].why


def test_the_gate_takes_the_worst_bar(tmp_path):
    assert _outcomes(tmp_path, ["R >= 0.30", "S >= 0.91"])[1].outcome == "PASS"
    assert _outcomes(tmp_path, ["R >= 0.30", "R >= 0.40"])[1].outcome == "BLIND"
    assert _outcomes(tmp_path, ["R >= 0.40", "R_strength >= 0.3"])[1].outcome == "FAIL"


def test_interval_rules_at_the_bar(tmp_path):
    card = planted_card(validity__metrics__R={"value": 0.35, "ci": [0.30, 0.40]})
    assert _outcomes(tmp_path, ["R >= 0.30", "R > 0.30", "R <= 0.30", "R < 0.30", "R between 0.2 and 0.5",
                                "R between 0.45 and 0.9", "R between 0.38 and 0.9"], card)[0] == \
        ["PASS", "BLIND", "BLIND", "FAIL", "PASS", "FAIL", "BLIND"]
    card = planted_card(validity__metrics__R={"value": 0.35, "ci": None})
    got, r = _outcomes(tmp_path, ["R >= 0.1"], card)
    assert got == ["BLIND"] and "no interval" in r.bars[0].checks[0].why


def test_too_few_units_and_uninterpretable_are_blind(tmp_path):
    p = _policy(tmp_path, "min_units: 500\nbars:\n  - R >= 0.30\n  - bar: vp.a_imp <= 0.3\n    min_units: 350\n")
    r = evaluate(load_policy(p), planted_card())
    assert [b.outcome for b in r.bars] == ["BLIND", "BLIND"]
    assert r.bars[0].checks[0].why == "48 base items resampled, fewer than the 500 the bar needs"
    assert [c.outcome for c in r.bars[1].checks] == ["PASS", "BLIND"]     # llmbar 400 units, mtbench 300
    got, r = _outcomes(tmp_path, ["R >= 0.3"], planted_card(validity__interpretable=False))
    assert got == ["BLIND"] and "uninterpretable" in r.bars[0].checks[0].why


def _invoke(argv, env=None):
    r = CliRunner().invoke(app, [str(a) for a in argv], env=env)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


@pytest.mark.parametrize("bar, code", [("R >= 0.30 at S >= 0.90", 0), ("R_strength >= 0.30", 1), ("R >= 0.40", 2)])
def test_exit_codes_summary_and_junit(tmp_path, bar, code):
    card = tmp_path / "card.json"
    card.write_text(json.dumps(planted_card()))
    policy = _policy(tmp_path, f"bars:\n  - {bar}\n")
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    got, out = _invoke(["gate", policy, "--card", card, "--summary", tmp_path / "s.md", "--junit",
                        tmp_path / "j.xml"], env={"GITHUB_STEP_SUMMARY": str(step)})
    outcome = ["PASS", "FAIL", "BLIND"][code]
    assert got == code, out
    md = (tmp_path / "s.md").read_text()
    assert f"judgeaudit gate: " in md and outcome in md and md in out
    assert step.read_text() == "earlier step\n" + md          # appended, as GitHub documents
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == \
        ("1", str(int(code == 1)), str(int(code == 2)))
    case = suite.find("testcase")
    assert (case.find("failure") is not None, case.find("error") is not None) == (code == 1, code == 2)


@pytest.mark.parametrize("text, line, field", [
    ("bars:\n  - R >= 0.3\n  - R >> 0.3\n", 3, "bars[1].bar"),
    ("bars:\n  - R == 0.3\n", 2, "bars[0].bar"),
    ("bars:\n  - bar: R >= 0.3\n    colour: red\n", 3, "bars[0].colour"),
    ("min_units: many\nbars:\n  - R >= 0.3\n", 1, "min_units"),
    ("bars: []\n", 1, "bars"),
    ("policy: 1\nbars:\n  - R >= 0.3\n", 1, "policy"),
    ("bars:\n  - bar: R >= 0.3\n    at: S is high\n", 3, "bars[0].at"),
    ("bars:\n  - [R, 0.3]\n", 2, "bars[0]"),
])
def test_bad_policy_is_one_line_exit_3(tmp_path, text, line, field):
    card = tmp_path / "card.json"
    card.write_text(json.dumps(planted_card()))
    policy = _policy(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_policy(policy)
    assert (e.value.line, e.value.field) == (line, field), str(e.value)
    r = CliRunner().invoke(app, ["gate", str(policy), "--card", str(card), "--junit", str(tmp_path / "j.xml")])
    assert r.exit_code == 3
    err = [s for s in r.output.splitlines() if s.startswith("error:")]
    assert len(err) == 1 and f"{policy}:{line}: field '{field}'" in err[0], r.output
    assert not (tmp_path / "j.xml").exists()


def test_bad_card_and_missing_source_exit_3(tmp_path):
    policy = _policy(tmp_path, "bars:\n  - R >= 0.3\n")
    (tmp_path / "x.json").write_text("[1, 2]")
    for argv in (["--card", tmp_path / "x.json"], ["--card", tmp_path / "none.json"], []):
        code, out = _invoke(["gate", policy, *argv])
        assert code == 3 and out.count("error:") == 1, out


def test_expression_parsing():
    terms, c = parse_expression("world.informed.recall - world.blind.recall >= 0.1")
    assert terms == ("world.informed.recall", "world.blind.recall") and (c.comparator, c.value) == (">=", 0.1)
    terms, c = parse_expression("≤ 0.2", metric="vp.a_imp")
    assert terms == ("vp.a_imp",) and (c.comparator, c.value) == ("<=", 0.2)


@pytest.mark.parametrize("judge, bars, code", [
    ("perfect", ["R >= 0.30 at S >= 0.90", "R_strength >= 0.5"], 0),
    ("scope_only", ["R >= 0.30 at S >= 0.90", "R_strength >= 0.3"], 1),
    ("perfect", ["R >= 0.30", "world.informed.recall - world.blind.recall >= 0.1"], 2),   # no world run
])
def test_gate_on_a_replayed_validity_run(tmp_path, replayed_validity_run, judge, bars, code):
    policy = _policy(tmp_path, f"judge: {judge}\nbars:\n" + "".join(f"  - {b}\n" for b in bars))
    got, out = _invoke(["gate", policy, "--from", replayed_validity_run, "--junit", tmp_path / "j.xml"])
    assert got == code, out
    assert ["PASS", "FAIL", "BLIND"][code] in out


@pytest.mark.parametrize("bar, over, field", [
    ("R >= 0.3", {"validity": "measured"}, "sections.validity"),
    ("R >= 0.3", {"validity__metrics": [0.4]}, "sections.validity.metrics"),
    ("R >= 0.3", {"validity__metrics__R": 0.42}, "sections.validity.metrics.R"),
    ("R >= 0.3", {"validity__bootstrap": {"unit": "base_id", "n": "many"}}, "sections.validity.bootstrap.n"),
    ("world.blind.recall >= 0.2", {"world__arms": ["blind"]}, "sections.world.arms"),
    ("world.blind.recall >= 0.2", {"world__arms__blind": "0.3"}, "sections.world.arms.blind"),
    ("world.blind.recall >= 0.2", {"world__arms__blind__recall": {"value": 0.3, "ci": [0.2, 0.4], "n": "x"}},
     "sections.world.arms.blind.recall.n"),
    ("vp.llmbar.a_imp <= 0.2", {"vp__rows": {"set": "llmbar"}}, "sections.vp.rows"),
    ("vp.llmbar.a_imp <= 0.2", {"vp__rows": ["llmbar"]}, "sections.vp.rows.0"),
    ("loop.informed.net >= 0", {"loop__regulators": {"informed": 4.0}}, "sections.loop.regulators.informed"),
    ("cap.llmbar.overall >= 0", {"cap": {"measured": True, "sets": {"llmbar": []}}}, "sections.cap.sets.llmbar"),
])
def test_a_malformed_card_is_one_line_naming_its_field(tmp_path, cli_main, bar, over, field):
    policy = _policy(tmp_path, f"bars:\n  - {json.dumps(bar)}\n")
    card = tmp_path / "card.json"
    card.write_text(json.dumps(planted_card(**over)))
    r = cli_main("gate", policy, "--card", card, "--junit", tmp_path / "j.xml")
    assert r.returncode == 3, r.stderr                                # gate's bad-input exit (2 is BLIND)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert "Traceback" not in r.stderr and len(lines) == 1, r.stdout + r.stderr
    assert lines[0].startswith(f"error: {card}: field '{field}': malformed card"), lines[0]
    assert not (tmp_path / "j.xml").exists()


# ----------------------------------------------------------------------------- the edges: tolerance, nulls, NaN


def test_between_uses_the_comparators_tolerance(tmp_path):
    """An interval ending 1e-13 short of a ``between`` range's end touches it (the 1e-12 slack of the
    other comparators): BLIND, as ``>=`` at the same end says, never FAIL."""
    card = planted_card(validity__metrics__R={"value": 0.3, "ci": [0.2, 0.40 - 1e-13]})
    assert _outcomes(tmp_path, ["R >= 0.40", "R between 0.40 and 0.9"], card)[0] == ["BLIND", "BLIND"]
    card = planted_card(validity__metrics__R={"value": 0.95, "ci": [0.9 + 1e-13, 0.99]})
    assert _outcomes(tmp_path, ["R <= 0.90", "R between 0.40 and 0.9"], card)[0] == ["BLIND", "BLIND"]
    card = planted_card(validity__metrics__R={"value": 0.3, "ci": [0.2, 0.40 - 1e-9]})     # clearly short: FAIL
    assert _outcomes(tmp_path, ["R between 0.40 and 0.9"], card)[0] == ["FAIL"]
    card = planted_card(validity__metrics__R={"value": 0.6, "ci": [0.3, 0.95]})            # covers the range
    assert _outcomes(tmp_path, ["R between 0.40 and 0.9"], card)[0] == ["BLIND"]


NAN = float("nan")


@pytest.mark.parametrize("over, bar", [
    ({"world__arms__blind__recall": {"value": None, "ci": None}},
     "world.informed.recall - world.blind.recall >= 0.1"),                       # a null value in a difference
    ({"world__arms__informed__recall": {"value": None, "ci": [0.5, 0.7]}},
     "world.informed.recall - world.blind.recall >= 0.1"),
    ({"world__arms__informed__recall": {"value": 0.6, "ci": [NAN, 0.7]}}, "world.informed.recall >= 0.1"),
    ({"world__arms__informed__recall": {"value": 0.6, "ci": [0.5, 0.7], "n": NAN, "unit": "group"}},
     "world.informed.recall >= 0.1"),                                           # a NaN unit count
    ({"loop__numbers": {"units.n_units": NAN}}, "loop.informed.net >= 0"),
    ({"loop__regulators": {"informed": {"net": NAN, "ci": [NAN, NAN]}}}, "loop.informed.net >= 0"),
    ({"vp__rows": [{"set": "s", "mode": "item", "n": NAN, "a_imp": 0.1, "a_imp_ci": [0.0, 0.2]}]}, "vp.a_imp <= 0.3"),
    ({"vp__rows": [{"set": "s", "mode": "item", "n": 300, "a_imp": None, "a_imp_ci": [0.0, 0.2]}]}, "vp.a_imp <= 0.3"),
    ({"validity__metrics__R": {"value": NAN, "ci": [0.3, NAN]}}, "R >= 0.1"),
    ({"validity__metrics__R": None}, "R >= 0.1"),
    ({"validity__metrics__S": {"value": None, "ci": None}}, "R >= 0.1 at S >= 0.9"),
    ({"extra": {"kappa": NAN, "kappa_ci": [0.2, 0.4]}}, "extra.kappa >= 0.1"),     # the generic path: NaN value
    ({"extra": {"kappa": 0.3, "kappa_ci": [NAN, 0.4]}}, "extra.kappa >= 0.1"),     # … and a NaN interval end
    ({"extra": {"kappa": {"value": 0.3, "ci": [0.2, None]}}}, "extra.kappa >= 0.1"),
])
def test_null_values_nan_ends_and_counts_give_blind_never_a_crash(tmp_path, over, bar):
    p = _policy(tmp_path, f"min_units: 1\nbars:\n  - {json.dumps(bar)}\n")
    r = evaluate(load_policy(p), planted_card(**over))
    assert r.outcome == "BLIND", r.to_dict()
    assert all(c.outcome == "BLIND" for c in r.bars[0].checks)


def test_a_difference_needs_one_reading_on_each_side(tmp_path):
    got, r = _outcomes(tmp_path, ["vp.a_imp - world.blind.recall <= 0.5", "world.blind.recall - vp.a_imp >= -0.5",
                                  "vp.llmbar.a_imp - world.blind.recall <= 0.5"])
    assert got == ["BLIND", "BLIND", "PASS"]
    assert "one reading on each side" in r.bars[0].checks[0].why
    assert "one reading on each side" in r.bars[1].checks[0].why


def test_a_bar_the_s_floor_implies_is_blind(tmp_path):
    """τ is re-selected in every resample subject to S ≥ the floor (0.90 here) where one reaches it, so S's
    interval ends below 0.90 (the control flip rate's above 0.10) only when too many resamples find no such τ: those
    bars do not measure the judge, and are BLIND whatever the judge; a stricter bar is judged on its interval."""
    card = planted_card(validity__metrics__control_flip_rate={"value": 0.05, "ci": [0.03, 0.08]})
    got, r = _outcomes(tmp_path, ["control_flip_rate <= 0.10", "validity.control_flip_rate < 0.2", "S >= 0.90",
                                  "S > 0.5", "control_flip_rate <= 0.09", "S >= 0.91", "S <= 0.99"], card)
    assert got == ["BLIND", "BLIND", "BLIND", "BLIND", "PASS", "PASS", "PASS"]
    assert "implied by the run's S floor 0.9" in r.bars[0].checks[0].why
    assert "upper end goes above 0.1 only when" in r.bars[0].checks[0].why
    fixed = planted_card(validity__tau_in_bootstrap="fixed",
                         validity__metrics__control_flip_rate={"value": 0.05, "ci": [0.03, 0.08]})
    assert _outcomes(tmp_path, ["control_flip_rate <= 0.10"], fixed)[0] == ["PASS"]     # τ held: not capped
    low = planted_card(validity__interpretable=False,
                       validity__metrics__control_flip_rate={"value": 0.3, "ci": [0.2, 0.4]})
    assert _outcomes(tmp_path, ["control_flip_rate <= 0.10"], low)[0] == ["FAIL"]      # no τ reaches the floor
