"""``judgeaudit calibrate`` end to end on planted judged sets: a replay file, a run folder's
verdicts.parquet, the four targets, and bad input (one line naming file, line and field, exit 2,
nothing written)."""

from __future__ import annotations

import json
import math
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cardshape import whole
from typer.testing import CliRunner

from judgeaudit.analyses.calibrate import ppi_mean_ci, rogan_gladen
from judgeaudit.cli import app
from judgeaudit.errors import InputError


def _invoke(argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    if isinstance(r.exception, InputError):
        return 2, r.output + f"error: {r.exception}\n"
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError("".join(traceback.format_exception(r.exception)))
    return r.exit_code, r.output


def _planted(tmp_path: Path, n_items=1500, n_lab=300, seed=0):
    """A binary judge with TPR 0.85, TNR 0.75 on items of prevalence 0.3, as a replay JSONL with scores
    (pass = score ≥ 5) and a labels CSV on the first n_lab items."""
    rng = np.random.default_rng(seed)
    y = rng.random(n_items) < 0.3
    yhat = np.where(y, rng.random(n_items) < 0.85, rng.random(n_items) >= 0.75)
    score = np.where(yhat, rng.integers(5, 10, n_items), rng.integers(1, 5, n_items))
    ids = [f"i{k:04d}" for k in range(n_items)]
    rows = [{"request_id": i, "score": int(s)} for i, s in zip(ids, score, strict=True)]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"id": ids[:n_lab], "label": ["pass" if v else "fail" for v in y[:n_lab]]}).to_csv(labels,
                                                                                                      index=False)
    return verdicts, labels, y, yhat, ids


def test_pass_rate_from_a_replay_file(tmp_path):
    verdicts, labels, y, yhat, _ = _planted(tmp_path)
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--target",
                         "pass_rate", "--threshold", 5, "--out", tmp_path / "out", "--bootstrap", 500])
    assert code == 0, out
    r = json.loads((tmp_path / "out" / "result.json").read_text())["calibrate"]
    lab = np.arange(len(y)) < 300
    yl, yhl, yhu = y[lab].astype(float), yhat[lab].astype(float), yhat[~lab].astype(float)
    assert r["ppi"]["ci"] == pytest.approx(list(ppi_mean_ci(yl, yhl, yhu)), abs=1e-12)
    assert r["human"]["estimate"] == pytest.approx(yl.mean())
    assert r["naive"]["estimate"] == pytest.approx(yhat.mean())
    rg = rogan_gladen(yl == 1, yhl == 1, yhu == 1, n_boot=500, seed=0)
    assert r["rogan_gladen"]["estimate"] == pytest.approx(rg.estimate)
    assert r["rogan_gladen"]["ci"] == pytest.approx(list(rg.ci))
    # the planted bias: the naive rate (~0.43) excludes the truth 0.3; PPI++ and Rogan–Gladen cover it
    assert r["naive"]["ci"][0] > 0.35
    assert r["ppi"]["ci"][0] <= 0.3 <= r["ppi"]["ci"][1]
    assert r["rogan_gladen"]["ci"][0] <= 0.3 <= r["rogan_gladen"]["ci"][1]
    assert r["n_eff"]["value"] > 300 and r["n_eff"]["own"] is True
    a = r["agreement"]
    assert a["raw_agreement"] == pytest.approx(np.mean(yl == yhl))
    assert a["constant_predictor"]["label"] == "0" and a["base_rate"]["1"] == pytest.approx(yl.mean())
    assert r["n_labelled"] == 300 and r["n_unlabelled"] == 1200
    md = (tmp_path / "out" / "report.md").read_text()
    assert "PPI++" in md and "judgeaudit's own" in md and "Rogan–Gladen" in md
    assert (tmp_path / "out" / "report.html").stat().st_size < 200_000   # small: no plotly


