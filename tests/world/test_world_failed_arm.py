"""A judge that failed in one arm is never a clean result: a ``structural:api`` judge whose informed arm gets
no readable NLI reply (the local test server answers those prompts with text naming no label) while its
blind arm succeeds makes ``world run`` exit 1 naming the judge and the arm, unless ``--allow-failures``; the
per-arm counts are in result.json and the report."""

from __future__ import annotations

import json
import sys
import types

import pytest
from typer.testing import CliRunner
from world_fixtures import tiny_items

from judgeaudit.cli import app
from judgeaudit.runtime.failures import summarise

JUDGE = "structural:api:openai/fake-nli"
WORLD_SENTENCES = [s.strip() + "." for it in tiny_items() if it.world for s in it.world.split(".") if s.strip()]


def nli_responder(prompt: str) -> str:
    """A label for every pair, except a pair whose premise is a world sentence: text naming no label."""
    if any(s in prompt for s in WORLD_SENTENCES):
        return "I cannot tell from this."
    return "neutral"


@pytest.fixture
def world(monkeypatch, fake_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")     # the fake server ignores it
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    srv = fake_server(responder=nli_responder)

    def run(out, *extra):
        return CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", JUDGE, "--api-base",
                                        srv.base_url, "--votes", "1", "--bootstrap", "20", "--permutations", "9",
                                        "--retries", "0", "--out", str(out), *extra])
    return run, srv


def test_an_informed_arm_that_failed_on_every_call_fails_the_run_naming_judge_and_arm(tmp_path, world):
    run, srv = world
    r = run(tmp_path / "w")
    assert srv.requests, "the informed arm asked the server"
    assert r.exit_code == 1, r.output
    err = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert len(err) == 1, r.output
    assert f"judge {JUDGE!r} produced no usable verdict in its informed arm: 8 of 8 calls failed" in err[0]
    assert "gave no probability" in err[0]
    assert f"{JUDGE} [informed]: 8 calls, 8 failed" in r.output           # the per-arm line beside the judge's
    res = json.loads((tmp_path / "w" / "result.json").read_text())
    by_arm = res["calls_by_arm"][JUDGE]
    assert (by_arm["blind"]["usable"], by_arm["blind"]["calls"]) == (8, 8)
    assert (by_arm["informed"]["usable"], by_arm["informed"]["failed_calls"]) == (0, 8)
    assert res["calls"][JUDGE]["usable"] == 8                            # the judge as a whole had usable verdicts
    html = (tmp_path / "w" / "report.html").read_text()
    assert "Judge calls by arm" in html
    assert f"Judge {JUDGE} produced no usable verdict in its informed arm (8 of 8 calls failed" in html
    md = (tmp_path / "w" / "report.md").read_text()
    assert f"Judge {JUDGE} produced no usable verdict in its informed arm" in md


def test_allow_failures_keeps_going_with_a_warning(tmp_path, world):
    run, _ = world
    r = run(tmp_path / "w", "--allow-failures")
    assert r.exit_code == 0, r.output
    assert f"warning: judge {JUDGE!r} produced no usable verdict in its informed arm" in r.output
    assert "kept going (--allow-failures)" in r.output


def test_per_part_counts_and_the_failure_line():
    from judgeaudit.records import Verdict

    def v(rid, judge, ok=True, error=None):
        return Verdict(call_key=f"{judge}/{rid}", request_id=rid, judge_id=judge, parse_ok=ok, error=error)

    vs = [v("a::blind", "j"), v("b::blind", "j"), v("a::informed", "j", False, "500"),
          v("b::informed", "j", False), v("a::blind", "k"), v("a::informed", "k")]
    s = summarise(vs, part=lambda rid: rid.rpartition("::")[2], part_name="arm")
    assert s.to_dict()["j"]["informed"] == {"calls": 2, "failed_calls": 1, "parse_failures": 1, "usable": 0,
                                            "reasons": ["500", "unparseable: no answer"]}
    assert s.to_dict()["k"]["informed"]["usable"] == 1
    assert s.failure_line() == ("judge 'j' produced no usable verdict in its informed arm: 1 of 2 calls failed, "
                                "1 unparseable; first error: 500")
    assert summarise(vs).failure_line() is None                          # per judge, nothing looked wrong
    assert s.without(["j"]).failure_line() is None
