"""The whole validity CLI path, on a replay file, on the local judge, and from a YAML experiment."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.probes.taxonomy import SLOT_BY_NAME
from judgeaudit.records import probes_frame
from testkit import entry_point


@pytest.fixture(scope="module")
def planted_replay(tmp_path_factory):
    """Two planted judges on the bundled probes: 'perfect' flips on every construct edit and no control;
    'scope_only' flips on scope edits only."""
    probes = probes_frame(read_probes(bundled_probes_path()))
    rows = []
    for judge in ("perfect", "scope_only"):
        for b in probes["base_id"].unique():
            rows.append({"judge_id": judge, "request_id": b, "score": 2.0})
        for r in probes.itertuples():
            axis = SLOT_BY_NAME[r.slot].axis
            moves = axis != "control" and (judge == "perfect" or axis == "scope")
            rows.append({"judge_id": judge, "request_id": r.probe_id, "score": 8.0 if moves else 2.0})
    path = tmp_path_factory.mktemp("replay") / "verdicts.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_validity_run_on_a_replay_file(tmp_path, planted_replay, cli_run):
    out = tmp_path / "out"
    rc, log = cli_run("validity", "run", "--probes", "bundled", "--judge", f"replay:{planted_replay}",
                   "--judge", "reference:constant", "--bootstrap", "300", "--out", str(out))
    assert rc == 0, log
    res = json.loads((out / "result.json").read_text())
    assert res["direction_source"] == "intended" and res["n_base"] == 48 and res["n_probes"] == 576
    assert res["s_floor"] == 0.9 and res["bar"] == 0.75
    p, s = res["judges"]["perfect"], res["judges"]["scope_only"]
    assert (p["S"], p["R"], p["R_scope"], p["R_strength"]) == (1.0, 1.0, 1.0, 1.0) and p["interpretable"]
    assert (s["S"], s["R_scope"], s["R_strength"], s["gap"]) == (1.0, 1.0, 0.0, 1.0)
    assert s["R"] == pytest.approx(4 / 7)                 # 4 of 7 construct edits per base, bases equal
    assert 2.0 < p["tau"] <= 8.0
    assert s["per_slot"]["domain_extension"]["flip_rate"] == 1.0 and s["per_slot"]["hedging_removal"]["flip_rate"] == 0.0
    c = res["judges"]["reference:constant"]
    assert (c["S"], c["R"]) == (1.0, 0.0)
    for key in ("gap_ci", "gap_perm_p", "S_ci", "R_ci", "frontier", "usable_points", "regrade_agreement",
                "parse_failures"):
        assert key in p
    html = (out / "report.html").read_text()
    assert "not human-verified" in html and "plotly" in html
    # the replay file holds no regrades (epoch 1): only the constant judge is re-asked
    assert len(pd.read_parquet(out / "verdicts.parquet")) == 3 * (48 + 576) + 48


def test_validity_run_on_the_local_judge(tmp_path, cli_run, monkeypatch):
    # one compute thread: the count changes the speed only (tests/judges/test_local_reuse.py pins it), and beside
    # another busy core the chooser's probes and warm-up on two threads make those calls several times slower
    monkeypatch.setenv("JUDGEAUDIT_LOCAL_THREADS", "1")
    probes = [json.loads(line) for line in bundled_probes_path().read_text().splitlines()][:24]   # two bases
    pf = tmp_path / "probes.jsonl"
    pf.write_text("".join(json.dumps(p) + "\n" for p in probes))
    out = tmp_path / "out"
    rc, log = cli_run("validity", "run", "--probes", str(pf), "--judge", "local", "--bootstrap", "200",
                   "--regrade", "4", "--out", str(out))
    assert rc == 0, log
    j = json.loads((out / "result.json").read_text())["judges"]["local"]
    assert j["parse_failures"] == 0 and 0 <= j["S"] <= 1 and 0 <= j["R"] <= 1
    assert j["regrade_agreement"] == 1.0            # temperature 0 is deterministic
    v = pd.read_parquet(out / "verdicts.parquet")
    assert len(v) == 2 + 24 + 4 and v["parse_ok"].all()
    # a rerun is served by the call store: no new calls
    rc, log = cli_run("validity", "run", "--probes", str(pf), "--judge", "local", "--bootstrap", "200",
                   "--regrade", "4", "--out", str(out))
    assert rc == 0 and json.loads((out / "result.json").read_text())["judges"]["local"] == j


def test_yaml_experiment_runs_and_bad_files_name_the_line(tmp_path, planted_replay, cli_run):
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"analysis: validity\nout: out\njudges:\n  - spec: replay:{planted_replay}?judge=perfect\n"
                   f"    family: planted\nbootstrap: 100\n")
    rc, log = cli_run("run", str(exp))
    assert rc == 0, log
    assert json.loads((tmp_path / "out" / "result.json").read_text())["judges"]["perfect"]["R"] == 1.0
    exp.write_text("analysis: validity\nout: out\njudges:\n  - local\ns_floor: 1.5\n")
    rc, log = cli_run("run", str(exp))
    assert rc == 2 and "exp.yaml:5: field 's_floor'" in log and "Traceback" not in log
    exp.write_text("analysis: validity\nout: out\n")
    rc, log = cli_run("run", str(exp))
    assert rc == 2 and "field 'judges': required field is missing" in log
    exp.write_text("analysis: validity\njudges: [local\n")
    rc, log = entry_point("run", str(exp))
    assert rc == 2 and "exp.yaml:" in log and "malformed YAML" in log


def test_validity_run_prints_each_estimate_with_its_interval(tmp_path, cli_main):
    """The terminal table carries what the report carries: S, R, … as value [lo, hi] from result.json's *_ci."""
    out = tmp_path / "out"
    r = cli_main("validity", "run", "--judge", "reference:random", "--bootstrap", "50", "--regrade", "0",
                 "--out", out)
    assert r.returncode == 0, r.stderr
    j = json.loads((out / "result.json").read_text())["judges"]["reference:random"]
    row = next(x for x in r.stdout.splitlines() if "reference:random" in x)
    for q in ("S", "R"):
        lo, hi = j[f"{q}_ci"]
        assert lo < hi   # a judge answering at random: the resamples vary
        assert f"{j[q]:.3f} [{lo:.3f}, {hi:.3f}]" in row, (q, row)
