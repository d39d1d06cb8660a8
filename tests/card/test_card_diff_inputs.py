"""``card diff`` compares only what it can stand behind: two runs sharing one unit are "not comparable"
(the A/B columns still show the cards' own values); a validity run records its inputs' hashes, an
edited probe file is refused, and the diff works from another working directory."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from typer.testing import CliRunner

from judgeaudit.cli import app
from test_card_diff_paired import _loop_folder, _net_of


def test_one_shared_response_is_not_comparable_and_the_columns_show_each_cards_values(tmp_path):
    ends_a = {f"r{i}": [True, False, i % 2 == 0, False] for i in range(40)}
    ends_b = {"r0": [True, True, True, True], **{f"s{i}": [True, True, False, True] for i in range(40)}}
    a = _loop_folder(tmp_path / "a", {"blind": ends_a})
    b = _loop_folder(tmp_path / "b", {"blind": ends_b})
    r = CliRunner()
    for name, folder in (("ca", a), ("cb", b)):
        assert r.invoke(app, ["card", "--judge", "local", "--from", str(folder), "--out", str(tmp_path / name)]).exit_code == 0
    res = r.invoke(app, ["card", "diff", str(tmp_path / "ca"), str(tmp_path / "cb")])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("| loop.blind.net |"))
    assert row == (f"| loop.blind.net | {_net_of(ends_a):.3f} | {_net_of(ends_b):.3f} | — | — | not comparable | "
                   "not comparable: 1 shared response, fewer than 10 |")
    assert "0 of 0 compared quantities changed" in res.output and "1 not comparable" in res.output


def _validity_run(tmp_path: Path, probes: Path) -> None:
    from judgeaudit.commands.validity import run_validity

    run_validity(str(probes), ["reference:length", "reference:random"], out=tmp_path / "v", n_boot=100, n_regrade=0)


def test_the_run_records_its_input_hashes_and_an_edited_probe_file_is_refused(tmp_path):
    from judgeaudit import __version__
    from judgeaudit.commands.card import card
    from judgeaudit.probes.io import bundled_probes_path
    from judgeaudit.runinfo import file_sha256

    probes = tmp_path / "probes.jsonl"
    shutil.copy(bundled_probes_path(), probes)
    _validity_run(tmp_path, probes)
    res = json.loads((tmp_path / "v" / "result.json").read_text())
    assert res["inputs"]["files"]["probes"] == {"path": str(probes.resolve()), "sha256": file_sha256(probes)}
    assert res["inputs"]["judgeaudit"] == __version__ and res["inputs"]["template_version"]
    ca = card("reference:length", [tmp_path / "v"], tmp_path / "ca")
    cb = card("reference:random", [tmp_path / "v"], tmp_path / "cb")
    from judgeaudit.card.diff import diff_cards

    before = {c.quantity: c for c in diff_cards(ca, cb, n_boot=200)}
    assert before["validity.gap"].how.startswith("paired over 48 shared base items")
    # edit the probe file after the run: a scope slot and a strength slot trade places (main read the
    # edited file, and reference:length's gap went from −0.219 to +0.097 on the A column)
    rows = [json.loads(line) for line in probes.read_text().splitlines()]
    for row in rows:
        row["slot"] = {"domain_extension": "condition_removal", "condition_removal": "domain_extension"}.get(
            row["slot"], row["slot"])
    probes.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    after = {c.quantity: c for c in diff_cards(ca, cb, n_boot=200)}
    gap = after["validity.gap"]
    assert gap.ci is None and not gap.flagged
    assert "changed after the run (SHA-256 differs" in gap.how
    assert (gap.a, gap.b) == (before["validity.gap"].a, before["validity.gap"].b)   # the cards' own values
    again = card("reference:length", [tmp_path / "v"], tmp_path / "ca2")               # a card made now flags it
    assert again["sections"]["validity"]["source"]["inputs_changed"] == [
        "its probes input ../probes.jsonl changed after the run (SHA-256 differs from the one recorded)"]
    assert "Input changed since the run" in (tmp_path / "ca2" / "card.html").read_text()
    assert any(line.startswith("The validity run's input changed after it ran") for line in again["verdict"])


def test_card_diff_works_from_another_working_directory(tmp_path, monkeypatch):
    from judgeaudit.probes.io import bundled_probes_path

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(bundled_probes_path(), work / "probes.jsonl")
    monkeypatch.chdir(work)
    _validity_run(Path("."), Path("probes.jsonl"))          # relative paths, as a user types them
    r = CliRunner()
    for j, name in (("reference:length", "ca"), ("reference:random", "cb")):
        assert r.invoke(app, ["card", "--judge", j, "--from", "v", "--out", name]).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = r.invoke(app, ["card", "diff", str(work / "ca"), str(work / "cb")])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("| validity.R |"))
    assert "paired over 48 shared base items, each run at its own matched-invariance τ" in row
    assert os.getcwd() == str(elsewhere)
