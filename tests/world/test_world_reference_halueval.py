"""The world run with the reference instruments on the real HaluEval QA file: the known values
(oracle informed balanced accuracy 1.0, blind 0.5; McNemar b = the defective answers, c = 0;
flag-all recall 1, specificity 0; flag-none the reverse)."""

from __future__ import annotations

import pytest

from judgeaudit.commands.world import run_world_cmd

reference = pytest.importorskip("judgeaudit.judges.reference")
if not hasattr(reference, "gold_meta"):
    pytest.skip("this install has no world reference instruments (reference:oracle)", allow_module_level=True)
pytest.importorskip("judgeaudit.datasets.world")


def test_reference_instruments_on_halueval_qa(tmp_path, data_dir):
    spec = f"halueval:{data_dir / 'halueval'}?part=qa&max_rows=100"
    r = run_world_cmd(spec, ["reference:oracle", "reference:flag-all", "reference:flag-none"],
                      ["blind", "informed", "placebo"], out=tmp_path, votes=1, n_boot=200, progress=False)
    # the adapter's provenance travels into result.json: which hallucinated variant, the files, PROVENANCE.json
    sp = r.result["provenance"]["set_provenance"]
    assert (sp["variant"], sp["adapter"], sp["n_items"], sp["trimmed"]["from_rows"]) == ("one-turn", "halueval", 100,
                                                                                          1000)
    assert sp["provenance_file"]["dataset"] == "HaluEval (partial)" and sp["excluded"] == {}
    J = r.result["judges"]
    n_def = J["reference:oracle"]["arms"]["informed"]["n_defective"]
    assert n_def == 50 and J["reference:oracle"]["arms"]["informed"]["n"] == 100   # 100 answers of 50 questions
    assert J["reference:oracle"]["arms"]["informed"]["balanced_accuracy"] == 1.0
    assert J["reference:oracle"]["arms"]["blind"]["balanced_accuracy"] == 0.5
    p = next(x for x in r.result["paired"]
             if x["judge"] == "reference:oracle" and x["b"] == "informed" and x["metric"] == "recall")
    assert (p["mcnemar"]["b"], p["mcnemar"]["c"]) == (n_def, 0)
    for arm in ("blind", "informed"):
        fa, fn = J["reference:flag-all"]["arms"][arm], J["reference:flag-none"]["arms"][arm]
        assert (fa["recall"], fa["specificity"], fa["false_alarms_per_clean"]) == (1.0, 0.0, 1.0)
        assert (fn["recall"], fn["specificity"], fn["balanced_accuracy"]) == (0.0, 1.0, 0.5)