def test_run_folder_verdicts_and_failed_calls_are_counted(tmp_path):
    verdicts, labels, y, yhat, ids = _planted(tmp_path, n_items=400, n_lab=100)
    rows = [json.loads(s) for s in verdicts.read_text().splitlines()]
    run = tmp_path / "run"
    run.mkdir()
    df = pd.DataFrame({"request_id": [r["request_id"] for r in rows], "judge_id": "api:x/y",
                       "score": [float(r["score"]) for r in rows], "label": None, "epoch": 0,
                       "error": [None] * len(rows), "parse_ok": True})
    df.loc[0, "error"] = "HTTP 500"
    df.loc[1, "parse_ok"] = False
    df.to_parquet(run / "verdicts.parquet")
    code, out = _invoke(["calibrate", "--verdicts", run, "--labels", labels, "--target", "accuracy",
                         "--threshold", 5, "--out", tmp_path / "out", "--bootstrap", 200])
    assert code == 0, out
    r = json.loads((tmp_path / "out" / "result.json").read_text())["calibrate"]
    assert r["judge"] == "api:x/y" and r["unusable_verdicts"] == 2
    assert r["labelled_without_verdict"] == ["i0000", "i0001"] and r["n_labelled"] == 98
    assert any("no usable verdict" in n for n in r["notes"])


def test_mean_and_win_rate(tmp_path):
    rng = np.random.default_rng(3)
    n = 600
    truth = rng.integers(1, 10, n)
    judge = np.clip(truth + rng.integers(0, 3, n), 1, 9)   # scores high by about one point
    (tmp_path / "v.csv").write_text("request_id,score\n" + "".join(f"q{i},{s}\n" for i, s in enumerate(judge)))
    (tmp_path / "l.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "label": int(t)}) + "\n"
                                              for i, t in enumerate(truth[:150])))
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{tmp_path / 'v.csv'}", "--labels", tmp_path / "l.jsonl",
                         "--target", "mean", "--out", tmp_path / "m", "--bootstrap", 200])
    assert code == 0, out
    r = json.loads((tmp_path / "m" / "result.json").read_text())["calibrate"]
    assert r["rogan_gladen"] is None and r["agreement"]["n"] == 150
    assert r["ppi"]["estimate"] == pytest.approx(
        float(np.mean(judge[150:]) * r["ppi"]["lambda"] + np.mean(truth[:150] - r["ppi"]["lambda"] * judge[:150])))

    choice = rng.choice(["A", "B", "tie"], n, p=[0.5, 0.4, 0.1])
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"request_id": f"p{i}", "choice": c}) + "\n"
                                              for i, c in enumerate(choice)))
    (tmp_path / "pl.csv").write_text("id,label\n" + "".join(f"p{i},{c}\n" for i, c in enumerate(choice[:100])))
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{tmp_path / 'p.jsonl'}", "--labels",
                         tmp_path / "pl.csv", "--target", "win_rate", "--out", tmp_path / "w", "--bootstrap", 200])
    assert code == 0, out
    r = json.loads((tmp_path / "w" / "result.json").read_text())["calibrate"]
    v = pd.Series(choice).map({"A": 1.0, "B": 0.0, "tie": 0.5}).to_numpy()
    # a judge that equals the labels: λ̂ = var(Y)/((1 + n/N)·var(all verdicts)), the PPI++ formula
    assert r["agreement"]["raw_agreement"] == 1.0
    assert r["ppi"]["lambda"] == pytest.approx(np.var(v[:100]) / ((1 + 100 / 500) * np.var(v, ddof=1)), abs=1e-12)
    assert set(r["agreement"]["base_rate"]) <= {"A", "B", "tie"}


