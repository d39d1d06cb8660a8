"""``validity run``, ``cap run``, ``vp audit`` and ``loop worlds`` write only into a new folder or their own
earlier run, and write their outputs as one set: ``--out`` onto another command's run is refused with one line
and leaves that folder byte-identical; a kill between two writes leaves the earlier run's complete set."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import length_pairs_file
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.runfolder import MANIFEST, STAGING, is_complete, read_manifest
from judgeaudit.runinfo import file_sha256, write_result

DATA = Path(judgeaudit.__file__).parent / "data"


def _argv(name: str, out: Path, tmp: Path, seed: int) -> list[str]:
    """A quick, call-free (or reference-judge) run of each command into ``out``."""
    if name == "validity":
        return ["validity", "run", "--judge", "reference:constant", "--bootstrap", "30", "--regrade", "4",
                "--seed", str(seed), "--out", str(out)]
    if name == "cap":
        return ["cap", "run", "--set", f"judgebench:{DATA / 'judgebench_fixture'}", "--published", "--bootstrap", "30",
                "--seed", str(seed), "--out", str(out)]
    if name == "vp":
        p = length_pairs_file(tmp)
        return ["vp", "audit", "--set", f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref",
                "--permutations", "3", "--no-transfer", "--jobs", "1", "--seed", str(seed), "--out", str(out)]
    if name == "loop worlds":
        root = os.environ.get("JUDGEAUDIT_DATA_DIR")
        if not root or not (Path(root) / "halueval").is_dir():
            pytest.skip("JUDGEAUDIT_DATA_DIR is not set to the public data folder (HaluEval QA)")
        return ["loop", "worlds", "--set", f"halueval:{Path(root) / 'halueval'}", "--agent", "reference:echo",
                "--max-items", str(5 + seed), "--out", str(out)]
    raise AssertionError(name)


# the set each command writes (its manifest lists exactly these files)
SETS = {"validity": {"result.json", "verdicts.parquet", "report.html"},
        "cap": {"result.json", "units.parquet", "pair_verdicts.parquet", "report.html"},
        "vp": {"result.json", "predictions.parquet", "report.html"},
        "loop worlds": {"result.json", "answers.jsonl"}}

# a writer each command calls after result.json, and the module it is read from at call time
LATER_WRITER = {"validity": ("judgeaudit.report.html", "write_page"),
                "cap": ("judgeaudit.report.html", "write_page"),
                "vp": ("judgeaudit.report.html", "write_page"),
                "loop worlds": ("judgeaudit.io", "write_jsonl")}

COMMANDS = list(SETS)


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _run(argv: list[str]):
    return CliRunner().invoke(app, argv)


def _loop_folder(out: Path) -> None:
    """A finished ``loop run`` folder as an earlier version wrote it (no manifest)."""
    write_result(out / "result.json", {"task": "ifeval", "regulators": {"control": {}}, "before": {}})
    (out / "report.html").write_text("<html>the loop report</html>")
    (out / "units.jsonl").write_text('{"unit": 1}\n')


def _world_folder(out: Path) -> None:
    """A finished ``world run`` folder with its manifest, as ``runfolder.output_set`` writes it."""
    out.mkdir(parents=True)
    write_result(out / "result.json", {"arms": ["blind", "informed"], "tie_rule": "x", "judges": {}})
    (out / "verdicts.parquet").write_bytes(b"PAR1 not really")
    (out / "report.html").write_text("<html>the world report</html>")
    files = {n: file_sha256(out / n) for n in ("result.json", "verdicts.parquet", "report.html")}
    (out / MANIFEST).write_text(json.dumps({"kind": "world", "run_id": "w1", "files": files}))


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("other", ["loop run (no manifest)", "world run (manifest)"])
def test_out_onto_another_commands_run_is_refused_and_left_as_it_was(name, other, tmp_path):
    out = tmp_path / "other-run"
    if other.startswith("loop"):
        out.mkdir()
        _loop_folder(out)
        said = "holds a loop run (result.json)"
    else:
        _world_folder(out)
        said = "holds a world run (judgeaudit-run.json)"
    before = _files(out)
    r = _run(_argv(name, out, tmp_path, 0))
    assert isinstance(r.exception, InputError), r.output
    assert r.exception.field == "--out" and said in str(r.exception), str(r.exception)
    assert f"{name} writes only into a new folder or its own earlier run" in str(r.exception)
    assert _files(out) == before                                  # byte-identical, nothing added
    assert sorted(p.name for p in out.iterdir()) == sorted(before)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_run_is_one_set_and_a_rerun_resumes_its_own_folder(name, tmp_path):
    out = tmp_path / "run"
    r1 = _run(_argv(name, out, tmp_path, 0))
    assert r1.exit_code == 0, r1.output
    assert f"{name}: writing into {out}: a new folder" in r1.output
    man = read_manifest(out)
    assert man["kind"] == name and set(man["files"]) == SETS[name]
    assert man["run_id"] == json.loads((out / "result.json").read_text())["run_id"]
    assert is_complete(out) and not (out / STAGING).exists()
    r2 = _run(_argv(name, out, tmp_path, 1))
    assert r2.exit_code == 0, r2.output
    assert f"replacing its earlier {name} run as one set" in r2.output
    man2 = read_manifest(out)
    assert man2["run_id"] != man["run_id"] and is_complete(out)


class _Killed(BaseException):
    """Stands in for a kill -9 between two writes (no ``except Exception`` of the code under test stops it)."""


@pytest.mark.parametrize("name", COMMANDS)
def test_a_kill_after_result_json_leaves_the_earlier_run_whole(name, tmp_path, monkeypatch):
    out = tmp_path / "run"
    assert _run(_argv(name, out, tmp_path, 0)).exit_code == 0
    before = _files(out)
    module, attr = LATER_WRITER[name]
    mod = sys.modules.get(module) or __import__(module, fromlist=[attr])
    seen = {}

    def dies(path, *a, **kw):
        seen["result.json written"] = (Path(path).parent / "result.json").is_file()
        raise _Killed

    monkeypatch.setattr(mod, attr, dies)
    with pytest.raises(_Killed):
        _run(_argv(name, out, tmp_path, 1))
    assert seen["result.json written"]                             # the kill came after the new result.json
    after = {k: v for k, v in _files(out).items() if not k.startswith(STAGING)}
    assert after == before                                         # the earlier run's complete set
    monkeypatch.undo()
    assert is_complete(out)
    r = _run(_argv(name, out, tmp_path, 1))                        # the next run on the folder is clean
    assert r.exit_code == 0, r.output
    assert is_complete(out) and not (out / STAGING).exists()


def test_the_refusal_is_one_line_and_exit_2_from_the_real_entry_point(tmp_path):
    out = tmp_path / "other-run"
    out.mkdir()
    _loop_folder(out)
    before = _files(out)
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", *_argv("vp", out, tmp_path, 0)],
                       capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith(f"error: {out}") and "--out" in lines[0], p.stderr
    assert "holds a loop run" in lines[0]
    assert _files(out) == before


def test_a_set_a_kill_left_uncommitted_is_no_run_to_the_card_or_the_ledger(tmp_path):
    """kill -9 before the commit point leaves ``.judgeaudit-staging`` (the next command on the folder discards
    it); until then, the readers of run folders do not count its ``result.json`` as a run."""
    from judgeaudit.card.sources import collect
    from judgeaudit.ledger.score import load_results

    out = tmp_path / "runs" / "vp"
    assert _run(_argv("vp", out, tmp_path, 0)).exit_code == 0
    committed = json.loads((out / "result.json").read_text())["run_id"]
    (out / STAGING).mkdir()
    ghost = json.loads((out / "result.json").read_text())
    ghost["run_id"] = "never-committed"
    (out / STAGING / "result.json").write_text(json.dumps(ghost))
    assert [r.run_id for r in collect([tmp_path / "runs"])] == [committed]
    assert [r.run_id for r in load_results([tmp_path / "runs"])] == [committed]


@pytest.mark.parametrize("name", ["validity", "cap", "vp"])
def test_the_files_a_command_declares_it_writes_are_the_files_its_run_writes(name):
    """Each analysis declares once the files its run writes (checked before a run and by an experiment file);
    the declaration is the set a run's manifest lists."""
    import importlib

    from judgeaudit.experiment import _WRITES

    mod = {"validity": "validity", "cap": "cap", "vp": "validation_power"}[name]
    writes = importlib.import_module(f"judgeaudit.analyses.{mod}.options").WRITES
    assert set(writes) == SETS[name] and _WRITES[name] == writes
