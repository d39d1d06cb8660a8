"""``loop run`` against the local fake server: the feedback votes' temperature, a judge whose every
report is unparseable (counted, shown, exit 1 unless --allow-failures), the bounds checked before
the first call, and ``loop worlds`` reading the set-spec grammar of ``world run``."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer
from scripted import Constant
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError

REVIEW = "You are reviewing a response."
COMMA = json.dumps({"defects": [{"quote": "x", "reason": "uses a comma", "severity": 2}]})


def _reply(garbage: bool):
    def reply(prompt: str) -> str:
        if prompt.startswith(REVIEW):
            return "I think the response is fine." if garbage else COMMA
        prev = prompt.split("Your previous response:\n<<<\n", 1)
        return prev[1].split("\n>>>", 1)[0].replace(",", "") if len(prev) == 2 else "x"
    return reply


def _loop(srv, d, out, *extra):
    return ["loop", "run", "--task", "ifeval", "--data", str(d), "--responder", "api:openai/fake-responder",
            "--judge", "api:openai/fake-judge", "--api-base", srv.base_url, "--regulator", "control",
            "--regulator", "blind", "--votes", "1", "--bootstrap", "20", "--out", str(out), *extra]


def _temperatures(srv) -> tuple[set, set]:
    judge = {b.get("temperature") for b in srv.requests if b["messages"][0]["content"].startswith(REVIEW)}
    other = {b.get("temperature") for b in srv.requests if not b["messages"][0]["content"].startswith(REVIEW)}
    return judge, other


def test_feedback_votes_are_sampled_at_temperature_0_3_by_default_and_settable(ifeval_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer(responder=_reply(False)) as srv:
        r = CliRunner().invoke(app, _loop(srv, ifeval_dir, tmp_path / "a"))
        assert r.exit_code == 0, r.output
        assert _temperatures(srv) == ({0.3}, {0.0})        # votes at 0.3 (§3.4); the responder as its backend
        srv.requests.clear()
        r = CliRunner().invoke(app, _loop(srv, ifeval_dir, tmp_path / "b", "--temperature", "0.7"))
        assert r.exit_code == 0, r.output
        assert _temperatures(srv) == ({0.7}, {0.0})
    assert json.loads((tmp_path / "b" / "result.json").read_text())["temperature"] == 0.7


def test_every_report_unparseable_is_counted_shown_and_exits_non_zero(ifeval_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "o"
    with FakeServer(responder=_reply(True)) as srv:
        r = CliRunner().invoke(app, _loop(srv, ifeval_dir, out))
        assert r.exit_code == 1, r.output
        # the judge-calls summary counts the 4 unparsed report votes as parse failures, as for any form
        assert "api:openai/fake-judge: 4 calls, 0 failed, 4 parse failures" in r.output
        assert "blind: no usable report; report votes 4: 0 failed, 4 parse failures, 0 usable" in r.output
        assert "regulator(s) blind had no usable report" in r.output
        res = json.loads((out / "result.json").read_text())      # written before the exit: nothing lost
        assert res["judge_calls"]["blind"] == {"calls": 4, "failed_calls": 0, "parse_failures": 4, "usable": 0,
                                               "reasons": ["unparseable: answer 'I think the response is fine.'"]}
        assert res["calls"]["api:openai/fake-judge"]["usable"] == 0      # what the validity card reads
        assert res["no_usable_report"] == ["blind"] and res["regulators"]["blind"]["status"] == "no usable report"
        html = (out / "report.html").read_text()
        assert "blind: no usable report — every one of its 4 judge votes failed (0) or did not parse (4)" in html
        ok = CliRunner().invoke(app, _loop(srv, ifeval_dir, tmp_path / "p", "--allow-failures"))
        assert ok.exit_code == 0 and "kept going (--allow-failures)" in ok.output


def test_an_experiment_file_says_and_exits_as_the_command_does(ifeval_dir, tmp_path, monkeypatch):
    """``judgeaudit run`` on an ``analysis: loop`` file runs what ``loop run`` runs: each arm's counts on the
    terminal, and the arm with no usable report named, exit 1 (``allow_failures: true``: a warning, exit 0)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer(responder=_reply(True)) as srv:
        def run(name: str, *extra: str):
            exp = tmp_path / f"{name}.yaml"
            exp.write_text("\n".join([
                "analysis: loop", f"out: {name}", "task: ifeval", f"data: {ifeval_dir}",
                "responder: api:openai/fake-responder", "judge: api:openai/fake-judge", f"api_base: {srv.base_url}",
                "regulators: [control, blind]", "votes: 1", "bootstrap: 20", *extra]) + "\n")
            return CliRunner().invoke(app, ["run", str(exp)])

        r = run("o")
        assert r.exit_code == 1, r.output
        assert "blind: no usable report; report votes 4: 0 failed, 4 parse failures, 0 usable" in r.output
        assert "error: regulator(s) blind had no usable report" in r.output
        assert f"→ {tmp_path / 'o'}/result.json, {tmp_path / 'o'}/report.html" in r.output
        assert json.loads((tmp_path / "o" / "result.json").read_text())["no_usable_report"] == ["blind"]
        ok = run("p", "allow_failures: true")
        assert ok.exit_code == 0, ok.output
        assert "warning: regulator(s) blind had no usable report" in ok.output and "kept going" in ok.output


