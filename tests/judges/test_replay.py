from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from judgeaudit.commands.common import build_judges
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict, verdicts_frame


def _table():
    vs = [Verdict(call_key=f"k{i}", request_id=f"r{i}", judge_id=j, score=float(i % 9 + 1), parse_ok=True)
          for j in ("alpha", "beta") for i in range(5)]
    return verdicts_frame(vs)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_round_trip(tmp_path, suffix):
    df = _table()
    path = tmp_path / f"v{suffix}"
    if suffix == ".parquet":
        df[["request_id", "judge_id", "score"]].to_parquet(path)
    elif suffix == ".csv":
        df[["request_id", "judge_id", "score"]].to_csv(path, index=False)
    else:
        df[["request_id", "judge_id", "score"]].to_json(path, orient="records", lines=True)
    judges = build_judges([f"replay:{path}"])
    assert [j.id for j in judges] == ["alpha", "beta"]
    reqs = [JudgeRequest(request_id=f"r{i}", text="t") for i in range(6)]
    out = asyncio.run(judges[1].judge(reqs))
    assert [v.score for v in out[:5]] == df[df.judge_id == "beta"]["score"].tolist()
    assert out[5].error == "not in replay file" and not out[5].parse_ok


def test_column_mapping_and_errors(tmp_path):
    p = tmp_path / "mine.csv"
    pd.DataFrame({"id": ["a", "b"], "verdict": ["A", "tie"]}).to_csv(p, index=False)
    j = make_judge(f"replay:{p}?request_id=id&choice=verdict")
    out = asyncio.run(j.judge([JudgeRequest(request_id="b", form="pairwise", prompt="q", response_a="x",
                                            response_b="y")]))
    assert out[0].choice == "tie" and out[0].parse_ok
    pd.DataFrame({"id": ["a"], "verdict": ["C"]}).to_csv(p, index=False)
    with pytest.raises(InputError, match=r"mine.csv:2: field 'choice'"):
        make_judge(f"replay:{p}?request_id=id&choice=verdict")
    with pytest.raises(InputError, match="request_id"):
        make_judge(f"replay:{p}")
    both = tmp_path / "both.parquet"
    _table().drop(columns=["defects", "score_dist", "meta"]).to_parquet(both)
    with pytest.raises(InputError, match="pick one with"):
        make_judge(f"replay:{both}")
    with pytest.raises(InputError, match="file not found"):
        make_judge(f"replay:{tmp_path}/missing.jsonl")


def test_error_column_is_a_failed_call(tmp_path):
    p = tmp_path / "v.jsonl"
    pd.DataFrame({"request_id": ["a", "b"], "score": [3, None], "error": [None, "timed out"]}).to_json(
        p, orient="records", lines=True)
    out = asyncio.run(make_judge(f"replay:{p}").judge([JudgeRequest(request_id=r, text="t") for r in "ab"]))
    assert [(v.score, v.error, v.parse_ok) for v in out] == [(3.0, None, True), (None, "timed out", False)]


# ------------------------------------------------------------------ world-form verdicts through `world run`

def _world_set() -> str:
    """The HaluEval QA slice shipped with the package: 2 questions, a right and a hallucinated answer each."""
    from pathlib import Path

    import judgeaudit

    return f"halueval:{Path(judgeaudit.__file__).parent / 'data' / 'halueval'}?part=qa&max_rows=4"


def _world_rows(value):
    """One replayed verdict per (item, arm): ``value(item, arm)`` gives the row's verdict columns."""
    from judgeaudit.commands.world import load_items
    from judgeaudit.world.requests import SEP

    return [{"request_id": f"{it.item_id}{SEP}{arm}", **value(it, arm)}
            for it in load_items(_world_set(), None) for arm in ("blind", "informed")]


