"""``judgeaudit gate``: the three outcomes on planted cards, the interval rules, the summaries, bad
policy files, and a gate on a validity run fed by replayed verdicts (no model call)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
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
                     "metrics": {"S": metric(0.95, 0.92, 0.97), "R": metric(0.42, 0.36, 0.48),
                                 "R_scope": metric(0.60, 0.52, 0.68), "R_strength": metric(0.20, 0.13, 0.27),
                                 "gap": metric(0.40, 0.29, 0.50)}},
        "cap": {"measured": False, "not_measured": "not measured — run: judgeaudit cap run …"},
        "vp": {"measured": True, "rows": [
            {"set": "llmbar", "mode": "item", "n": 400, "a_imp": 0.08, "a_imp_ci": [0.03, 0.13]},
            {"set": "mtbench", "mode": "item", "n": 300, "a_imp": 0.18, "a_imp_ci": [0.10, 0.26]}]},
        "world": {"measured": True, "arms": {"blind": {"recall": metric(0.30, 0.22, 0.38)},
                                             "informed": {"recall": metric(0.62, 0.55, 0.69)}},
                  "numbers": {"arms.blind.n": 120, "arms.informed.n": 120}},
        "loop": {"measured": True, "regulators": {"informed": {"net": 4.0, "ci": [-2.0, 9.0]}}, "numbers": {}},
    }
    for path, value in over.items():
        node = sections
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return {"judge": "api:openai/gpt-4.1-mini", "sections": sections}


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
    assert diff.ci == pytest.approx((0.55 - 0.38, 0.69 - 0.22)) and diff.n == 120
    assert [c.outcome for c in by["vp.a_imp <= 0.2"].checks] == ["PASS", "BLIND"]
    assert "not measured" in by["cap.llmbar.overall >= 0.7"].checks[0].why
    assert "not at S >= 0.96" in by["R >= 0.30 at S >= 0.96"].checks[0].why


def test_the_gate_takes_the_worst_bar(tmp_path):
    assert _outcomes(tmp_path, ["R >= 0.30", "S >= 0.9"])[1].outcome == "PASS"
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
    assert "336 units, fewer than the 500" in r.bars[0].checks[0].why
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


@pytest.fixture(scope="module")
def replayed_validity_run(tmp_path_factory):
    """A validity run of two planted judges fed entirely by a replay file (no model call): 'perfect'
    flips on every construct edit, 'scope_only' on scope edits only."""
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.probes.taxonomy import SLOT_BY_NAME
    from judgeaudit.records import probes_frame

    root = tmp_path_factory.mktemp("gate_replay")
    lines = bundled_probes_path().read_text(encoding="utf-8").splitlines()[:48]     # the first 4 base items
    (root / "probes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    probes = probes_frame(read_probes(root / "probes.jsonl"))
    rows = []
    for judge in ("perfect", "scope_only"):
        rows += [{"judge_id": judge, "request_id": b, "score": 2.0} for b in probes["base_id"].unique()]
        for r in probes.itertuples():
            axis = SLOT_BY_NAME[r.slot].axis
            moves = axis != "control" and (judge == "perfect" or axis == "scope")
            rows.append({"judge_id": judge, "request_id": r.probe_id, "score": 8.0 if moves else 2.0})
    replay = root / "verdicts.csv"
    pd.DataFrame(rows).to_csv(replay, index=False)
    code, out = _invoke(["validity", "run", "--probes", root / "probes.jsonl", "--judge", f"replay:{replay}", "--bootstrap", 50,
                         "--regrade", 0, "--out", root / "run"])
    assert code == 0, out
    assert json.loads((root / "run" / "result.json").read_text())["answers"]["replayed"] > 0
    return root / "run"


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
    ("R >= 0.3", {"validity__n": {"construct_edits": "many"}}, "sections.validity.n.construct_edits"),
    ("world.blind.recall >= 0.2", {"world__arms": ["blind"]}, "sections.world.arms"),
    ("world.blind.recall >= 0.2", {"world__arms__blind": "0.3"}, "sections.world.arms.blind"),
    ("world.blind.recall >= 0.2", {"world__numbers": {"arms.blind.n": "x"}}, "sections.world.numbers.arms.blind.n"),
    ("vp.llmbar.a_imp <= 0.2", {"vp__rows": {"set": "llmbar"}}, "sections.vp.rows"),
    ("vp.llmbar.a_imp <= 0.2", {"vp__rows": ["llmbar"]}, "sections.vp.rows"),
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
