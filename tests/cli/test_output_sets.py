"""No data loss in output folders: a command writes only into a new folder or its own earlier run, and
writes its outputs as one set (a kill leaves the earlier run or the new one, never a mix)."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner
from world_fixtures import ScriptedJudge, oracle_reply, tiny_items

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.runinfo import write_result


@pytest.fixture
def world_cli(monkeypatch):
    """``world run`` on the tiny world items ('tiny:x') with a scripted oracle judge: no model, no network."""
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    monkeypatch.setattr("judgeaudit.commands.common.make_judge", lambda spec, **kw: ScriptedJudge(oracle_reply, spec))

    def run(out: Path, *extra: str):
        return CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "reference:oracle", "--votes",
                                        "1", "--bootstrap", "20", "--permutations", "9", "--out", str(out),
                                        *extra])
    return run


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _loop_folder(out: Path) -> None:
    """A finished ``loop run`` folder as this version's predecessor wrote it (no manifest)."""
    write_result(out / "result.json", {"task": "ifeval", "regulators": {"control": {}}, "before": {}})
    (out / "report.html").write_text("<html>the loop report</html>")
    (out / "units.jsonl").write_text('{"unit": 1}\n')


def test_world_run_refuses_a_loop_run_folder(tmp_path, world_cli):
    out = tmp_path / "loop-run"
    _loop_folder(out)
    before = _files(out)
    r = world_cli(out)
    assert isinstance(r.exception, InputError), r.output
    assert r.exception.field == "--out" and "holds a loop run" in str(r.exception)
    assert _files(out) == before                      # the loop run is untouched


def test_world_run_refuses_a_folder_of_another_manifested_run(tmp_path, world_cli):
    out = tmp_path / "w"
    assert world_cli(out).exit_code == 0
    man = json.loads((out / "judgeaudit-run.json").read_text())
    man["kind"] = "loop"
    (out / "judgeaudit-run.json").write_text(json.dumps(man))
    r = world_cli(out)
    assert isinstance(r.exception, InputError) and "holds a loop run (judgeaudit-run.json)" in str(r.exception)


def test_world_run_resumes_its_own_run_and_says_so(tmp_path, world_cli):
    out = tmp_path / "w"
    r1 = world_cli(out)
    assert r1.exit_code == 0, r1.output
    assert "world: writing into" in r1.output and "a new folder" in r1.output
    first = json.loads((out / "result.json").read_text())["run_id"]
    r2 = world_cli(out, "--seed", "1")
    assert r2.exit_code == 0, r2.output
    assert "replacing its earlier world run as one set" in r2.output
    man = json.loads((out / "judgeaudit-run.json").read_text())
    res = json.loads((out / "result.json").read_text())
    assert res["run_id"] != first and man["run_id"] == res["run_id"] and man["kind"] == "world"
    assert set(man["files"]) == {"result.json", "verdicts.parquet", "decisions.parquet", "report.html", "report.md"}
    assert not (out / ".judgeaudit-staging").exists()
    from judgeaudit.runfolder import is_complete

    assert is_complete(out)


class _Killed(BaseException):
    """Stands in for a kill -9: nothing after it runs (no except clause of the code under test catches it
    except a bare BaseException one)."""


def test_a_kill_while_writing_leaves_the_earlier_run_whole(tmp_path, world_cli, monkeypatch):
    out = tmp_path / "w"
    assert world_cli(out).exit_code == 0
    before = _files(out)
    import judgeaudit.io as jio

    real = jio.write_parquet
    calls = {"n": 0}

    def dies_on_the_second_table(path, df):
        calls["n"] += 1
        if calls["n"] == 2:          # result.json and verdicts.parquet are written; decisions.parquet is not
            raise _Killed
        return real(path, df)

    monkeypatch.setattr(jio, "write_parquet", dies_on_the_second_table)
    with pytest.raises(_Killed):
        world_cli(out, "--seed", "1")
    after = {k: v for k, v in _files(out).items() if not k.startswith(".judgeaudit-staging")}
    assert after == before            # the earlier run's result.json beside its own verdicts, decisions, report


