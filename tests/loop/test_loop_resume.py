"""A loop against the local fake server, killed mid-round and resumed, buys no completed call twice;
every task runs end to end from the CLI with every regulator."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakeserver import FakeServer, HoldAfter
from testkit import stored_ok

COMMA = json.dumps({"defects": [{"quote": "x", "reason": "uses a comma", "severity": 2}], "violated":
                    ["punctuation:no_comma"], "score": 3})


def _reply(prompt: str) -> str:
    if prompt.startswith("You are reviewing a response."):
        return COMMA
    if prompt.startswith("Rewrite the following user request"):
        return "Write something."
    prev = prompt.split("Your previous response:\n<<<\n", 1)
    return prev[1].split("\n>>>", 1)[0].replace(",", "") + " ok" if len(prev) == 2 else "A: 18"


def _settled(srv: FakeServer) -> int:
    """How many calls the server has answered, once that count has stopped moving (0.5 s unchanged)."""
    last = -1
    while (now := sum(srv.answered.values())) != last:
        last = now
        time.sleep(0.5)
    return now


def _ifeval(tmp_path: Path, n: int) -> Path:
    d = tmp_path / "ifeval"
    d.mkdir()
    with (d / "input_data.jsonl").open("w") as fh, (d / "input_response_data_x.jsonl").open("w") as fr:
        for k in range(n):
            fh.write(json.dumps({"key": k, "prompt": f"Prompt {k}.", "instruction_id_list": ["punctuation:no_comma"],
                                 "kwargs": [{}]}) + "\n")
            fr.write(json.dumps({"prompt": f"Prompt {k}.", "response": f"item {k}, with a comma"}) + "\n")
    return d


def test_killed_mid_round_and_resumed_buys_nothing_twice(tmp_path, cli_main, monkeypatch):
    """The killed run is a real ``judgeaudit`` process; the rerun is the same command line in this process."""
    data = _ifeval(tmp_path, 20)
    out, db = tmp_path / "out", tmp_path / "calls.sqlite"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    env = {**os.environ}
    hold = HoldAfter(40, _reply)    # requests after the 40th wait for the kill: it lands mid-run on any machine
    with FakeServer(responder=hold, latency=0.03) as srv:
        args = [sys.executable, "-m", "judgeaudit.cli", "loop", "run", "--task", "ifeval", "--data", str(data),
                "--initial", "shipped", "--responder", "api:openai/fake-responder", "--judge", "api:openai/fake-judge",
                "--api-base", srv.base_url, "--regulator", "blind", "--regulator", "informed", "--rounds", "2",
                "--votes", "1", "--concurrency", "4", "--bootstrap", "50", "--store", str(db), "--out", str(out)]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 600
        while stored_ok(db) < 30 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        hold.release()
        answered_before = _settled(srv)   # the server finishes answering what was in flight at the kill
        before = stored_ok(db)
        assert 30 <= before < 120, "the kill must land mid-run"
        srv.latency = 0   # nothing kills the rerun
        again = cli_main(*args[3:])
        assert again.returncode == 0, again.stderr
        total = stored_ok(db)
        # 2 arms x 2 rounds x 20 items judged (the world block makes the arms' prompts differ) + 2 rounds x
        # 20 revisions (the two arms send byte-identical revision requests, so they share those calls)
        assert total == 2 * 2 * 20 + 2 * 20
        # the rerun bought exactly the calls the store lacked: none completed before the kill again
        assert sum(srv.answered.values()) - answered_before == total - before
    r = json.loads((out / "result.json").read_text())
    # every response had a comma: the judge flags it, the responder removes it → all 40 fixed
    assert r["regulators"]["blind"]["fixed"] == 20 and r["regulators"]["blind"]["broken"] == 0
    assert r["before"] == {"pass_rate": 0.0, "loose_pass_rate": 0.0, "n_units": 20, "n_responses": 20}


REGULATORS = ["control", "blind", "informed", "typed", "certificate", "informed_once", "two_agree", "score",
              "world_none",
              "world_half", "world_full", "throttle_1", "throttle_3", "throttle_all", "goal_good",
              "goal_constraints", "second_blind", "second_informed"]


@pytest.mark.parametrize("task,data,initial", [
    ("ifeval", "ifeval", "shipped"),
    ("gsm8k", "gsm8k", "shipped"),
    ("halueval_qa", "halueval", "api:openai/gpt-4o-mini"),
])
def test_every_task_runs_with_every_regulator(tmp_path, data_dir, monkeypatch, task, data, initial):
    from judgeaudit.commands.loop import run_loop_command

    regs = REGULATORS + (["hidden"] if task == "ifeval" else [])
    with FakeServer(responder=_reply) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        r = run_loop_command(task=task, data=data_dir / data, initial=initial, responder="api:openai/gpt-4o-mini",
                             judge="api:openai/gpt-4o-mini", judge2="api:openai/claude-haiku-4-5",
                             regulators=regs, out=tmp_path / "o", rounds=2, votes=1, max_items=4, bootstrap=50,
                             api_base=srv.base_url, progress=False)
    assert set(r["regulators"]) == set(regs)
    assert r["before"]["n_responses"] == 4
    assert (tmp_path / "o" / "report.html").stat().st_size > 10000
    for name, x in r["regulators"].items():
        assert len(x["rounds"]) == 2, name
        assert x["net"] == pytest.approx((x["fixed"] - x["broken"]) / r["before"]["n_units"]), name
