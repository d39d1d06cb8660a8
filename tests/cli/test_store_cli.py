import json
import subprocess
import sys

import pandas as pd


def _run(*args):
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", *args], capture_output=True, text=True,
                       env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    return p.returncode, p.stdout + p.stderr


def test_store_stats_and_export(tmp_path, fake_server):
    import os

    os.environ.setdefault("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: "Score: 2")
    srv.fault("garbage")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"t{i}"}) + "\n" for i in range(3)))
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/m", "--api-base",
                        srv.base_url, "--input", str(items), "--out", str(tmp_path), "--store",
                        str(tmp_path / "s.sqlite"), "--concurrency", "1"], capture_output=True, text=True,
                       env={**os.environ, "OPENAI_API_KEY": "sk-test"})
    assert p.returncode == 0, p.stderr
    rc, out = _run("store", "stats", "--store", str(tmp_path / "s.sqlite"))
    assert rc == 0 and "api:openai/m" in out
    row = next(line for line in out.splitlines() if "api:openai/m" in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    assert cells[1:4] == ["3", "0", "1"]          # ok, errors, parse failures
    rc, out = _run("store", "export", "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "e.parquet"))
    assert rc == 0 and "3 calls" in out
    df = pd.read_parquet(tmp_path / "e.parquet")
    assert sorted(df["request_id"]) == ["i0", "i1", "i2"] and df["parse_ok"].sum() == 2
    rc, out = _run("store", "stats", "--store", str(tmp_path / "missing.sqlite"))
    assert rc == 2 and "missing.sqlite: call store not found" in out