@pytest.mark.parametrize("case, line, field", [
    ("bad_label", 3, "label"), ("repeat_id", 4, "id"), ("unknown_id", 2, "id"), ("no_threshold", None, "--threshold"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, case, line, field):
    verdicts, labels, *_ = _planted(tmp_path, n_items=50, n_lab=10)
    text = labels.read_text().splitlines()
    if case == "bad_label":
        text[2] = text[2].split(",")[0] + ",maybe"
    elif case == "repeat_id":
        text[3] = text[1]
    elif case == "unknown_id":
        text[1] = "zzz," + text[1].split(",")[1]
    labels.write_text("\n".join(text) + "\n")
    argv = ["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--target", "pass_rate",
            "--out", tmp_path / "out"] + ([] if case == "no_threshold" else ["--threshold", 5])
    code, out = _invoke(argv)
    assert code == 2
    err = [s for s in out.splitlines() if s.startswith("error:")]
    assert len(err) == 1, out
    where = f"{labels}:{line}" if line else ""
    assert where in err[0] and f"field '{field}'" in err[0], err[0]
    assert not (tmp_path / "out").exists()


def test_the_ppi_python_engine_gives_the_builtin_numbers(tmp_path):
    pytest.importorskip("ppi_py", reason="the calibrate extra (ppi-python) is not installed")
    verdicts, labels, *_ = _planted(tmp_path, n_items=800, n_lab=120, seed=4)
    res = {}
    for engine in ("builtin", "ppi-python"):
        code, out = _invoke(["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--threshold", 5,
                             "--out", tmp_path / engine, "--bootstrap", 100, "--engine", engine])
        assert code == 0, out
        res[engine] = json.loads((tmp_path / engine / "result.json").read_text())["calibrate"]["ppi"]
    assert res["ppi-python"]["engine"] == "ppi-python"
    assert res["ppi-python"]["estimate"] == pytest.approx(res["builtin"]["estimate"], abs=1e-8)
    assert res["ppi-python"]["ci"] == pytest.approx(res["builtin"]["ci"], abs=1e-8)


def test_bad_sources_name_their_field(tmp_path):
    verdicts, labels, *_ = _planted(tmp_path, n_items=40, n_lab=10)
    two = tmp_path / "two.csv"
    two.write_text("judge_id,request_id,score\na,i0000,3\nb,i0000,7\n")
    nolabel = tmp_path / "nolabel.csv"
    nolabel.write_text("id,grade\ni0000,1\n")
    cases = [(["--verdicts", f"replay:{two}", "--labels", labels], "--judge"),
             (["--verdicts", f"replay:{verdicts}", "--labels", nolabel], "label"),
             (["--verdicts", tmp_path, "--labels", labels], "--verdicts"),          # a folder with no verdicts.parquet
             (["--verdicts", f"replay:{verdicts}", "--labels", labels, "--target", "median"], "--target")]
    for argv, field in cases:
        code, out = _invoke(["calibrate", *argv, "--threshold", 5, "--out", tmp_path / "out"])
        err = [s for s in out.splitlines() if s.startswith("error:")]
        assert code == 2 and len(err) == 1 and f"field '{field}'" in err[0], out
        assert not (tmp_path / "out").exists()


def _write(tmp_path, yhat, labels, fmt="{:g}"):
    ids = [f"i{k:04d}" for k in range(len(yhat))]
    (tmp_path / "v.csv").write_text("request_id,score\n" + "".join(f"{i},{fmt.format(s)}\n" for i, s in
                                                                   zip(ids, yhat, strict=True)))
    (tmp_path / "l.csv").write_text("id,label\n" + "".join(f"{i},{fmt.format(s)}\n" for i, s in
                                                           zip(ids, labels, strict=False)))
    return f"replay:{tmp_path / 'v.csv'}", tmp_path / "l.csv"


def test_ten_rare_class_labels_all_fail_print_no_point_interval(tmp_path):
    """Prevalence 0.03, 10 random labels, all 0: the run printed 0.000 [0.000, 0.000] and n_eff = inf."""
    rng = np.random.default_rng(2)
    y = rng.random(1000) < 0.03
    y[:10] = False
    yhat = np.where(y, rng.random(1000) < 0.85, rng.random(1000) >= 0.75)
    v, lab = _write(tmp_path, 3 + 4 * yhat.astype(int), y[:10].astype(int))    # pass: score 7, fail: score 3
    code, out = _invoke(["calibrate", "--verdicts", v, "--labels", lab, "--threshold", 5, "--out", tmp_path / "o",
                         "--bootstrap", 200])
    assert code == 0, out
    assert "[0.000, 0.000]" not in out and "inf" not in out and "0.0000, 0.0000]" not in out
    r = json.loads((tmp_path / "o" / "result.json").read_text())["calibrate"]
    assert r["ppi"]["ci"][1] >= 1 - 0.025 ** 0.1 - 1e-12 and r["human"]["ci"] == pytest.approx([0.0, 1 - 0.025 ** 0.1])
    assert r["n_eff"]["value"] is None and r["support"]["widened_to"] == "Clopper–Pearson (exact)"
    assert "only 0 of 10 labels are positive" in out


def test_a_graded_scale_with_labels_at_its_top_is_not_called_biased_downward(tmp_path):
    """1–5 scale, truth 4.39, the judge grades one point high half of the time; 10 labels, all 5: the
    run printed 5.000 [5.000, 5.000] and called the judge biased downward."""
    rng = np.random.default_rng(5)
    truth = rng.choice(np.arange(1, 6), 800, p=[0.02, 0.03, 0.07, 0.27, 0.61])
    truth[:10] = 5
    judge = np.minimum(5, truth + (rng.random(800) < 0.5))
    v, lab = _write(tmp_path, judge, truth[:10])
    code, out = _invoke(["calibrate", "--verdicts", v, "--labels", lab, "--target", "mean", "--scale", "1,5",
                         "--out", tmp_path / "o", "--bootstrap", 200])
    assert code == 0, out
    assert "downward" not in out and "[5.000, 5.000]" not in out
    r = json.loads((tmp_path / "o" / "result.json").read_text())["calibrate"]
    assert r["ppi"]["ci"][0] <= truth.mean() <= r["ppi"]["ci"][1]
    assert r["scale"] == [1.0, 5.0] and r["support"]["widened_to"] == "Hoeffding on the scale [1, 5]"


def test_rogan_gladen_rates_and_their_intervals_in_the_result(tmp_path):
    verdicts, labels, y, yhat, _ = _planted(tmp_path, n_items=600, n_lab=200, seed=2)
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--threshold", 5,
                         "--out", tmp_path / "o", "--bootstrap", 200])
    assert code == 0, out
    rg = json.loads((tmp_path / "o" / "result.json").read_text())["calibrate"]["rogan_gladen"]
    yl, yhl = y[:200], yhat[:200]
    assert rg["tpr"] == pytest.approx(np.mean(yhl[yl])) and rg["tpr_ci"][0] < rg["tpr"] < rg["tpr_ci"][1]
    assert rg["tnr"] == pytest.approx(np.mean(~yhl[~yl])) and rg["tnr_ci"][0] < rg["tnr"] < rg["tnr_ci"][1]
    assert "TPR is" in out and "TNR" in out


