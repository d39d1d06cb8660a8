"""An authentication failure fails the run at once, naming the variable to set: no retries, no
further calls."""

from __future__ import annotations

import json
import time

import pytest

from judgeaudit.errors import AuthError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import RetryPolicy, run


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text=f"claim {i}", evidence="e") for i in range(n)]


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_stops_the_run_at_once(fake_server, monkeypatch, code):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    srv = fake_server(responder=lambda p: "Score: 4", latency=0.02)
    srv.fault("status", times=1000, code=code)
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
    with pytest.raises(AuthError) as e:
        run(judge, _requests(40), concurrency=2, policy=RetryPolicy(max_retries=5, base_delay=0.0), progress=False)
    assert f"HTTP {code}" in str(e.value) and e.value.field == "OPENAI_API_KEY"
    assert len(srv.requests) <= 2                      # the calls already in flight, nothing after


def test_no_key_for_a_named_provider_fails_before_any_call(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    judge = make_judge("api:openai/gpt-4o-mini")
    t0 = time.perf_counter()
    with pytest.raises(AuthError) as e:
        run(judge, _requests(5), policy=RetryPolicy(max_retries=5, base_delay=1.0), progress=False)
    assert time.perf_counter() - t0 < 5               # no backoff: five retries would sleep for seconds
    assert e.value.field == "OPENAI_API_KEY" and "set OPENAI_API_KEY" in str(e.value)


def test_the_cli_prints_one_line_and_exits_2(tmp_path):
    import os
    import subprocess
    import sys

    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "i1", "text": "t"}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/gpt-4o-mini",
                        "--input", str(items), "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env)
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len(errors) == 1 and "set OPENAI_API_KEY" in errors[0], p.stderr
