"""Every analysis's result.json records its run: ``run_id`` (uuid4) and ``created_at`` (UTC)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import judgeaudit
from judgeaudit.runinfo import read_result, result_kind

DATA = Path(judgeaudit.__file__).parent / "data"


def _check_stamp(path: Path, before: datetime) -> dict:
    d = read_result(path)
    assert uuid.UUID(d["run_id"]).version == 4
    t = datetime.fromisoformat(d["created_at"])
    assert t.utcoffset() == timedelta(0) and before <= t <= datetime.now(UTC)
    return d


def test_check_cap_and_validity_results_are_stamped(tmp_path):
    from judgeaudit.commands.cap import run_cap
    from judgeaudit.commands.check import run_ifeval
    from judgeaudit.commands.validity import run_validity

    t0 = datetime.now(UTC)
    items = tmp_path / "p.jsonl"
    items.write_text(json.dumps({"key": 1, "prompt": "Say hi without commas.",
                                 "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}) + "\n")
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"prompt": "Say hi without commas.", "response": "Hi there"}) + "\n")
    run_ifeval(items, resp, out=tmp_path / "check")
    run_cap([f"judgebench:{DATA / 'judgebench_fixture'}"], published=True, n_boot=20, out=tmp_path / "cap")
    run_validity("bundled", ["reference:constant"], out=tmp_path / "validity", n_boot=20, n_regrade=0)
    run_validity("bundled", ["reference:constant"], out=tmp_path / "validity2", n_boot=20, n_regrade=0)
    kinds = {}
    for name in ("check", "cap", "validity", "validity2"):
        kinds[name] = result_kind(_check_stamp(tmp_path / name / "result.json", t0))
    assert kinds == {"check": "check", "cap": "cap", "validity": "validity", "validity2": "validity"}
    ids = {read_result(tmp_path / n / "result.json")["run_id"] for n in ("validity", "validity2")}
    assert len(ids) == 2  # one id per run


def test_vp_result_is_stamped(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.commands import vp as vp_cmd

    p = tmp_path / "pairs.jsonl"
    p.write_text("".join(json.dumps({"q": f"q{i}", "ra": "a " * (i % 7 + 1), "rb": "b " * (i % 5 + 1),
                                     "pref": "A" if i % 7 > i % 5 else "B"}) + "\n" for i in range(40)))
    t0 = datetime.now(UTC)
    res = CliRunner().invoke(vp_cmd.app, ["audit", "--set", f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref",
                                          "--permutations", "3", "--out", str(tmp_path / "vp"), "--no-transfer"])
    assert res.exit_code == 0, res.output
    assert result_kind(_check_stamp(tmp_path / "vp" / "result.json", t0)) == "vp"