def test_a_confident_subset_of_labels_is_flagged(tmp_path):
    """The labels went to the judge's most confident items (its confident fails): the verdicts on the
    labelled items differ from the rest, and the run says the labels may not be a random subset."""
    from judgeaudit.analyses.calibrate.simulate import confident_subset

    y, yhat, lab = confident_subset(1, 40, 800, seed=3)
    order = np.argsort(~lab[0])       # the labelled items first
    v, labels = _write(tmp_path, 3 + 4 * yhat[0][order].astype(int), y[0][order][:40].astype(int))
    code, out = _invoke(["calibrate", "--verdicts", v, "--labels", labels, "--threshold", 5, "--out",
                         tmp_path / "o", "--bootstrap", 200])
    assert code == 0, out
    r = json.loads((tmp_path / "o" / "result.json").read_text())["calibrate"]
    assert r["random_subset"]["flagged"] and r["random_subset"]["p"] < 0.05
    assert "may not be a uniformly random subset" in out or any("uniformly random" in n for n in r["notes"])


def test_the_gate_and_the_card_read_a_calibrate_run(tmp_path):
    """A bar on calibrate's κ was BLIND ("the card holds no such quantity") and the card ignored the run."""
    verdicts, labels, *_ = _planted(tmp_path, n_items=1200, n_lab=300, seed=6)
    run = tmp_path / "cal"
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--threshold", 5,
                         "--out", run, "--bootstrap", 300])
    assert code == 0, out
    r = json.loads((run / "result.json").read_text())["calibrate"]
    lo = r["agreement"]["cohen_kappa_ci"][0]
    policy = tmp_path / "p.yaml"
    policy.write_text(f"bars:\n  - bar: calibrate.agreement.cohen_kappa >= {lo - 0.05:.3f}\n"
                      f"  - bar: calibrate.tpr >= {r['rogan_gladen']['tpr_ci'][0] - 0.01:.3f}\n"
                      f"  - bar: calibrate.tnr >= {r['rogan_gladen']['tnr_ci'][0] - 0.01:.3f}\n"
                      f"  - bar: calibrate.estimate <= {r['ppi']['ci'][1] + 0.01:.3f}\n")
    code, out = _invoke(["gate", policy, "--from", run])
    assert code == 0 and "PASS" in out, out
    policy.write_text(f"bars:\n  - bar: calibrate.agreement.cohen_kappa >= {lo + 0.02:.3f}\n")
    code, out = _invoke(["gate", policy, "--from", run])
    assert code != 0 and "BLIND" in out and "no such quantity" not in out, out
    code, out = _invoke(["card", "--judge", r["judge"], "--from", run, "--out", tmp_path / "card"])
    assert code == 0, out
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    sec = card["sections"]["calibrate"]
    assert sec["agreement"]["cohen_kappa"]["value"] == pytest.approx(r["agreement"]["cohen_kappa"])
    assert sec["tpr"]["ci"] == pytest.approx(r["rogan_gladen"]["tpr_ci"])
    assert any(s.startswith("Calibrated pass_rate") for s in card["verdict"])
    assert "Calibrated estimate" in (tmp_path / "card" / "card.html").read_text()


