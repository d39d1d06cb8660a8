"""The structural judge in ``world run``: its thresholds, defaults, development split and sensitivity
recorded in result.json and report.html; the run's development items counted, and left out by
``--split report``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judgeaudit.commands.world import run_world_cmd, write_report
from judgeaudit.errors import InputError
from judgeaudit.structural.graph import DEV_RESULT, DEV_SPLIT


@pytest.fixture
def spec(data_dir: Path) -> str:
    """80 HaluEval QA rows (40 questions, each with its right and its hallucinated answer)."""
    return f"halueval:{data_dir / 'halueval'}?part=qa&max_rows=80"


def _dev(group: str) -> bool:      # the recorded rule, by hand
    return int(hashlib.sha256(f"{DEV_SPLIT['seed']}:{group}".encode()).hexdigest()[:16], 16) / 2**64 < 0.2


@pytest.mark.data
def test_world_run_records_the_thresholds_and_counts_development_items(tmp_path, spec):
    r = run_world_cmd(spec, ["structural:lexical?tau_s=0.7", "structural:lexical", "reference:oracle"],
                      ["blind", "informed"], out=tmp_path / "all", votes=1, n_boot=0, progress=False)
    groups = {v.rpartition("/")[0] for v in r.decisions["item_id"]}
    n_dev_groups = sum(_dev(g) for g in groups)
    assert len(groups) == 40 and 0 < n_dev_groups < 40
    cal = r.result["calibration"]
    assert set(cal) == {"structural:lexical?tau_s=0.7", "structural:lexical"}          # not the reference judge
    c = cal["structural:lexical"]
    assert c["parameters"] == {"tau_s": 0.95, "tau_c": 0.8, "top_k": None, "specificity": True}
    assert c["at_defaults"] is True and c["defaults"] == {"tau_s": 0.95, "tau_c": 0.8}
    assert c["dev_split"] == {**DEV_SPLIT} and c["dev_result"] == json.loads(json.dumps(DEV_RESULT))
    assert cal["structural:lexical?tau_s=0.7"]["at_defaults"] is False
    assert r.result["split"] == {"split": "all", "dev_items_in_run": 2 * n_dev_groups, "dev_items_left_out": 0,
                                 "rule": DEV_SPLIT["rule"], "source_set": "halueval_qa"}
    write_report(r, tmp_path / "all")
    html = (tmp_path / "all" / "report.html").read_text()
    assert "Structural judge thresholds" in html and "development items" in html

    rep = run_world_cmd(spec, ["structural:lexical"], ["informed"], out=tmp_path / "rep", votes=1, n_boot=0,
                        progress=False, split="report")
    kept = {v.rpartition("/")[0] for v in rep.decisions["item_id"]}
    assert kept == {g for g in groups if not _dev(g)} and rep.result["provenance"]["items"] == 2 * len(kept)
    assert rep.result["split"]["dev_items_left_out"] == 2 * n_dev_groups
    assert rep.result["split"]["dev_items_in_run"] == 0
    with pytest.raises(InputError) as e:
        run_world_cmd(spec, ["structural:lexical"], ["informed"], out=tmp_path / "bad", split="nope", progress=False)
    assert e.value.field == "--split"


def test_factorial_instrument_factor_with_the_structural_judge(tmp_path):
    """Source × instrument on the tiny QA items: off = reference:oracle, on = structural:lexical.
    By hand (lexical, defaults tau_s 0.95, tau_c 0.8): informed, every right answer has a world sentence
    holding all its content words and numbers (P(entail) = 1) and every wrong one a conflicting number at
    coverage 1 (P(contradict) = 1) or a content word absent (P(entail) = 0.5): recall 1, specificity 1;
    blind, every claim is unsupported: recall 1, specificity 0. The oracle: blind 0/1, informed 1/1."""
    from world_fixtures import tiny_items

    from judgeaudit.commands.world import run_factorial_cmd

    r = run_factorial_cmd("tiny:x", ["reference:oracle", "structural:lexical"], "source,instrument", out=tmp_path,
                          votes=1, n_boot=0, items=tiny_items(), progress=False)
    cells = {c["cell"]: (c["judge"], c["arm"], c["recall"], c["specificity"]) for c in r.result["factorial"]["cells"]}
    assert cells == {"S0I0": ("reference:oracle", "Q0S0T0", 0.0, 1.0), "S1I0": ("reference:oracle", "Q0S1T0", 1.0, 1.0),
                     "S0I1": ("structural:lexical", "Q0S0T0", 1.0, 0.0),
                     "S1I1": ("structural:lexical", "Q0S1T0", 1.0, 1.0)}
    sh = r.result["shapley"]
    # two factors: phi_S = ½[(v(S) − v(∅)) + (v(SI) − v(I))], phi_I = ½[(v(I) − v(∅)) + (v(SI) − v(S))]
    assert sh["recall"] == pytest.approx({"source": 0.5, "instrument": 0.5})
    assert sh["specificity"] == pytest.approx({"source": 0.5, "instrument": -0.5})
    assert sh["balanced_accuracy"] == pytest.approx({"source": 0.5, "instrument": 0.0})
    assert set(r.result["calibration"]) == {"structural:lexical"}


def _bundled_qa(rows: int) -> str:
    """The HaluEval QA slice shipped with the package (no data folder needed)."""
    import judgeaudit

    return f"halueval:{Path(judgeaudit.__file__).parent / 'data' / 'halueval'}?part=qa&max_rows={rows}"


def test_an_hf_nli_model_that_cannot_load_fails_the_run_before_any_arm(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["world", "run", "--set", _bundled_qa(4), "--judge",
                                 f"structural:hf:{tmp_path / 'absent-nli'}", "--arm", "blind", "--arm", "informed",
                                 "--votes", "1", "--bootstrap", "0", "--out", str(out)])
    # the blind arm asks no NLI pair; the model is loaded (or fails) before it runs, not when a pair is asked
    assert isinstance(r.exception, InputError) and "cannot load NLI model" in str(r.exception), r.output
    assert r.exception.field == "judge" and not (out / "report.md").exists()