def test_a_kill_during_the_commit_is_rolled_forward_by_the_next_command(tmp_path, world_cli, monkeypatch):
    import judgeaudit.runfolder as rf

    out = tmp_path / "w"
    assert world_cli(out).exit_code == 0
    real = rf.os.replace
    moved = {"n": 0}

    def dies_after_one_rename(src, dst):
        if Path(src).parent.name == rf.STAGING and Path(dst).parent == out and Path(src).name != rf.MANIFEST:
            moved["n"] += 1
            if moved["n"] == 2:
                raise _Killed
        return real(src, dst)

    monkeypatch.setattr(rf.os, "replace", dies_after_one_rename)
    with pytest.raises(_Killed):
        world_cli(out, "--seed", "1")
    monkeypatch.setattr(rf.os, "replace", real)
    assert not rf.is_complete(out)                     # mid-commit: not one run's output, and it says so
    staged = rf.read_manifest(out / rf.STAGING)
    assert staged is not None
    assert rf.claim(out, "world", ()) == "resume"      # the next command on the folder finishes the commit
    assert rf.is_complete(out)
    res = json.loads((out / "result.json").read_text())
    assert res["run_id"] == staged["run_id"]
    v = pd.read_parquet(out / "verdicts.parquet")
    assert hashlib.sha256((out / "verdicts.parquet").read_bytes()).hexdigest() == staged["files"]["verdicts.parquet"]
    assert len(v) > 0


def test_store_export_replaces_its_own_export_but_not_a_runs_verdicts(tmp_path, world_cli):
    out = tmp_path / "w"
    assert world_cli(out).exit_code == 0
    from judgeaudit.records import Verdict
    from judgeaudit.runtime.store import CallStore

    db = tmp_path / "calls.sqlite"
    with CallStore(db) as cs:
        cs.put(Verdict(call_key="k1", request_id="r1", judge_id="j", score=5.0, parse_ok=True))
    before = _files(out)
    r = CliRunner().invoke(app, ["store", "export", "--store", str(db), "--out", str(out / "verdicts.parquet")])
    assert isinstance(r.exception, InputError) and "not an earlier store export" in str(r.exception)
    assert _files(out) == before
    for name in ("calls.parquet", "calls.jsonl"):
        for _ in range(2):           # a new file, then its own earlier export
            r = CliRunner().invoke(app, ["store", "export", "--store", str(db), "--out", str(tmp_path / name)])
            assert r.exit_code == 0, r.output


def test_a_world_experiment_file_runs_world_with_the_same_rules(tmp_path, world_cli):
    from judgeaudit.runfolder import is_complete

    (tmp_path / "x").mkdir()
    exp = tmp_path / "exp.yaml"
    exp.write_text("analysis: world\nout: w\nset: tiny:x\njudges: [reference:oracle]\nvotes: 1\nbootstrap: 20\n"
                   "permutations: 9\n")
    r = CliRunner().invoke(app, ["run", str(exp)])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "w" / "result.json").read_text())
    arms = res["judges"]["reference:oracle"]["arms"]
    assert arms["informed"]["balanced_accuracy"] == 1.0 and arms["blind"]["balanced_accuracy"] == 0.5
    assert res["votes"] == 1 and is_complete(tmp_path / "w")


def test_the_api_path_writes_the_result_then_the_report_into_one_complete_folder(tmp_path, world_cli):
    from judgeaudit.commands.world import run_world_cmd, write_report
    from judgeaudit.runfolder import is_complete, read_manifest

    out = tmp_path / "o"
    r = run_world_cmd("tiny:x", ["reference:oracle"], ["blind", "informed"], out=out, votes=1, n_boot=20,
                      permutations=9, progress=False)
    write_report(r, out)                               # a second set: the result's files stay listed
    man = read_manifest(out)
    assert set(man["files"]) == {"result.json", "verdicts.parquet", "decisions.parquet", "report.html", "report.md"}
    assert man["run_id"] == json.loads((out / "result.json").read_text())["run_id"]
    assert is_complete(out)


def test_a_world_folder_written_before_manifests_is_resumed_and_a_stray_file_is_refused(tmp_path, world_cli):
    out = tmp_path / "w"
    assert world_cli(out).exit_code == 0
    (out / "judgeaudit-run.json").unlink()             # as an earlier version left it
    r = world_cli(out, "--seed", "2")
    assert r.exit_code == 0 and "replacing its earlier world run" in r.output, r.output
    other = tmp_path / "mine"
    other.mkdir()
    (other / "report.html").write_text("my own page")
    r = world_cli(other)
    assert isinstance(r.exception, InputError) and "report.html, not written by a world run" in str(r.exception)
    assert (other / "report.html").read_text() == "my own page"