def test_plan_from_stated_rates_and_from_a_pilot(tmp_path):
    code, out = _invoke(["calibrate", "--plan", "--width", 0.1, "--prevalence", 0.3, "--tpr", 0.85, "--tnr", 0.75,
                         "--unlabelled", 5000, "--sets", 100, "--out", tmp_path / "plan"])
    assert code == 0, out
    lines = [s for s in out.splitlines() if s.startswith(("PPI++", "human"))]
    assert len(lines) == 2 and "coverage" in lines[0]
    plan = json.loads((tmp_path / "plan" / "plan.json").read_text())["calibrate_plan"]
    assert plan["ppi"]["n"] < plan["human"]["n"] == math.ceil((2 * 1.959963984540054) ** 2 * 0.21 / 0.01)
    verdicts, labels, *_ = _planted(tmp_path, n_items=600, n_lab=100, seed=8)
    code, out = _invoke(["calibrate", "--plan", "--width", 0.1, "--verdicts", f"replay:{verdicts}", "--labels",
                         labels, "--threshold", 5, "--sets", 100])
    assert code == 0 and out.count(" labels") >= 2, out
    code, out = _invoke(["calibrate", "--plan", "--width", 0.1, "--prevalence", 0.3])
    assert code == 2 and "field '--tpr'" in out, out


def test_labels_drawn_per_stratum(tmp_path):
    """Stratum B (20% of the items) is labelled four times as often as A: the stratified estimate covers."""
    rng = np.random.default_rng(9)
    size = {"A": 1600, "B": 400}
    p, rates = {"A": 0.1, "B": 0.6}, {"A": (0.9, 0.9), "B": (0.6, 0.95)}
    ids, yh, lab, strat = [], [], [], []
    for s in ("A", "B"):
        t = rng.random(size[s]) < p[s]
        v = np.where(t, rng.random(size[s]) < rates[s][0], rng.random(size[s]) >= rates[s][1])
        n_lab = 150
        for k in range(size[s]):
            ids.append(f"{s}{k}")
            yh.append(int(v[k]))
            strat.append(s)
            lab.append(int(t[k]) if k < n_lab else None)
    (tmp_path / "v.csv").write_text("request_id,score\n" + "".join(f"{i},{3 + 4 * v}\n" for i, v in zip(ids, yh)))
    (tmp_path / "l.csv").write_text("id,label\n" + "".join(f"{i},{y}\n" for i, y in zip(ids, lab) if y is not None))
    (tmp_path / "s.csv").write_text("id,stratum\n" + "".join(f"{i},{s}\n" for i, s in zip(ids, strat)))
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{tmp_path / 'v.csv'}", "--labels", tmp_path / "l.csv",
                         "--threshold", 5, "--strata", tmp_path / "s.csv", "--out", tmp_path / "o", "--bootstrap",
                         100])
    assert code == 0, out
    r = json.loads((tmp_path / "o" / "result.json").read_text())["calibrate"]
    st = r["stratified"]
    assert [row["weight"] for row in st["strata"]] == pytest.approx([0.8, 0.2])
    assert st["ci"][0] <= 0.2 <= st["ci"][1] and out.startswith("Stratified PPI++")
    assert any(n.startswith("labels drawn per stratum") for n in r["notes"])
    (tmp_path / "s.csv").write_text("id,stratum\n" + "".join(f"{i},{s}\n" for i, s in zip(ids[:-1], strat)))
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{tmp_path / 'v.csv'}", "--labels", tmp_path / "l.csv",
                         "--threshold", 5, "--strata", tmp_path / "s.csv", "--out", tmp_path / "o2"])
    assert code == 2 and "field 'id'" in out and "no stratum" in out and not (tmp_path / "o2").exists(), out