def test_the_card_says_the_loop_judge_gave_no_usable_report(ifeval_dir, tmp_path):
    from judgeaudit.commands.loop import run_loop_command

    judge = Constant("no JSON here")
    run_loop_command(task="ifeval", data=ifeval_dir, initial="shipped", responder="reference:echo", judge=judge,
                     regulators=["blind", "informed"], out=tmp_path / "loop", votes=2, bootstrap=0, progress=False)
    out = tmp_path / "card"
    r = CliRunner().invoke(app, ["card", "--judge", judge.id, "--from", str(tmp_path / "loop"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    s = json.loads((out / "card.json").read_text())["sections"]["loop"]
    # the loop ran, so it is not "not measured"; but no arm's net is the judge's: each says why, and the card
    # says the judge gave no usable verdict
    from judgeaudit.loop.engine import NO_USABLE_REPORT

    assert s["measured"] and "gave no usable verdict" in s["judge_unusable"]
    assert s["regulators"] and all(g["net"] is None and g["status"] == NO_USABLE_REPORT
                                   for g in s["regulators"].values())


def _err(argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    assert isinstance(r.exception, InputError), r.output
    return str(r.exception)


def test_rounds_and_votes_are_bounded_before_the_first_call(ifeval_dir, tmp_path):
    from judgeaudit.validate import MAX_ROUNDS, MAX_VOTES

    base = ["loop", "run", "--task", "ifeval", "--data", ifeval_dir, "--responder", "api:openai/never-called",
            "--judge", "api:openai/never-called", "--regulator", "blind", "--out", tmp_path / "o"]
    assert f"must be between 1 and {MAX_ROUNDS}, got 1000000" in _err(base + ["--rounds", "1000000"])
    assert "--rounds" in _err(base + ["--rounds", "1000000"])
    assert f"must be between 1 and {MAX_VOTES}, got 1000" in _err(base + ["--votes", "1000"])
    assert "--temperature" in _err(base + ["--temperature", "-1"])
    assert not (tmp_path / "o").exists()


def test_planned_calls_are_an_upper_bound_known_before_the_run():
    from judgeaudit.loop.engine import planned_calls
    from judgeaudit.loop.regulators import get_regulator

    regs = [get_regulator(n) for n in ("control", "blind", "informed_once", "two_agree", "hidden", "certificate")]
    # blind 3 votes, informed_once 1, two_agree 2 channels × 3, hidden 3 (+ one rewrite per item)
    assert planned_calls(regs, 10, 2, 3) == {"judge": (3 + 1 + 6 + 3) * 10 * 2 + 10, "revisions": 6 * 10 * 2}


@pytest.mark.data
def test_loop_worlds_reads_the_world_set_spec_grammar(tmp_path, data_dir):
    from judgeaudit.commands.loop import run_worlds_command

    spec = f"halueval:{data_dir / 'halueval'}"
    a = run_worlds_command(set_=f"{spec}?part=qa", agent=Constant("Arthur's Magazine"), out=tmp_path / "a",
                           max_items=6, progress=False)
    b = run_worlds_command(set_=spec, agent=Constant("Arthur's Magazine"), out=tmp_path / "b", max_items=6,
                           progress=False)
    assert a["worlds"] == b["worlds"] and a["n_items"] == 6
    # the result read back through its type keeps every key; a key renamed in a world is an error naming it
    from judgeaudit.loop.schema import LoopWorldsFile

    raw = json.loads((tmp_path / "a" / "result.json").read_text())
    run = LoopWorldsFile.read(tmp_path / "a")
    assert run.to_json() == raw and run.run_id == raw["run_id"]
    assert {w: (x.correct, x.n) for w, x in run.worlds.items()} == {w: (x["correct"], x["n"])
                                                                   for w, x in a["worlds"].items()}
    w0 = next(iter(raw["worlds"]))
    renamed = {k: v for k, v in raw["worlds"][w0].items() if k != "accuracy"} | {"acc": 0.0}
    with pytest.raises(InputError, match="not a loop worlds result") as e:
        LoopWorldsFile.of({**raw, "worlds": {**raw["worlds"], w0: renamed}}, path="r.json")
    assert e.value.field == f"worlds.{w0}.accuracy"
    with pytest.raises(InputError, match="not part='dialogue'"):
        run_worlds_command(set_=f"{spec}?part=dialogue", agent=Constant("x"), out=tmp_path / "c")
    with pytest.raises(InputError, match="unsupported option"):
        run_worlds_command(set_=f"{spec}?part=qa&threshold=2", agent=Constant("x"), out=tmp_path / "c")


def test_demo_loop_sections_say_an_all_unparsed_regulator_had_no_usable_report(ifeval_dir, tmp_path):
    # the demo's loop step renders loop_sections of this run (default_runs.LOOP_REGULATORS, votes 1)
    from judgeaudit.commands.loop import run_loop_command
    from judgeaudit.commands.default_runs import LOOP_REGULATORS
    from judgeaudit.report.loop import loop_sections, summary_frame

    r = run_loop_command(task="ifeval", data=ifeval_dir, initial="shipped", responder="reference:echo",
                         judge=Constant("Sure! The response looks good."), regulators=list(LOOP_REGULATORS),
                         out=tmp_path / "o", votes=1, bootstrap=0, progress=False)
    assert r["no_usable_report"] == ["blind", "informed"]
    rows = summary_frame(r).set_index("regulator")
    assert rows.loc["blind", "fixed"] == "no usable report" and rows.loc["blind", "parse failures"] == 4
    assert rows.loc["blind"].isna()["net"] and not rows.loc["control"].isna()["net"]   # no +0.000 shown
    head, _, diffs, _ = loop_sections(r)
    assert head.banners[:2] == [f"!{n}: no usable report — every one of its 4 judge votes failed (0) or did not "
                                "parse (4); its fixed/broken/net are no finding" for n in ("blind", "informed")]
    assert "blind" not in diffs.body.split("Spearman")[0] and "control - certificate" in diffs.body


def test_a_default_run_keeps_going_and_says_why_without_naming_a_flag_nobody_passed(tmp_path, capfd):
    """``card --run-missing`` and the demo run the loop through its command with failures allowed: the warning says
    a default run went on, not that the user passed ``--allow-failures``."""
    from judgeaudit.commands.default_runs import DEFAULT_RUNS

    judge = Constant("no JSON here")
    r = DEFAULT_RUNS["loop"].run([judge], tmp_path / "loop", tmp_path / "calls.sqlite", 0, votes=1)
    said = " ".join(capfd.readouterr().err.split())     # the command's console: stderr, wrapped at its width
    assert r.no_usable_report and "had no usable report" in said
    assert "kept going (a default run: the card or demo records it)" in said and "--allow-failures" not in said
