import json
import os

import pandas as pd
import pytest

from testkit import entry_point


def _env(**extra):
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin", **extra}
    for name in ("PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "LITELLM_LOCAL_MODEL_COST_MAP"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _subprocess(*args):
    """The real entry point (one test keeps it); the others run the command line in this process."""
    return entry_point(*args, env=_env())


@pytest.fixture
def _run(cli_run, monkeypatch):
    """``judgeaudit ARGS`` in this process: (exit code, output)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return cli_run


def _judge(run, tmp_path, api_base, out, *extra):
    """``judge`` of 3 items with the api judge at ``api_base`` into ``out``, storing in ``tmp_path``/s.sqlite."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"t{i}"}) + "\n" for i in range(3)))
    return run("judge", "--judge", "api:openai/m", "--api-base", api_base, "--input", str(items), "--out", str(out),
               "--store", str(tmp_path / "s.sqlite"), "--concurrency", "1", *extra)


def _stats_rows(out):
    """The rows of ``store stats`` piped (not a terminal): tab-separated, a header first."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("judge_id\tendpoint\t"))
    rows = [line.split("\t") for line in lines[header + 1:] if line.startswith("api:openai/m\t")]
    return {(r[0], r[1]): r for r in rows}


def test_store_stats_off_a_terminal_prints_full_rows(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.cli import app
    from judgeaudit.records import Verdict
    from judgeaudit.runtime.store import CallStore

    name = "api:openai/gpt-4o-mini-2024-07-18?temperature=0.3&max_tokens=1024"
    with CallStore(tmp_path / "s.sqlite") as cs:
        for i in range(2):
            cs.put(Verdict(call_key=f"k{i}", request_id=f"r{i}", judge_id=name, score=5.0, parse_ok=True,
                           meta={"endpoint": "http://judge-server.internal.example:8000/v1"}, cost_usd=0.0012))
    r = CliRunner().invoke(app, ["store", "stats", "--store", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split("\t") == ["judge_id", "endpoint", "ok", "errors", "parse_failures", "input_tokens",
                                     "output_tokens", "cost_usd", "mean_latency_s"]
    assert lines[1].split("\t")[:5] == [name, "http://judge-server.internal.example:8000/v1", "2", "0", "0"]
    assert lines[1].split("\t")[7] == "0.0024"


def test_store_stats_and_export(tmp_path, fake_server, _run):
    srv = fake_server(responder=lambda p: "Score: 2")
    srv.fault("garbage")
    rc, out = _judge(_run, tmp_path, srv.base_url, tmp_path)
    assert rc == 0, out
    rc, out = _run("store", "stats", "--store", str(tmp_path / "s.sqlite"))
    assert rc == 0 and "api:openai/m" in out
    [cells] = _stats_rows(out).values()
    assert cells[1] == srv.base_url                 # the endpoint the calls were sent to
    assert cells[2:5] == ["3", "0", "1"]            # ok, errors, parse failures
    rc, out = _run("store", "export", "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "e.parquet"))
    assert rc == 0 and "3 calls" in out
    df = pd.read_parquet(tmp_path / "e.parquet")
    assert sorted(df["request_id"]) == ["i0", "i1", "i2"] and df["parse_ok"].sum() == 2
    rc, out = _subprocess("store", "stats", "--store", str(tmp_path / "missing.sqlite"))
    assert rc == 2 and "missing.sqlite: call store not found" in out


def test_another_api_base_is_another_instrument_and_no_credential_is_stored(tmp_path, fake_server, _run):
    first = fake_server(responder=lambda p: "Score: 2")
    second = fake_server(responder=lambda p: "Score: 8")
    rc, out = _judge(_run, tmp_path, first.base_url, tmp_path / "one")
    assert rc == 0, out
    rc, out = _judge(_run, tmp_path, second.base_url, tmp_path / "two")
    assert rc == 0, out
    assert len(first.requests) == 3 and len(second.requests) == 3   # the second server was asked
    scores = [json.loads(line)["score"] for line in (tmp_path / "two" / "verdicts.jsonl").read_text().splitlines()]
    assert scores == [8.0, 8.0, 8.0]
    # the same server spelled differently (scheme case, user-info, trailing slash) answers from the store
    same = second.base_url.replace("http://", "HTTP://user:secret-pw@") + "/"
    rc, out = _judge(_run, tmp_path, same, tmp_path / "three")
    assert rc == 0, out
    assert len(second.requests) == 3
    # a failing call keeps its error message in the store: a closed port with credentials in the URL
    closed = fake_server()
    dead = closed.base_url.replace("http://", "http://user:secret-pw@")
    closed.stop()
    _judge(_run, tmp_path, dead, tmp_path / "dead", "--retries", "0", "--timeout", "5")
    rc, out = _run("store", "stats", "--store", str(tmp_path / "s.sqlite"))
    rows = _stats_rows(out)
    assert rc == 0 and set(rows) == {("api:openai/m", srv.base_url) for srv in (first, second, closed)}
    assert [rows["api:openai/m", srv.base_url][2:4] for srv in (first, second, closed)] == [
        ["3", "0"], ["3", "0"], ["0", "3"]]                                # ok, errors
    assert "secret" not in out
    files = [f for f in tmp_path.rglob("*") if f.is_file() and f.name != "items.jsonl"]
    assert any(f.name == "s.sqlite" for f in files)
    for f in files:
        assert b"secret" not in f.read_bytes(), f
