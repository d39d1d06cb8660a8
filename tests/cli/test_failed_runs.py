"""A run whose judge produced no usable verdict fails (exit 1, one line naming the judge and the first
error) and still writes what it computed; ``--allow-failures`` keeps going; the counts are exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from judgeaudit.probes.io import bundled_probes_path

REFUSAL = "invalid option: top_k is not supported"
JUDGE = "api:openai/fake-judge"


def _subprocess(*args):
    """The real entry point (one test keeps it); the others run the command line in this process."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stderr, p.stdout


@pytest.fixture
def _run(cli_main, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def run(*args):
        p = cli_main(*args)
        return p.returncode, p.stderr, p.stdout

    return run


def _items(tmp_path, n):
    f = tmp_path / "items.jsonl"
    f.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                         for i in range(n)))
    return f


def _probes(tmp_path):
    probes = bundled_probes_path().read_text().splitlines()[:24]     # two base items
    f = tmp_path / "probes.jsonl"
    f.write_text("".join(p + "\n" for p in probes))
    return f


def _last_line(err: str) -> str:
    return [ln for ln in err.splitlines() if ln.strip()][-1]


def test_judge_every_call_refused_exits_1_and_keeps_the_verdicts(tmp_path, fake_server, _run):
    srv = fake_server()
    srv.fault("400", times=1000, message=REFUSAL)
    items, out = _items(tmp_path, 3), tmp_path / "out"
    args = ["judge", "--judge", JUDGE, "--api-base", srv.base_url, "--input", str(items), "--out", str(out),
            "--retries", "0"]
    rc, err, _ = _subprocess(*args)
    assert rc == 1, err
    last = _last_line(err)
    assert last.startswith(f"error: judge '{JUDGE}' produced no usable verdict: 3 of 3 calls failed")
    assert REFUSAL in last and "Traceback" not in err
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == 3          # nothing computed is lost
    calls = json.loads((out / "result.json").read_text())["calls"][JUDGE]
    assert (calls["calls"], calls["failed_calls"], calls["parse_failures"], calls["usable"]) == (3, 3, 0, 0)
    assert len(calls["reasons"]) == 1 and REFUSAL in calls["reasons"][0]

    rc, err, _ = _run(*args, "--allow-failures")
    assert rc == 0, err
    assert f"{JUDGE}: 3 calls, 3 failed, 0 parse failures" in err
    assert json.loads((out / "result.json").read_text())["calls"][JUDGE]["failed_calls"] == 3


def test_judge_with_a_model_that_cannot_load(tmp_path, _run):
    items, out = _items(tmp_path, 2), tmp_path / "out"
    rc, err, _ = _run("judge", "--judge", "hf:/nonexistent", "--input", str(items), "--out", str(out))
    assert rc == 1, err
    last = _last_line(err)
    assert "judge 'hf:/nonexistent' produced no usable verdict: 2 of 2 calls failed" in last
    assert "cannot load Hugging Face model" in last or "need torch and transformers" in last
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == 2


def test_partial_failures_are_counted_exactly(tmp_path, fake_server, _run):
    srv = fake_server(responder=lambda p: "Score: 6")
    srv.fault("400", times=2, message=REFUSAL)
    srv.fault("garbage", times=1)
    items, out = _items(tmp_path, 5), tmp_path / "out"
    rc, err, _ = _run("judge", "--judge", JUDGE, "--api-base", srv.base_url, "--input", str(items),
                      "--out", str(out), "--retries", "0", "--concurrency", "1")
    assert rc == 0, err                                           # two usable verdicts: the run stands
    assert f"{JUDGE}: 5 calls, 2 failed, 1 parse failures; first reasons: " in err
    calls = json.loads((out / "result.json").read_text())["calls"][JUDGE]
    assert (calls["calls"], calls["failed_calls"], calls["parse_failures"], calls["usable"]) == (5, 2, 1, 2)
    assert len(calls["reasons"]) == 2 and REFUSAL in calls["reasons"][0]
    assert calls["reasons"][1].startswith("unparseable")


def test_validity_run_with_a_failing_judge(tmp_path, fake_server, _run):
    srv = fake_server()
    srv.fault("400", times=1000, message=REFUSAL)
    out = tmp_path / "out"
    args = ["validity", "run", "--probes", str(_probes(tmp_path)), "--judge", JUDGE, "--judge", "reference:constant",
            "--api-base", srv.base_url, "--bootstrap", "50", "--regrade", "4", "--out", str(out)]
    rc, err, _ = _run(*args)
    assert rc == 1, err
    last = _last_line(err)
    assert last.startswith(f"error: judge '{JUDGE}' produced no usable verdict: 30 of 30 calls failed")
    assert REFUSAL in last
    res = json.loads((out / "result.json").read_text())            # written before the run failed
    assert res["calls"][JUDGE]["failed_calls"] == 30 and res["calls"]["reference:constant"]["usable"] == 30
    assert res["judges"][JUDGE]["errors"] == 30
    assert len(pd.read_parquet(out / "verdicts.parquet")) == 60
    assert (out / "report.html").is_file()
    html = (out / "report.html").read_text()
    assert "failed calls" in html

    rc, err, stdout = _run(*args, "--allow-failures")
    assert rc == 0, err
    assert f"{JUDGE}: 30 calls, 30 failed, 0 parse failures" in err
    assert "failed_calls" in stdout + err                          # the summary table's errors column