def test_the_gate_reads_an_undefined_kappa_as_blind_with_its_reason():
    from judgeaudit.gate.quantities import read

    sec = {"measured": True, "n": {"labelled": 10, "positives": 0, "negatives": 10},
           "agreement": {"cohen_kappa": {"value": None, "ci": None}, "raw_agreement": {"value": 0.7, "ci": [0.35, 0.93]},
                         "constant_agreement": {"value": 1.0, "ci": None}, "margin": {"value": -0.3, "ci": None}},
           "estimate": {"value": 0.0, "ci": [0.0, 0.31]}, "human": {"value": 0.0, "ci": [0.0, 0.31]},
           "tpr": {"value": None, "ci": None}, "tnr": {"value": 0.7, "ci": [0.35, 0.93]}}
    card = whole({"sections": {"calibrate": sec}})
    assert "undefined" in read(card, "calibrate.agreement.cohen_kappa")[0].missing
    tnr = read(card, "calibrate.tnr")[0]
    assert (tnr.value, tnr.ci, tnr.n) == (0.7, (0.35, 0.93), 10)
    assert read(card, "calibrate.estimate")[0].n == 10
    assert "no quantity 'kappa'" in read(card, "calibrate.kappa")[0].missing
    assert read(whole({"sections": {}}), "calibrate.tpr")[0].missing == "the card has no such section"


def test_the_result_is_read_back_whole_and_a_renamed_key_is_an_error_naming_it(tmp_path):
    """result.json is written through ``CalibrateFile`` and read back with every key kept; the card reads it
    through the type, so a key renamed in the file is an error naming the file and the key, not an empty cell."""
    from judgeaudit.analyses.calibrate.schema import SCHEMA_VERSION, CalibrateFile

    verdicts, labels, *_ = _planted(tmp_path, n_items=400, n_lab=100, seed=2)
    run = tmp_path / "cal"
    code, out = _invoke(["calibrate", "--verdicts", f"replay:{verdicts}", "--labels", labels, "--threshold", 5,
                         "--out", run, "--bootstrap", 200])
    assert code == 0, out
    raw = json.loads((run / "result.json").read_text())
    typed = CalibrateFile.read(run)
    assert typed.to_json() == raw and raw["schema_version"] == SCHEMA_VERSION
    assert typed.calibrate.ppi.lam == raw["calibrate"]["ppi"]["lambda"]
    assert typed.calibrate.rogan_gladen.positives == raw["calibrate"]["rogan_gladen"]["table"]["tp"] + \
        raw["calibrate"]["rogan_gladen"]["table"]["fn"]
    raw["calibrate"]["ppi"]["point"] = raw["calibrate"]["ppi"].pop("estimate")
    (run / "result.json").write_text(json.dumps(raw))
    code, out = _invoke(["card", "--judge", raw["judge"], "--from", run, "--out", tmp_path / "card"])
    assert code == 2 and str(run / "result.json") in out and "calibrate.ppi.estimate" in out, out
