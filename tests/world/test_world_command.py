from __future__ import annotations

import json
import sys
import types

import pandas as pd
import pytest
from typer.testing import CliRunner
from world_fixtures import oracle_reply, tiny_items

from judgeaudit.commands.world import run_factorial_cmd, run_world_cmd, write_report
from judgeaudit.errors import InputError


@pytest.fixture
def fake_world_set(monkeypatch):
    """A stand-in ``judgeaudit.datasets.world`` (test only) serving the tiny items for spec 'tiny:x'."""
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(items=tuple(tiny_items()),
                                                        provenance={"spec": spec, "files": [], "excluded": {}}) \
        if spec.startswith("tiny:") else (_ for _ in ()).throw(InputError("unknown", field="--set"))
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    return mod


def test_api_path_end_to_end_against_the_fake_server(tmp_path, fake_server, monkeypatch):
    import re

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")

    def responder(prompt):
        # an informed judge: sees the source and calls the answer defective when a year/number in it is absent
        m = re.search(r"Source material:\n(.*?)\n\n", prompt, re.S)
        out = re.search(r"Output:\n(.*?)\n\n", prompt, re.S).group(1)
        if m is None:
            return 'I think it is fine.\n```json\n{"defective": false}\n```'
        nums = re.findall(r"\d+|Cu|Co|Red|Mediterranean", out)
        return json.dumps({"defective": any(not re.search(rf"\b{n}\b", m.group(1)) for n in nums)})

    srv = fake_server(responder=responder)
    r = run_world_cmd("tiny:x", ["api:openai/fake-model"], ["blind", "informed"], out=tmp_path / "o", votes=3,
                      api_base=srv.base_url, n_boot=200, items=tiny_items(), progress=False)
    arms = r.result["judges"]["api:openai/fake-model"]["arms"]
    assert arms["informed"]["balanced_accuracy"] == 1.0 and arms["blind"]["balanced_accuracy"] == 0.5
    p = next(x for x in r.result["paired"] if x["metric"] == "recall")
    assert (p["gain"], p["mcnemar"]["b"], p["mcnemar"]["c"]) == (1.0, 4, 0)
    v = pd.read_parquet(tmp_path / "o" / "verdicts.parquet")
    assert len(v) == 8 * 2 * 3 and v["parse_ok"].all() and v["call_key"].nunique() == 48
    # a rerun is served from the store: no new calls
    before = sum(srv.answered.values())
    assert before == 48
    run_world_cmd("tiny:x", ["api:openai/fake-model"], ["blind", "informed"], out=tmp_path / "o", votes=3,
                  api_base=srv.base_url, n_boot=50, items=tiny_items(), progress=False)
    assert sum(srv.answered.values()) == before
    write_report(r, tmp_path / "o")
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Paired gains" in html and "do not depend on a matcher" in html


def test_cli_run_and_factorial_write_their_files(tmp_path, fake_world_set, monkeypatch):
    from judgeaudit.cli import app
    import judgeaudit.commands.world as W
    from world_fixtures import ScriptedJudge

    monkeypatch.setattr("judgeaudit.commands.common.make_judge",
                        lambda spec, **kw: ScriptedJudge(oracle_reply, spec))
    res = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "reference:oracle", "--arm", "blind",
                                   "--arm", "informed", "--arm", "placebo", "--votes", "2", "--bootstrap", "100",
                                   "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "r" / "result.json").read_text())
    a = out["judges"]["reference:oracle"]["arms"]
    assert a["informed"]["balanced_accuracy"] == 1.0 and a["blind"]["balanced_accuracy"] == 0.5
    assert {"n", "recall", "specificity", "balanced_accuracy", "false_alarms_per_clean", "ci"} <= set(a["blind"])
    assert out["provenance"]["items"] == 8 and (tmp_path / "r" / "report.html").exists()
    res = CliRunner().invoke(app, ["world", "factorial", "--set", "tiny:x", "--judge", "reference:oracle",
                                   "--factors", "question,source", "--votes", "1", "--bootstrap", "0",
                                   "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "f" / "result.json").read_text())
    assert len(out["factorial"]["cells"]) == 4
    assert out["shapley"]["balanced_accuracy"] == pytest.approx({"question": 0.0, "source": 0.5})
    assert "Factorial" in (tmp_path / "f" / "report.html").read_text()
    # bad options: one line, exit 2
    res = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "reference:oracle", "--votes", "0",
                                   "--out", str(tmp_path / "b")])
    assert isinstance(res.exception, InputError) and res.exception.field == "--votes"
    res = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "reference:oracle", "--arm", "nope",
                                   "--out", str(tmp_path / "b")])
    assert isinstance(res.exception, InputError) and "unknown arm" in str(res.exception)
    assert not (tmp_path / "b" / "result.json").exists()
    del W