def test_yaml_experiment_fails_and_allow_failures_keeps_going(tmp_path, fake_server, _run):
    srv = fake_server()
    srv.fault("400", times=1000, message=REFUSAL)
    probes = _probes(tmp_path)
    exp = tmp_path / "exp.yaml"
    body = (f"analysis: validity\nout: out\nprobes: {probes}\nbootstrap: 50\nregrade: 0\njudges:\n"
            f"  - spec: {JUDGE}\n    api_base: {srv.base_url}\n    family: fake\n  - reference:constant\n")
    exp.write_text(body)
    rc, err, _ = _run("run", str(exp))
    assert rc == 1 and f"judge '{JUDGE}' produced no usable verdict: 26 of 26 calls failed" in _last_line(err), err
    assert (tmp_path / "out" / "result.json").is_file()
    exp.write_text(body + "allow_failures: true\n")
    rc, err, _ = _run("run", str(exp))
    assert rc == 0, err
    assert json.loads((tmp_path / "out" / "result.json").read_text())["calls"][JUDGE]["failed_calls"] == 26


def test_cap_run_with_a_failing_live_judge(tmp_path, fake_server, _run):
    import judgeaudit

    data = os.path.join(os.path.dirname(judgeaudit.__file__), "data", "judgebench_fixture")
    srv = fake_server()
    srv.fault("400", times=10000, message=REFUSAL)
    out = tmp_path / "out"
    args = ["cap", "run", "--set", f"judgebench:{data}?max_rows=6", "--judge", JUDGE, "--judge", "reference:length",
            "--api-base", srv.base_url, "--bootstrap", "20", "--out", str(out)]
    rc, err, _ = _run(*args)
    assert rc == 1, err
    assert f"judge '{JUDGE}' produced no usable verdict: 12 of 12 calls failed" in _last_line(err)
    res = json.loads((out / "result.json").read_text())
    assert res["calls"][JUDGE]["failed_calls"] == 12 and res["calls"]["reference:length"]["usable"] == 12
    assert "failed calls" in (out / "report.html").read_text()
    rc, err, _ = _run(*args, "--allow-failures")
    assert rc == 0, err


def test_probes_build_with_a_refusing_generator(tmp_path, fake_server, _run):
    srv = fake_server()
    srv.fault("400", times=10000, message=REFUSAL)
    bases = tmp_path / "bases.jsonl"
    bases.write_text(json.dumps({"claim": "The bridge opened in 1932.", "evidence": "It opened in 1932.",
                                 "group": "g", "domain": "history", "base_id": "b1"}) + "\n")
    out = tmp_path / "build"
    args = ["probes", "build", "--bases", str(bases), "--generator", "api:openai/acme-gen", "--verifier",
            "api:openai/beta-ver", "--generator-family", "acme", "--verifier-family", "beta", "--audited-family",
            "gemma", "--slots", "hedging_removal,domain_extension", "--out", str(out), "--api-base", srv.base_url,
            "--no-progress"]
    rc, err, _ = _run(*args)
    assert rc == 1, err
    assert "judge 'api:openai/acme-gen' produced no usable verdict: 2 of 2 calls failed" in _last_line(err)
    calls = json.loads((out / "build.json").read_text())["calls"]      # the logs are still written
    assert calls["api:openai/acme-gen"]["failed_calls"] == 2
    rc, err, _ = _run(*args, "--allow-failures")
    assert rc == 0, err


def test_cap_build_with_a_refusing_generator(tmp_path, fake_server, _run):
    srv = fake_server()
    srv.fault("400", times=10000, message=REFUSAL)
    src = tmp_path / "qa.jsonl"
    src.write_text(json.dumps({"question": "How many legs has a spider?", "answer": "Eight"}) + "\n")
    args = ["cap", "build", "--source", str(src), "--generator", "api:openai/gen-model?family=openai", "--gate",
            "api:openai/gate-model?family=anthropic", "--api-base", srv.base_url, "--out", str(tmp_path / "tb.jsonl")]
    rc, err, _ = _run(*args)
    assert rc == 1, err
    assert "judge 'api:openai/gen-model?family=openai' produced no usable verdict" in _last_line(err) \
        and REFUSAL in err
    assert (tmp_path / "tb.jsonl").is_file()


def test_demo_with_a_judge_that_produces_nothing(tmp_path, fake_server, monkeypatch):
    """The demo's judges swapped for a refused api judge and the constant: the demo finishes its report and
    exits 1 naming the judge."""
    from typer.testing import CliRunner

    from judgeaudit import demo
    from judgeaudit.cli import app

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server()
    srv.fault("400", times=10000, message=REFUSAL)
    monkeypatch.setattr(demo, "DEMO_JUDGES", [{"spec": JUDGE, "api_base": srv.base_url}, "reference:constant"])
    # the world and loop steps need a generating judge: the refused one above is the case here
    for step in ("world", "loop"):
        monkeypatch.setattr(demo, f"_{step}_step", lambda out, n_boot, slices, context=None, step=step:
                            demo.Step(step, [], list, lambda: []))
    r = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--bootstrap", "20"])
    assert r.exit_code == 1, r.output
    # the cut validity slice: 8 base items and their 12 edits each, 2 regrades
    assert f"judge '{JUDGE}' produced no usable verdict: 106 of 106 calls failed" in r.output
    assert (tmp_path / "report.html").is_file()
    assert json.loads((tmp_path / "validity" / "result.json").read_text())["calls"][JUDGE]["failed_calls"] == 106
