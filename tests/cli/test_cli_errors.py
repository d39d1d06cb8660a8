"""Bad input: one clear line naming file, line and field; exit 2; no traceback."""

from __future__ import annotations

import json

import pytest

from testkit import entry_point


@pytest.mark.parametrize("content,expected", [
    ('{"item_id": "a", "text": "x"}\n{"item_id": "b", "text": \n', "bad.jsonl:2: malformed JSON"),
    ('{"item_id": "a", "text": "x"}\n{"item_id": "b"}\n', "bad.jsonl:2: field 'text': required field is missing"),
    ('{"item_id": "a", "text": "x", "evidence": 3}\n', "bad.jsonl:1: field 'evidence': must be a string"),
    ('{"item_id": "a", "text": "x"}\n{"item_id": "a", "text": "y"}\n', "bad.jsonl:2: field 'item_id': duplicate"),
    ("", "bad.jsonl: file holds no items"),
])
def test_bad_items_file(tmp_path, content, expected, cli_run):
    f = tmp_path / "bad.jsonl"
    f.write_text(content)
    rc, out = cli_run("judge", "--judge", "reference:constant", "--input", str(f), "--out", str(tmp_path / "o"))
    assert rc == 2 and expected in out and "Traceback" not in out


def test_unknown_judge_and_missing_file(tmp_path, cli_run):
    f = tmp_path / "ok.jsonl"
    f.write_text(json.dumps({"item_id": "a", "text": "x"}) + "\n")
    rc, out = entry_point("judge", "--judge", "nosuch:thing", "--input", str(f), "--out", str(tmp_path / "o"))
    assert rc == 2 and "unknown judge spec 'nosuch:thing'" in out and "Traceback" not in out
    rc, out = cli_run("judge", "--judge", "local", "--input", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path))
    assert rc == 2 and "missing.jsonl: cannot read file" in out


def test_judge_command_writes_both_tables(tmp_path, cli_run):
    import pandas as pd

    f = tmp_path / "items.jsonl"
    f.write_text("".join(json.dumps({"item_id": f"i{i}", "text": "x" * ((i + 1) * 50)}) + "\n" for i in range(4)))
    rc, out = cli_run("judge", "--judge", "reference:length", "--input", str(f), "--out", str(tmp_path / "o"))
    assert rc == 0, out
    df = pd.read_parquet(tmp_path / "o" / "verdicts.parquet")
    assert df["score"].tolist() == pytest.approx([1 + 8 * min(1, (i + 1) * 50 / 400) for i in range(4)])
    assert len((tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()) == 4
    rc, out = cli_run("judges", "list")
    assert rc == 0 and "local" in out and "replay" in out


def test_public_names_are_exported():
    import judgeaudit

    for name in judgeaudit.__all__:
        assert getattr(judgeaudit, name) is not None, name
