"""``judgeaudit migrate``: both judges' verdicts replayed on the user's anchors, the verdict, the link, the page,
``migrate apply`` and one-line refusals of bad input."""

from __future__ import annotations

import json

import pytest

from judgeaudit.analyses.migrate import Link, MigrateResult
from judgeaudit.analyses.migrate import simulate as sm


def _write(tmp_path, table, *, regrade=True, new_id="new-judge"):
    anchors = tmp_path / "anchors.jsonl"
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    with anchors.open("w") as fa, old.open("w") as fo, new.open("w") as fn:
        for i, r in table.iterrows():
            fa.write(json.dumps({"item_id": r.anchor_id, "text": f"answer {i}", "system": f"s{i % 4}"}) + "\n")
            fo.write(json.dumps({"request_id": r.anchor_id, "score": r.old, "judge_id": "old-judge",
                                 "epoch": 0}) + "\n")
            if regrade and "old_regrade" in table:
                fo.write(json.dumps({"request_id": r.anchor_id, "score": r.old_regrade, "judge_id": "old-judge",
                                     "epoch": 1}) + "\n")
            fn.write(json.dumps({"request_id": r.anchor_id, "score": r.new, "judge_id": new_id, "epoch": 0}) + "\n")
    return anchors, old, new


def test_a_rescaled_judge_is_linkable_and_apply_puts_it_on_the_old_scale(tmp_path, cli_main):
    t = sm.transformed(1200, 4)
    anchors, old, new = _write(tmp_path, t)
    out = tmp_path / "m"
    r = cli_main("migrate", "--old", f"replay:{old}?scale=1,9", "--new", f"replay:{new}?scale=1,10", "--items",
                 anchors, "--out", out, "--regrade", "1200", "--bootstrap", "300")
    assert r.returncode == 0, r.stderr
    assert "LINKABLE" in r.stdout.splitlines()[0]
    res = MigrateResult.read(out / "result.json")
    assert res.verdict == "LINKABLE" and res.old_scale["max"] == 9 and res.new_scale["max"] == 10
    assert res.quantity("agreement").extra["regrade_given"] is True
    link = Link.from_dict(json.loads((out / "link.json").read_text()))
    assert res.link_hash == link.hash
    page = (out / "report.html").read_text()
    assert "The link" in page and "Bland" in page and link.hash in page
    applied = tmp_path / "applied"
    r = cli_main("migrate", "apply", "--link", out / "link.json", "--verdicts", f"replay:{new}?scale=1,10",
                 "--out", applied)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in (applied / "verdicts.jsonl").read_text().splitlines()]
    assert len(rows) == 1200 and all(row["meta"]["link_hash"] == link.hash for row in rows)
    by_grade = {row["meta"]["unlinked_score"]: row["score"] for row in rows}
    assert by_grade[10.0] <= 9.0 and by_grade[1.0] >= 1.0
    assert sorted(by_grade) == sorted(by_grade, key=by_grade.get)   # monotone


def test_a_judge_against_itself_is_equivalent(tmp_path, cli_main):
    t = sm.same_judge(600, 1)
    t["new"] = t["old"]
    anchors, old, new = _write(tmp_path, t, regrade=False)
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", "--bootstrap", "200")
    assert r.returncode == 0, r.stderr
    assert MigrateResult.read(tmp_path / "m" / "result.json").verdict == "EQUIVALENT"


@pytest.mark.parametrize("args, field", [
    (("--margin", "mean"), "--margin"),
    (("--margin", "nosuch=1"), "--margin"),
    (("--margin", "mean=-1"), "--margin"),
    (("--form", "defects"), "--form"),
    (("--link-method", "splines"), "--link-method"),
])
def test_bad_options_are_one_line(tmp_path, cli_main, args, field):
    anchors, old, new = _write(tmp_path, sm.same_judge(20, 0))
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", *args)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and field in r.stderr
    assert not (tmp_path / "m").exists()