def test_factorial_instrument_needs_two_judges(tmp_path):
    with pytest.raises(InputError, match="two"):
        run_factorial_cmd("tiny:x", ["a"], "source,instrument", out=tmp_path, items=tiny_items())


def test_generous_matcher_backed_by_a_judge_on_the_fake_server(tmp_path, fake_server, monkeypatch):
    from world_fixtures import ScriptedJudge

    from judgeaudit.analyses.world.matching import read_yes_no

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    real_make = __import__("judgeaudit.commands.common", fromlist=["make_judge"]).make_judge

    def complain(r):   # the judge quotes the whole answer and names the error in its reason
        return json.dumps({"defects": [{"quote": r.text, "reason": "the number is wrong"}]
                           if r.meta["gold"]["defective"] and r.meta["world_shown"] else []})

    monkeypatch.setattr("judgeaudit.commands.common.make_judge",
                        lambda spec, **kw: ScriptedJudge(complain, spec) if spec == "scripted" else real_make(spec, **kw))
    # the matcher model says yes when the complaint's reason mentions a number
    srv = fake_server(responder=lambda p: "Yes." if "number" in p.split("Complaint reason:")[1] else "No")
    r = run_world_cmd("tiny:x", ["scripted"], ["blind", "informed"], out=tmp_path / "o", votes=1, form="defects",
                      n_boot=50, items=tiny_items(), progress=False, matcher_judge="api:openai/matcher",
                      api_base=srv.base_url)
    sp = r.result["judges"]["scripted"]["arms"]["informed"]["spans"]
    # whole-answer quotes: the strict matcher credits them (the segment is inside), the generous one says yes
    assert sp["generous"]["recall"] == 1.0 and sp["generous"]["precision"] == 1.0
    assert sp["disagreement"]["pairs"] == 4 and r.result["matcher_undecided"] == 0
    assert sp["permuted_audit_generous"]["false_match_rate"] == 1.0    # this matcher ignores the segment
    assert (read_yes_no("**Yes**, it does"), read_yes_no("no."), read_yes_no("maybe")) == (True, False, None)
    with pytest.raises(InputError, match="--form defects"):
        run_world_cmd("tiny:x", ["scripted"], ["blind"], out=tmp_path / "p", votes=1, items=tiny_items(),
                      progress=False, matcher_judge="api:openai/matcher", api_base=srv.base_url)


def test_world_run_prints_each_rate_with_its_interval(tmp_path, fake_world_set, monkeypatch, cli_main):
    """The terminal summary carries what the report carries: per judge and arm, each rate as value [lo, hi]."""
    from world_fixtures import ScriptedJudge

    monkeypatch.setattr("judgeaudit.commands.common.make_judge",
                        lambda spec, **kw: ScriptedJudge(oracle_reply, spec))
    r = cli_main("world", "run", "--set", "tiny:x", "--judge", "reference:oracle", "--arm", "blind", "--arm", "informed",
                 "--votes", "2", "--bootstrap", "100", "--out", tmp_path / "r")
    assert r.returncode == 0, r.stderr
    arms = json.loads((tmp_path / "r" / "result.json").read_text())["judges"]["reference:oracle"]["arms"]
    printed = r.stdout + r.stderr
    for arm, a in arms.items():
        line = next(x for x in printed.splitlines() if x.startswith(f"reference:oracle · {arm}: "))
        for name, key in (("balanced accuracy", "balanced_accuracy"), ("recall", "recall"),
                          ("specificity", "specificity")):
            lo, hi = a["ci"][key]
            assert f"{name} {a[key]:.3f} [{lo:.3f}, {hi:.3f}]" in line, (arm, key, line)
        assert f"n = {a['n']}: {a['n_defective']} defective, {a['n_clean']} clean" in line
