"""Which runs may score a committed clause, and how every matching run is shown: a rerun answered from
the call store (or fed by ``replay:``) after the commit is pre-commit data; two post-commit runs with
different verdicts are both shown and flagged; a null metric, a FAILS clause on an absent metric, an
exact hit at the bar and a commit time without a zone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import _entry_hash, commit, prediction_hash
from judgeaudit.ledger.model import Commit, Ledger, Prediction
from judgeaudit.ledger.report import score_lines, table6
from judgeaudit.ledger.score import load_results, score
from judgeaudit.probes.io import bundled_probes_path
from judgeaudit.runinfo import answer_record

T0 = "2026-08-28T10:00:00+00:00"
JUDGE = "api:openai/fake-judge"


def _small_probes(tmp_path: Path, n_bases: int = 1) -> Path:
    rows = [json.loads(line) for line in bundled_probes_path().read_text(encoding="utf-8").splitlines() if line]
    bases = list(dict.fromkeys(r["base_id"] for r in rows))[:n_bases]
    p = tmp_path / "probes.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows if r["base_id"] in bases), encoding="utf-8")
    return p


def _cli(*args: str):
    return CliRunner().invoke(app, list(map(str, args)))


def _validity(out: Path, probes: Path, judge: str, store: Path, api_base: str | None = None):
    res = _cli("validity", "run", "--probes", probes, "--judge", judge, "--store", store, "--bootstrap", 20,
               "--regrade", 0, "--out", out, *(["--api-base", api_base] if api_base else []))
    assert res.exit_code == 0, res.output
    return json.loads((out / "result.json").read_text())


def test_a_rerun_answered_from_the_store_after_the_commit_cannot_score(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    srv = fake_server()
    probes, store, ledger = _small_probes(tmp_path), tmp_path / "calls.sqlite", tmp_path / "preds.yaml"
    first = _validity(tmp_path / "runs" / "first", probes, JUDGE, store, srv.base_url)
    n_calls = len(srv.requests)
    assert n_calls > 0 and first["answers"]["calls"] == n_calls and first["answers"]["replayed"] == 0
    assert _cli("ledger", "add", "--ledger", ledger, "--id", "P1", "--run", "validity",
                "--clause", f"judges.{JUDGE}.S >= 0.5").exit_code == 0
    assert _cli("ledger", "commit", "--ledger", ledger).exit_code == 0

    # the rerun after the commit is answered wholly from the store: its answers predate the commit
    rerun = _validity(tmp_path / "runs" / "rerun", probes, JUDGE, store, srv.base_url)
    assert len(srv.requests) == n_calls
    assert rerun["answers"]["earliest"] == first["answers"]["earliest"]
    res = _cli("ledger", "score", "--ledger", ledger, "--results", tmp_path / "runs" / "rerun")
    assert isinstance(res.exception, InputError), res.output   # the CLI prints it on one line and exits 2
    msg = str(res.exception)
    assert msg.startswith(f"{tmp_path / 'runs' / 'rerun' / 'result.json'}: field 'answers': P1: every result of run "
                          "validity was created before the clause was committed")
    assert f"answered from {first['answers']['earliest']}" in msg and "served from the call store" in msg

    # a fresh run (new store) after the commit scores it; the rerun is listed as pre-commit data
    _validity(tmp_path / "runs" / "fresh", probes, JUDGE, tmp_path / "fresh.sqlite", srv.base_url)
    assert len(srv.requests) == 2 * n_calls
    res = _cli("ledger", "score", "--ledger", ledger, "--results", tmp_path / "runs")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("P1\tmet")
    assert any("runs/rerun/result.json" in line and "not scored — pre-commit data" in line for line in lines)
    assert any("runs/fresh/result.json" in line and "← governs" in line for line in lines)


def test_replayed_verdicts_are_pre_commit(tmp_path):
    probes, ledger = _small_probes(tmp_path), tmp_path / "preds.yaml"
    ref = _validity(tmp_path / "ref", probes, "reference:constant", tmp_path / "a.sqlite")
    assert ref["answers"]["replayed"] == 0 and ref["answers"]["earliest"] is not None
    v = pd.read_parquet(tmp_path / "ref" / "verdicts.parquet")
    v[["request_id", "score"]].to_csv(tmp_path / "replay.csv", index=False)
    assert _cli("ledger", "add", "--ledger", ledger, "--id", "P1", "--run", "validity",
                "--clause", "s_floor >= 0.5").exit_code == 0
    assert _cli("ledger", "commit", "--ledger", ledger).exit_code == 0
    d = _validity(tmp_path / "runs" / "replayed", probes, f"replay:{tmp_path / 'replay.csv'}", tmp_path / "b.sqlite")
    assert d["answers"]["replayed"] == d["answers"]["calls"] > 0
    res = _cli("ledger", "score", "--ledger", ledger, "--results", tmp_path / "runs")
    assert isinstance(res.exception, InputError), res.output
    assert f"fed {d['answers']['calls']} of its {d['answers']['calls']} verdicts from a file (replay: or published " \
           "judge outputs), whose answer times are not recorded (treated as pre-commit)" in str(res.exception)


def test_a_cap_run_on_published_judge_outputs_is_pre_commit(tmp_path):
    import judgeaudit
    from judgeaudit.commands.cap import run_cap

    data = Path(judgeaudit.__file__).parent / "data" / "judgebench_fixture"
    led = commit(Ledger(predictions=(Prediction.model_validate(
        {"id": "C1", "run": "cap", "clauses": [{"metric": "conditions", "bar": ">= 0"}]}),)), at=T0, git=None)[0]
    run_cap([f"judgebench:{data}"], published=True, n_boot=20, out=tmp_path / "cap")
    a = json.loads((tmp_path / "cap" / "result.json").read_text())["answers"]
    assert a["replayed"] == a["calls"] > 0 and a["earliest"] is None
    with pytest.raises(InputError, match=r"C1: every result of run cap .* verdicts from a file \(replay: or published"):
        score(led, load_results([tmp_path]))


def test_answer_record_counts_replayed_and_untimed_verdicts():
    df = pd.DataFrame({"provider": ["openai", "openai", "replay", "openai"],
                       "timestamp": ["2026-08-29T10:00:00+00:00", "2026-08-27T09:00:00+00:00",
                                     "2026-08-30T00:00:00+00:00", "not a time"]})
    assert answer_record(df) == {"calls": 4, "replayed": 1, "untimed": 1,
                                 "earliest": "2026-08-27T09:00:00+00:00", "latest": "2026-08-29T10:00:00+00:00"}


def _write(folder: Path, data: dict, created_at: str, run_id: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps({**data, "run_id": run_id, "created_at": created_at}))


def _led(*clauses: dict, run: str | None = "validity") -> Ledger:
    return commit(Ledger(predictions=(Prediction.model_validate({"id": "P1", "run": run, "clauses": list(clauses)}),)),
                  at=T0, git=None)[0]


def test_two_matching_runs_with_different_verdicts_are_both_shown_and_flagged(tmp_path):
    # a second validity run with another --s-floor flips the verdicts: the first post-commit run governs
    led = _led({"letter": "a", "metric": "judges.j.S", "bar": ">= 0.90"},
               {"letter": "b", "metric": "judges.j.R", "bar": ">= 0.50"})
    _write(tmp_path / "v1", {"judges": {"j": {"S": 0.93, "R": 0.61}}, "s_floor": 0.90}, "2026-08-29T10:00:00+00:00", "r1")
    _write(tmp_path / "v2", {"judges": {"j": {"S": 0.71, "R": 0.32}}, "s_floor": 0.70}, "2026-08-29T12:00:00+00:00", "r2")
    scores = score(led, load_results([tmp_path]))
    assert [(s.unit, s.verdict, s.run_id, s.divergent) for s in scores] == [("P1(a)", "met", "r1", True),
                                                                              ("P1(b)", "met", "r1", True)]
    assert [(r.run_id, r.verdict) for r in scores[0].runs] == [("r1", "met"), ("r2", "not met")]
    lines = score_lines(scores)
    assert lines[0].startswith("P1(a)\tmet") and lines[0].endswith("[verdict differs across runs]")
    md = table6(scores)
    assert "| P1(a) | >= 0.90 | met (differs across runs) |" in md
    assert "2 unit(s) have verdicts that differ across their post-commit runs" in md
    # a clause that pins its run by id is scored by that run only
    pinned = score(_led({"metric": "judges.j.S", "bar": ">= 0.90"}, run="r2"), load_results([tmp_path]))
    assert [(s.verdict, s.run_id, len(s.runs), s.divergent) for s in pinned] == [("not met", "r2", 1, False)]


def test_ledger_edge_cases(tmp_path):
    # a null metric of a run that happened is not met (direction null), not "not run"
    _write(tmp_path / "v", {"judges": {"j": {"S": None, "R": 0.49999999999999994, "gap": 0.2}}, "s_floor": 0.9},
           "2026-08-29T10:00:00+00:00", "r1")
    (s,) = score(_led({"metric": "judges.j.S", "bar": ">= 0.90"}), load_results([tmp_path]))
    assert (s.verdict, s.direction) == ("not met", "null")
    # an exact hit at the bar stored as 0.4999… meets it (the validity floor's tolerance)
    (s,) = score(_led({"metric": "judges.j.R", "bar": ">= 0.5"}), load_results([tmp_path]))
    assert s.verdict == "met"
    # a FAILS clause on a metric path the run does not hold is refused, not ignored
    with pytest.raises(InputError, match=r"P1: its FAILS condition reads 'judges.j.gpa'"):
        score(_led({"metric": "judges.j.gap", "bar": ">= +0.10", "fails": {"metric": "judges.j.gpa", "bar": "< 0"}}),
              load_results([tmp_path]))
    # a commit time without a zone: one line naming the field, not a TypeError
    p = Prediction.model_validate({"id": "P1", "clauses": [{"metric": "judges.j.gap", "bar": ">= +0.10"}]})
    naive = "2026-08-28T10:00:00"
    led = Ledger(predictions=(p,), commits=(Commit(sha256=_entry_hash([p], naive, None, None), at=naive,
                                                   predictions={"P1": prediction_hash(p)}),))
    with pytest.raises(InputError, match=r"field 'commits\[0\].at': commit time '2026-08-28T10:00:00' has no time zone"):
        score(led, load_results([tmp_path]))
    with pytest.raises(InputError, match="has no time zone"):
        commit(Ledger(predictions=(p,)), at=naive, git=None)