def _world_run(tmp_path, rows, *, form="label", suffix=".jsonl"):
    import json

    from typer.testing import CliRunner

    from judgeaudit.cli import app

    path = tmp_path / f"verdicts{suffix}"
    if suffix == ".csv":   # list cells as JSON text
        pd.DataFrame([{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]).to_csv(
            path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["world", "run", "--set", _world_set(), "--judge", f"replay:{path}", "--form", form,
                                 "--arm", "blind", "--arm", "informed", "--votes", "1", "--bootstrap", "0",
                                 "--out", str(out)])
    result = json.loads((out / "result.json").read_text()) if (out / "result.json").exists() else None
    return r, result


def _arms(result, metric="balanced_accuracy"):
    (judge,) = result["judges"].values()
    return {arm: a[metric] for arm, a in judge["arms"].items()}


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_replayed_world_labels_are_read(tmp_path, suffix):
    # informed: the gold label; blind: every answer called clean
    rows = _world_rows(lambda it, arm: {"label": bool(it.defective) if arm == "informed" else False})
    r, result = _world_run(tmp_path, rows, suffix=suffix)
    assert r.exit_code == 0, r.output
    assert _arms(result) == {"blind": 0.5, "informed": 1.0}


def test_replayed_raw_world_replies_are_parsed_with_the_world_parser(tmp_path):
    import json

    rows = _world_rows(lambda it, arm: {"raw": "Checked.\n" + json.dumps({"defective": bool(it.defective)})
                                        if arm == "informed" else '{"defective": true}'})
    r, result = _world_run(tmp_path, rows)
    assert r.exit_code == 0, r.output
    assert _arms(result) == {"blind": 0.5, "informed": 1.0}
    assert _arms(result, "recall") == {"blind": 1.0, "informed": 1.0}


def test_replayed_world_scores_are_read_on_the_world_scale(tmp_path):
    # 5 is a clean output on the world score form's 1–5 channel (flagged below 5)
    rows = _world_rows(lambda it, arm: {"score": 1 if it.defective and arm == "informed" else 5})
    r, result = _world_run(tmp_path, rows, form="score")
    assert r.exit_code == 0, r.output
    assert _arms(result) == {"blind": 0.5, "informed": 1.0}


@pytest.mark.parametrize("row", [
    {"parse_ok": True, "score": None},                   # says parsed, holds no world verdict
    {"raw": "The answer looks fine to me."},             # a reply the world parser cannot read
    {"label": None, "score": 3},                         # a graded score is no world label
])
def test_a_replay_with_no_usable_world_verdict_exits_non_zero(tmp_path, row):
    r, _ = _world_run(tmp_path, _world_rows(lambda it, arm: dict(row)))
    assert r.exit_code == 1, r.output
    assert "produced no usable verdict" in r.output


def test_a_malformed_world_cell_names_file_line_and_field(tmp_path):
    rows = _world_rows(lambda it, arm: {"unit_labels": [True]})
    rows[1]["unit_labels"] = "[true,"            # cut off; CSV line 3 (after the header)
    r, _ = _world_run(tmp_path, rows, form="sentences", suffix=".csv")
    assert isinstance(r.exception, InputError), r.output
    assert str(r.exception).endswith("verdicts.csv:3: field 'unit_labels': unit_labels must be a JSON list, "
                                     "got '[true,'")


def test_a_raw_reply_alone_is_read_with_the_forms_parser(tmp_path):
    """A harness's raw outputs replay as a live reply is read: graded and pairwise rows with only ``raw``
    are parsed; an unreadable one is a parse failure with the reason; a given score is never re-read."""
    import json

    rows = [{"request_id": "g", "raw": "The claim overreaches.\nScore: 7"},
            {"request_id": "p", "raw": "B misreads the question.\nVerdict: A"},
            {"request_id": "u", "raw": "I would rather not say."},
            {"request_id": "s", "score": 3, "raw": "Score: 8"}]
    path = tmp_path / "raw.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from judgeaudit.runtime.executor import run

    reqs = [JudgeRequest(request_id="g", text="t"), JudgeRequest(request_id="p", form="pairwise", prompt="q",
                                                                 response_a="a", response_b="b"),
            JudgeRequest(request_id="u", text="t"), JudgeRequest(request_id="s", text="t")]
    g, p, u, s = run(make_judge(f"replay:{path}"), reqs, progress=False)
    assert (g.score, g.parse_ok, g.score_source) == (7.0, True, "parsed")
    assert (p.choice, p.parse_ok, p.rationale) == ("A", True, "B misreads the question.")
    assert (u.score, u.parse_ok, u.error) == (None, False, None)
    assert u.meta["parse_error"] == "no whole number on the 1-9 scale found"
    assert (s.score, s.score_source) == (3.0, "replay")
