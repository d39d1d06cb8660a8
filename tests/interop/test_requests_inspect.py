"""The exported Inspect AI task runs as written (inspect-ai 0.3.285, its mock model scripted to answer each
rendered prompt), and its log read back with ``replay:inspect:`` gives the validity profile of the same
scripted judge run directly; a reply the parser cannot read is a parse failure, not a dropped row."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pyjudge_callables as cb
from testkit import require, small_probes
from judgeaudit.cli import app
from judgeaudit.commands.validity import run_validity
from judgeaudit.interop.export import request_of




def _eval(task_file: Path, replies: dict[str, str], log_dir: Path, monkeypatch):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    spec = importlib.util.spec_from_file_location("exported_inspect_task", task_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def reply(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=replies[messages[-1].text])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)   # no tiktoken download
        return out

    for name, value in {"INSPECT_LOG_DIR": log_dir, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": log_dir / "data",
                        "XDG_CACHE_HOME": log_dir / "cache"}.items():
        monkeypatch.setenv(name, str(value))
    (log,) = inspect_eval(module.judgeaudit_requests(), model=get_model("mockllm/model", custom_outputs=reply),
                          log_dir=str(log_dir), display="none", max_connections=4)
    return log


@pytest.mark.slow   # two Inspect evals and three validity runs
def test_exported_inspect_task_round_trip(tmp_path, monkeypatch):
    require("inspect_ai", "the Inspect AI tests need inspect-ai (pip install -e '.[inspect]')")
    probes = small_probes(tmp_path)
    out = tmp_path / "export"
    res = CliRunner().invoke(app, ["requests", "export", "--analysis", "validity", "--probes", str(probes),
                                   "--regrade", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
    replies = {r["rendered"]: f"The claim goes beyond it.\nScore: {cb.grade(request_of(r))}" for r in rows}
    log = _eval(out / "inspect_task.py", replies, tmp_path / "logs", monkeypatch)
    assert log.status == "success" and len(log.samples) == len(rows)
    spec = "python:pyjudge_callables:grade?version=1"
    direct = run_validity(str(probes), [spec], out=tmp_path / "direct", n_boot=200, n_regrade=0)
    replay = f"replay:inspect:{log.location}"
    back = run_validity(str(probes), [replay], out=tmp_path / "back", n_boot=200, n_regrade=0)
    a, b = direct.result.to_dict()["judges"][spec], back.result.to_dict()["judges"][replay]
    strip = lambda d, i: json.dumps(d, sort_keys=True, default=str).replace(i, "JUDGE")  # noqa: E731
    assert a["S"] is not None and strip(a, spec) == strip(b, replay)

    # one reply the parser cannot read: a parse failure in the log and in the run, nothing dropped
    first = rows[0]
    replies[first["rendered"]] = "I would rather not grade this."
    log = _eval(out / "inspect_task.py", replies, tmp_path / "logs2", monkeypatch)
    replay = f"replay:inspect:{log.location}"
    back = run_validity(str(probes), [replay], out=tmp_path / "back2", n_boot=50, n_regrade=0)
    v = back.verdicts.set_index("request_id")
    assert len(v) == len(rows) and not v.loc[first["request_id"], "parse_ok"]
    assert v.loc[first["request_id"], "error"] is None and int((~back.verdicts["parse_ok"]).sum()) == 1
