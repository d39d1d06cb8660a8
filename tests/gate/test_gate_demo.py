"""The gate's three outcomes on the demo's runs: ``judgeaudit.demo.run_demo`` itself writes the demo's run
folders (validity, validation_power, world, loop) and card at ``--full`` sizes (the cut demo's world slice has 7
questions, fewer than pass.yaml's world bars need), with the planted judge of ``planted_demo`` in
place of the embedded Gemma judge (and without ``vote:3:local`` and ``reference:similarity``, which load
models), then ``judgeaudit gate`` runs the three example policies of docs/gate/ on them: PASS (exit 0),
FAIL (1) and BLIND (2), each for its reason.

Slow (about a minute on two shared cores): the demo's validation-power step fits the surface-only family on
the public-set slices, most of the fixture's time; the gate runs themselves take well under a second each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from planted_demo import SPEC, planted_backend
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.gate import evaluate, load_policy

pytestmark = pytest.mark.slow

POLICIES = Path(__file__).resolve().parents[2] / "docs" / "gate"
REFERENCES = ["reference:constant", "reference:flip", "reference:length"]


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory) -> Path:
    import judgeaudit.demo as demo
    from judgeaudit.report.html import plotly_mode, set_plotly_mode

    out = tmp_path_factory.mktemp("gate_demo") / "demo-out"
    mode = plotly_mode()
    set_plotly_mode("cdn")                                # small pages: the test reads no page
    try:
        with planted_backend(), pytest.MonkeyPatch.context() as mp:
            mp.setattr(demo, "EMBEDDED", SPEC)
            mp.setattr(demo, "DEMO_JUDGES", [SPEC, *REFERENCES])
            mp.setattr(demo, "WORLD_JUDGES", [SPEC, *demo.WORLD_JUDGES[1:]])
            demo.run_demo(out, n_boot=200, full=True)   # the full world slice: the bars need 30 answers
    finally:
        set_plotly_mode(mode)
    assert {p.name for p in out.iterdir() if p.is_dir()} == {"validity", "validation_power", "world", "loop", "card"}
    return out


@pytest.fixture(scope="module")
def card(demo_out) -> dict:
    c = json.loads((demo_out / "card" / "card.json").read_text())
    assert c["judge"] == SPEC
    return c


def _gate(*argv) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["gate", *map(str, argv)])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


@pytest.mark.parametrize("policy, code, outcome", [("pass", 0, "PASS"), ("fail", 1, "FAIL"), ("blind", 2, "BLIND")])
def test_the_example_policies_give_their_outcome_from_the_card_and_from_the_run_folders(demo_out, tmp_path, policy,
                                                                                        code, outcome):
    path = POLICIES / f"{policy}.yaml"
    got, out = _gate(path, "--card", demo_out / "card" / "card.json", "--junit", tmp_path / "j.xml")
    assert got == code, out
    assert out.startswith("## judgeaudit gate: ") and out.splitlines()[0].endswith(f" {outcome}"), out
    assert f"Judge: `{SPEC}`" in out
    got_from, out_from = _gate(path, "--from", demo_out, "--judge", SPEC)     # the folder of runs, one judge
    assert got_from == code, out_from
    assert out_from == out                                                   # the same card, the same summary


def test_pass_every_interval_clears_its_bar(card):
    r = evaluate(load_policy(POLICIES / "pass.yaml"), card)
    assert r.outcome == "PASS" and r.exit_code == 0
    for b in r.bars:
        (c,) = b.checks
        assert c.outcome == "PASS" and "the interval clears" in c.why, c
        assert b.bar.condition.holds(c.ci[0]) and b.bar.condition.holds(c.ci[1])       # both ends
        assert c.n >= b.bar.min_units                                                   # min_units
    by = {b.bar.quantity: b.checks[0] for b in r.bars}
    s = card["sections"]
    assert by["R"].ci == tuple(s["validity"]["metrics"]["R"]["ci"]) and by["R"].ci[0] > 0.30
    assert s["validity"]["metrics"]["S"]["value"] >= 0.90                           # read at the operating point
    assert by["R"].n == 48 and "(48 base items resampled)" in by["R"].why           # the base items, not edits
    row = next(p for p in s["world"]["paired"] if (p["a"], p["b"], p["metric"]) == ("blind", "informed", "recall"))
    diff = by["world.informed.recall - world.blind.recall"]
    assert diff.ci == pytest.approx(tuple(row["ci"])) and "paired interval" in diff.why   # the run's paired interval
    assert diff.n == 16 and by["world.informed.specificity"].n == 16    # questions with a hallucinated / right answer


def test_fail_an_interval_lies_on_the_wrong_side_of_its_bar(card):
    r = evaluate(load_policy(POLICIES / "fail.yaml"), card)
    assert r.outcome == "FAIL" and r.exit_code == 1
    ruler, sensitivity = r.bars
    assert ruler.outcome == "FAIL"
    wrong = [c for c in ruler.checks if c.outcome == "FAIL"]
    assert {c.label for c in wrong} >= {"vp.a_imp [halueval qa (slice, provenance), item]",
                                        "vp.a_imp [halueval qa (slice, provenance), paired]"}
    assert all(c.ci[0] > 0.30 and "the interval is on the wrong side of <= 0.30" in c.why for c in wrong)
    halueval = next(c for c in wrong if c.label == "vp.a_imp [halueval qa (slice, provenance), item]")
    assert (round(halueval.value, 2), round(halueval.ci[0], 2), round(halueval.ci[1], 2)) == (0.82, 0.75, 0.88)
    assert all(c.outcome != "FAIL" or c.ci[0] > 0.30 for c in ruler.checks)
    (c,) = sensitivity.checks
    assert sensitivity.outcome == "FAIL" and c.ci[1] < 0.90 and "wrong side of >= 0.90" in c.why


def test_blind_each_bar_for_its_reason(card):
    r = evaluate(load_policy(POLICIES / "blind.yaml"), card)
    assert r.outcome == "BLIND" and r.exit_code == 2
    why = {b.bar.quantity: [c.why for c in b.checks] for b in r.bars}
    assert all(b.outcome == "BLIND" for b in r.bars)
    assert why["cap.judgebench_fixture.overall"][0].startswith("not measured — run: judgeaudit cap run")    # no CAP run
    assert why["loop.informed.net"] == ["9 units, fewer than the 30 the bar needs"]                # too few units
    assert why["world.informed.recall - world.blind.recall"] == [
        "16 source items resampled, fewer than the 100 the bar needs"]
    assert why["R"] == ["48 base items resampled, fewer than the 500 the bar needs"]


def test_fail_and_blind_hold_for_every_judge_of_the_demo_runs_and_pass_only_for_the_sensitive_one(demo_out):
    """fail.yaml and blind.yaml do not depend on the judge (the docs say so); pass.yaml does."""
    from judgeaudit.card.sources import collect
    from judgeaudit.commands.card import judges_held
    from judgeaudit.commands.gate import _card_from_runs

    judges = judges_held(collect([demo_out]))
    assert set(judges) == {SPEC, *REFERENCES, "structural:lexical", "reference:oracle", "reference:flag-all",
                           "reference:flag-none"}
    policies = {p: load_policy(POLICIES / f"{p}.yaml") for p in ("pass", "fail", "blind")}
    got = {}
    for j in judges:
        c = _card_from_runs([demo_out], j)
        got[j] = {p: evaluate(pol, c) for p, pol in policies.items()}
        assert got[j]["fail"].outcome == "FAIL" and got[j]["fail"].bars[0].outcome == "FAIL", j
        assert got[j]["blind"].outcome == "BLIND", j
    assert [j for j in judges if got[j]["pass"].outcome == "PASS"] == [SPEC]
    for j in ("reference:flag-all", "reference:flag-none"):
        assert got[j]["pass"].outcome == "FAIL", j                       # a constant world instrument
    length = got["reference:length"]["pass"]
    assert length.outcome == "BLIND" and "straddles >= 0.30" in length.bars[0].checks[0].why
