"""The register of predicted values on a validity run: each headline number marked registered or
not, and ``--strict-register`` failing the run (after its outputs are written) when one was not."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.ledger.commit import commit
from judgeaudit.ledger.model import Ledger, Prediction
from judgeaudit.ledger.store import write_ledger

HEADLINES = ("S", "R", "R_plus", "wrong_way_rate", "R_scope", "R_strength", "gap")


def _ledger(path, metrics, committed=True, extra=()):
    preds = tuple(Prediction.model_validate({"id": f"P{i}", "run": "validity",
                                             "clauses": [{"metric": m, "bar": ">= 0"}]})
                  for i, m in enumerate(metrics, 1))
    led = Ledger(predictions=preds)
    if committed:
        led = commit(led, at="2026-01-01T00:00:00+00:00", git=None)[0]
    led = led.model_copy(update={"predictions": (*led.predictions, *extra)})
    write_ledger(path, led)
    return path


def _run(tmp_path, name, ledger, strict):
    out = tmp_path / name
    args = ["validity", "run", "--probes", "bundled", "--judge", "reference:constant", "--bootstrap", "20", "--regrade", "0",
            "--out", str(out), "--ledger", str(ledger)] + (["--strict-register"] if strict else [])
    res = CliRunner().invoke(app, args)
    return res, out


def test_register_marks_headlines_and_strict_fails_after_writing(tmp_path):
    # S and R registered for every judge by a wildcard; gap for this judge only; R_plus only by an
    # uncommitted prediction, which registers nothing
    late = Prediction.model_validate({"id": "P9", "clauses": [{"metric": "judges.*.R_plus", "bar": ">= 0"}]})
    led = _ledger(tmp_path / "l.yaml", ["judges.*.S", "/judges/*/R", "/judges/reference:constant/gap"], extra=(late,))
    res, out = _run(tmp_path, "strict", led, strict=True)
    assert res.exit_code == 3, res.output
    assert (out / "result.json").is_file() and (out / "report.html").is_file()
    reg = json.loads((out / "register.json").read_text())["headlines"]
    got = {h["path"]: (h["registered"], h["by"]) for h in reg}
    assert got == {"/judges/reference:constant/S": (True, ["P1"]), "/judges/reference:constant/R": (True, ["P2"]),
                   "/judges/reference:constant/gap": (True, ["P3"]),
                   **{f"/judges/reference:constant/{k}": (False, []) for k in
                      ("R_plus", "wrong_way_rate", "R_scope", "R_strength")}}
    html = (out / "report.html").read_text()
    assert "Register of predicted values" in html and "4 of 7 headline numbers were not registered" in html

    # the same ledger without --strict-register: marked, exit 0
    res, out = _run(tmp_path, "lenient", led, strict=False)
    assert res.exit_code == 0, res.output

    # every headline registered: strict passes
    full = _ledger(tmp_path / "full.yaml", [f"judges.*.{k}" for k in HEADLINES])
    res, out = _run(tmp_path, "full", full, strict=True)
    assert res.exit_code == 0, res.output
    assert all(h["registered"] for h in json.loads((out / "register.json").read_text())["headlines"])


def test_a_tampered_ledger_stops_the_run_before_it_starts(tmp_path):
    led = _ledger(tmp_path / "l.yaml", ["judges.*.S"])
    led.write_text(led.read_text().replace("judges.*.S", "judges.*.R"))
    res, out = _run(tmp_path, "t", led, strict=True)
    assert res.exit_code != 0 and not (out / "result.json").exists()
    assert "edited after it was committed" in str(res.exception)


def test_vp_and_cap_runs_take_the_ledger_too(tmp_path):
    import judgeaudit

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"q": f"q{i}", "ra": "a " * (i % 7 + 1), "rb": "b " * (i % 5 + 1),
                                         "pref": "A" if i % 7 > i % 5 else "B"}) + "\n" for i in range(40)))
    led = _ledger(tmp_path / "l.yaml", [])
    full = Ledger(predictions=(Prediction.model_validate({"id": "V1", "run": "vp", "clauses": [
        {"letter": "a", "metric": "sets.pairs.*.a_imp", "bar": ">= 0"}]}),
        Prediction.model_validate({"id": "C1", "run": "cap", "clauses": [
            {"metric": "sets.judgebench.judges.*.overall", "bar": ">= 0.5"}]})))
    write_ledger(led, commit(full, at="2026-01-01T00:00:00+00:00", git=None)[0])
    res = CliRunner().invoke(app, ["vp", "audit", "--set", f"jsonl:{pairs}?prompt=q&response_a=ra&response_b=rb&label=pref",
                                   "--permutations", "3", "--jobs", "1", "--out", str(tmp_path / "vp"), "--no-transfer",
                                   "--ledger", str(led), "--strict-register"])
    assert res.exit_code == 3, res.output  # a_hum and vp unregistered
    got = {h["path"]: h["by"] for h in json.loads((tmp_path / "vp" / "register.json").read_text())["headlines"]}
    assert got == {"/sets/pairs/item/a_imp": ["V1(a)"], "/sets/pairs/item/a_hum": [], "/sets/pairs/item/vp": [],
                   "/sets/pairs/paired/a_imp": ["V1(a)"], "/sets/pairs/paired/a_hum": [],
                   "/sets/pairs/paired/vp": []}
    assert "Register of predicted values" in (tmp_path / "vp" / "report.html").read_text()

    data = Path(judgeaudit.__file__).parent / "data" / "judgebench_fixture"
    res = CliRunner().invoke(app, ["cap", "run", "--set", f"judgebench:{data}", "--published", "--bootstrap", "20",
                                   "--out", str(tmp_path / "cap"), "--ledger", str(led), "--strict-register"])
    assert res.exit_code == 0, res.output  # every judge's overall registered by the wildcard
    reg = json.loads((tmp_path / "cap" / "register.json").read_text())["headlines"]
    assert len(reg) >= 5 and all(h["by"] == ["C1"] for h in reg)


def test_cap_run_with_a_ledger_writes_its_report_once_with_the_register_section(tmp_path, monkeypatch):
    import judgeaudit
    import judgeaudit.report.html as html

    pages: list[tuple[str, list[str]]] = []
    real = html.write_page

    def counting(path, title, sections, **kw):
        pages.append((str(path), [s.title for s in sections]))
        return real(path, title, sections, **kw)

    monkeypatch.setattr(html, "write_page", counting)
    led = _ledger(tmp_path / "l.yaml", [])
    full = Ledger(predictions=(Prediction.model_validate({"id": "C1", "run": "cap", "clauses": [
        {"metric": "sets.judgebench.judges.*.overall", "bar": ">= 0.5"}]}),))
    write_ledger(led, commit(full, at="2026-01-01T00:00:00+00:00", git=None)[0])
    data = Path(judgeaudit.__file__).parent / "data" / "judgebench_fixture"
    res = CliRunner().invoke(app, ["cap", "run", "--set", f"judgebench:{data}", "--published", "--bootstrap", "20",
                                   "--out", str(tmp_path / "cap"), "--ledger", str(led)])
    assert res.exit_code == 0, res.output
    reports = [titles for path, titles in pages if path.endswith("report.html")]
    assert len(reports) == 1   # rendered once
    assert "Register of predicted values" in reports[0]
    assert "Register of predicted values" in (tmp_path / "cap" / "report.html").read_text()


def test_judgeaudits_own_metrics_are_marked_in_the_register_and_the_ledger_report():
    from judgeaudit.ledger.register import RegisterEntry
    from judgeaudit.ledger.report import table6
    from judgeaudit.ledger.score import Score
    from judgeaudit.report.register import register_section

    entries = [RegisterEntry(f"/judges/j/{k}", 0.5, ("P1",)) for k in ("S", "R_plus", "wrong_way_rate", "R_excess")]
    assert [e.own for e in entries] == [False, True, True, True]
    html = register_section(entries, "l.yaml").body
    assert "/judges/j/R_plus (judgeaudit&#x27;s own, not a paper quantity)" in html or \
        "/judges/j/R_plus (judgeaudit's own, not a paper quantity)" in html
    assert "/judges/j/S (judgeaudit" not in html
    md = table6([Score("P1", "P1", ">= 0.5", "met", "as predicted", 0.6, None, "r", "x", own=True)])
    assert "| P1 | >= 0.5 (judgeaudit's own metric, not a paper quantity) | met | 0.600 |" in md
