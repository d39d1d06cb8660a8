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
    # what the command prints: the verdict lines, and the files written
    cmd = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                   tmp_path / "c", "--regrade", "400", "--bootstrap", "100", "--margin", "agreement=0.2")
    assert cmd.returncode == 0, cmd.stderr
    assert r.stdout == cmd.stdout and r.stdout.startswith(f"migrate {res.old_judge} → {res.new_judge}: {res.verdict}")
    assert f"→ {tmp_path / 'm'}/result.json, {tmp_path / 'm'}/report.html" in r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"analysis: migrate\nout: m2\nold: python:os:system\nnew: replay:{new}\nitems: {anchors.name}\n")
    r = cli_main("run", bad)
    assert r.returncode == 2 and "bad.yaml:3" in r.stderr and "--allow-code" in r.stderr
    assert not (tmp_path / "m2").exists()


# ---- the audits read from both judges' cards -----------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_cards(tmp_path_factory):
    """Validity, CAP and world runs of the reference judges (bundled probes and slices), and a card per judge."""
    from judgeaudit.card.make import card
    from judgeaudit.commands.cap import run_cap
    from judgeaudit.commands.default_runs import CAP_SETS, DEFAULT_RUNS
    from judgeaudit.commands.validity import run_validity

    root = tmp_path_factory.mktemp("cards")
    run_validity("bundled", ["reference:length", "reference:random"], out=root / "runs" / "v", n_boot=100,
                 n_regrade=0)
    run_cap(list(CAP_SETS), judge_specs=["reference:length", "reference:random"], n_boot=100,
            store=root / "calls.sqlite", out=root / "runs" / "cap")
    DEFAULT_RUNS["world"].run(["reference:oracle", "reference:flag-all"], root / "world" / "w", root / "w.sqlite",
                              100)
    for j in ("length", "random"):
        card(f"reference:{j}", [root / "runs"], root / f"card-{j}")
    card("reference:oracle", [root / "world"], root / "card-oracle")
    return root


def test_cards_of_the_same_judge_keep_every_audit(tmp_path, cli_main, reference_cards):
    """--old-card and --new-card of the same judge: S and R and each CAP condition (the length judge's card), each
    world gain (the oracle's card) read from the runs the card was built from, every tested one equivalent (the
    very same verdicts: differences 0), and what each run recorded (its run id, the family it resolved) kept in
    result.json."""
    t = sm.same_judge(600, 1)
    t["new"] = t["old"]
    anchors, old, new = _write(tmp_path, t, regrade=False)
    card = reference_cards / "card-length"
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", "--bootstrap", "200", "--old-card", card, "--new-card", card / "card.json")
    assert r.returncode == 0, r.stderr
    res = MigrateResult.read(tmp_path / "m" / "result.json")
    names = {q.name for q in res.audits}
    assert {"validity.S", "validity.R"} <= names
    assert any(n.startswith("cap.judgebench_fixture.") for n in names)
    tested = [q for q in res.audits if q.test != "descriptive"]
    assert tested and all(q.status == "equivalent" and q.estimate == 0.0 for q in tested)
    assert res.verdict == "EQUIVALENT"
    kinds = {(s["judge_role"], s["kind"]) for s in res.audit_sources}
    assert kinds == {("old", "validity"), ("old", "cap"), ("new", "validity"), ("new", "cap")}
    runs = json.loads((card / "card.json").read_text())["sections"]
    v_src = next(s for s in res.audit_sources if s["kind"] == "validity" and s["judge_role"] == "old")
    assert v_src["run_id"] == runs["validity"]["source"]["run_id"] and v_src["judge"] == "reference:length"
    assert v_src["family"] == runs["validity"]["source"]["family"]
    assert v_src["units"] == {"unit": "base item", "n": 48}
    c_src = next(s for s in res.audit_sources if s["kind"] == "cap" and s["set"] == "judgebench_fixture")
    assert c_src["units"]["unit"] == "pair" and c_src["units"]["n"] == runs["cap"]["sets"]["judgebench_fixture"]["overall"]["n"]
    assert any(line.lstrip().startswith("audit  cap.judgebench_fixture.") for line in r.stdout.splitlines())
    oracle = reference_cards / "card-oracle"
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "w", "--bootstrap", "200", "--old-card", oracle, "--new-card", oracle)
    assert r.returncode == 0, r.stderr
    res = MigrateResult.read(tmp_path / "w" / "result.json")
    assert {q.name for q in res.audits} == {f"world.gain.{a}.{m}" for a in ("informed", "placebo")
                                            for m in ("recall", "specificity")}
    assert all(q.status == "equivalent" for q in res.audits) and res.verdict == "EQUIVALENT"
    assert [s["kind"] for s in res.audit_sources] == ["world", "world"]


def test_cards_of_two_judges_compare_their_runs(tmp_path, cli_main, reference_cards):
    """The length judge against the random one: the audits are paired over the shared units of the runs the two
    cards read, and each audit's estimate is new − old of the two cards' own values."""
    t = sm.same_judge(600, 1)
    t["new"] = t["old"]
    anchors, old, new = _write(tmp_path, t, regrade=False)
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", "--bootstrap", "200", "--old-card", reference_cards / "card-length",
                 "--new-card", reference_cards / "card-random")
    assert r.returncode == 0, r.stderr
    res = MigrateResult.read(tmp_path / "m" / "result.json")
    ca = json.loads((reference_cards / "card-length" / "card.json").read_text())["sections"]
    cb = json.loads((reference_cards / "card-random" / "card.json").read_text())["sections"]
    overall = res.quantity("cap.judgebench_fixture.overall")
    va, vb = (c["cap"]["sets"]["judgebench_fixture"]["overall"]["value"] for c in (ca, cb))
    assert overall.estimate == pytest.approx(vb - va, abs=1e-12) and overall.definition.startswith("paired")
    R = res.quantity("validity.R")
    assert R.estimate == pytest.approx(cb["validity"]["metrics"]["R"]["value"] - ca["validity"]["metrics"]["R"]["value"],
                                       abs=1e-12)


@pytest.mark.parametrize("args, field", [
    (("--old-card", "CARD"), "--new-card"),
    (("--old-card", "NOCARD", "--new-card", "NOCARD"), "--old-card"),
    (("--old-card", "CARD", "--new-card", "CARD", "--from", "CARD"), "--from"),
])
def test_bad_cards_are_one_line(tmp_path, cli_main, reference_cards, args, field):
    t = sm.same_judge(100, 1)
    anchors, old, new = _write(tmp_path, t, regrade=False)
    subst = {"CARD": str(reference_cards / "card-length"), "NOCARD": str(tmp_path)}
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", *[subst.get(a, a) for a in args])
    assert r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr
    assert len([line for line in r.stderr.splitlines() if line.startswith("error")]) == 1, r.stderr
    assert not (tmp_path / "m" / "result.json").exists()


def test_from_without_the_judges_runs_is_one_line(tmp_path, cli_main, reference_cards):
    t = sm.same_judge(100, 1)
    anchors, old, new = _write(tmp_path, t, regrade=False)
    r = cli_main("migrate", "--old", f"replay:{old}", "--new", f"replay:{new}", "--items", anchors, "--out",
                 tmp_path / "m", "--from", reference_cards / "runs")
    assert r.returncode == 2 and "no validity, CAP or world run of judge 'old-judge'" in r.stderr
