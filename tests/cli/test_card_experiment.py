"""An ``analysis: card`` experiment file builds the card ``judgeaudit card`` builds and says what the command says:
its verdict lines on stdout, the files written on stderr; without run folders (nor ``run_missing``) it is refused,
naming the file's key, before anything is written."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError


def _runs(tmp_path):
    vp = tmp_path / "runs" / "vp"
    vp.mkdir(parents=True)
    (vp / "result.json").write_text(json.dumps({"sets": {}, "transfer": {}, "run_id": "x", "created_at": "2026"}))
    return tmp_path / "runs"


def test_a_card_file_prints_what_the_command_prints(tmp_path, cli_main):
    runs = _runs(tmp_path)
    cmd = cli_main("card", "--judge", "reference:oracle", "--from", runs, "--out", tmp_path / "c")
    assert cmd.returncode == 0, cmd.stderr
    exp = tmp_path / "card.yaml"
    exp.write_text("analysis: card\nout: e\njudge: reference:oracle\nfrom: [runs]\nbootstrap: 100\n")
    r = cli_main("run", exp)
    assert r.returncode == 0, r.stderr
    assert r.stdout and r.stdout == cmd.stdout
    e = tmp_path / "e"
    assert f"→ {e}/card.html, {e}/card.md, {e}/card.json, {e}/checklist.md" in r.stderr
    a, b = (json.loads((d / "card.json").read_text()) for d in (tmp_path / "c", e))
    assert a["judge"] == b["judge"] == "reference:oracle" and a["verdict"] == b["verdict"]
    assert {k: v["measured"] for k, v in a["sections"].items()} == {k: v["measured"] for k, v in b["sections"].items()}


def test_a_card_file_without_run_folders_names_its_from_key(tmp_path):
    exp = tmp_path / "card.yaml"
    exp.write_text("analysis: card\nout: e\njudge: reference:oracle\n")
    err = CliRunner().invoke(app, ["run", str(exp)]).exception
    assert isinstance(err, InputError), err
    assert (err.path, err.field) == (str(exp), "from") and "--run-missing" in err.message
    assert not (tmp_path / "e").exists()