def test_an_edited_link_is_refused(tmp_path, cli_main):
    t = sm.transformed(200, 1)
    anchors, old, new = _write(tmp_path, t)
    out = tmp_path / "m"
    assert cli_main("migrate", "--old", f"replay:{old}?scale=1,9", "--new", f"replay:{new}?scale=1,10", "--items",
                    anchors, "--out", out, "--bootstrap", "100").returncode == 0
    d = json.loads((out / "link.json").read_text())
    d["y"][0] = 9.0
    (tmp_path / "edited.json").write_text(json.dumps(d))
    r = cli_main("migrate", "apply", "--link", tmp_path / "edited.json", "--verdicts", f"replay:{new}?scale=1,10",
                 "--out", tmp_path / "a")
    assert r.returncode == 2 and "hash" in r.stderr and r.stderr.count("\n") == 1


def test_retirement_is_announced_within_the_window():
    from datetime import date

    from judgeaudit.judges.retirement import deprecation_date, retirement_note

    assert deprecation_date("openai/gpt-4o-mini") == date(2027, 1, 14)   # LiteLLM's pinned map
    note = retirement_note("j", "openai/gpt-4o-mini", today=date(2026, 12, 4), days=90)
    assert "2027-01-14" in note and "41 days" in note and "migrate" in note
    assert retirement_note("j", "openai/gpt-4o-mini", today=date(2026, 9, 1), days=90) is None
    assert "was retired" in retirement_note("j", "gpt-4o", today=date(2027, 2, 1), days=90)
    assert retirement_note("j", "no-such-model", today=date(2026, 12, 4)) is None


def test_every_command_warns_before_a_pinned_judges_retirement(monkeypatch, capsys):
    from judgeaudit.commands.common import build_judges

    monkeypatch.setenv("JUDGEAUDIT_RETIREMENT_DAYS", "100000")
    build_judges(["api:openai/gpt-4o-mini"], api_base="http://127.0.0.1:9/v1")
    assert "retires on 2027-01-14" in capsys.readouterr().err or "was retired on 2027-01-14" in capsys.readouterr().err


def test_the_card_and_the_gate_read_a_migrate_run(tmp_path, cli_main):
    t = sm.same_judge(1500, 2)
    anchors, old, new = _write(tmp_path, t)
    runs = tmp_path / "runs"
    assert cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                    runs / "migrate", "--regrade", "1500", "--bootstrap", "200").returncode == 0
    res = MigrateResult.read(runs / "migrate" / "result.json")
    assert res.verdict == "EQUIVALENT"
    r = cli_main("card", "--judge", "new-judge", "--from", runs, "--out", tmp_path / "card")
    assert r.returncode == 0, r.stderr
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    sec = card["sections"]["migrate"]
    assert sec["verdict"] == "EQUIVALENT" and sec["role"] == "new"
    assert any("Migration old-judge → new-judge: EQUIVALENT" in v for v in card["verdict"])
    policy = tmp_path / "policy.yaml"
    policy.write_text("bars:\n  - migrate.equivalent >= 1\n  - migrate.agreement >= -0.10\n")
    g = cli_main("gate", policy, "--card", tmp_path / "card" / "card.json")
    assert g.returncode == 0, g.stdout + g.stderr
    policy.write_text("bars:\n  - migrate.verdict >= 1\n")
    g = cli_main("gate", policy, "--card", tmp_path / "card" / "card.json")
    assert g.returncode == 2 and "migrate.equivalent" in g.stdout + g.stderr


def test_an_experiment_file_runs_migrate_and_refuses_unconsented_code(tmp_path, cli_main):
    t = sm.same_judge(400, 3)
    anchors, old, new = _write(tmp_path, t)
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"analysis: migrate\nout: m\nold: replay:{old}\nnew: replay:{new}\nitems: {anchors.name}\n"
                   "regrade: 400\nbootstrap: 100\nmargins:\n  agreement: 0.2\n")
    r = cli_main("run", exp)
    assert r.returncode == 0, r.stderr
    res = MigrateResult.read(tmp_path / "m" / "result.json")
    assert res.margins["agreement"] == 0.2 and res.quantity("agreement").margin == 0.2
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"analysis: migrate\nout: m2\nold: python:os:system\nnew: replay:{new}\nitems: {anchors.name}\n")
    r = cli_main("run", bad)
    assert r.returncode == 2 and "bad.yaml:3" in r.stderr and "--allow-code" in r.stderr
    assert not (tmp_path / "m2").exists()
