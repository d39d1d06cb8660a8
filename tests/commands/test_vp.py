"""`judgeaudit vp audit` and `judgeaudit datasets list`, driven through typer's CliRunner."""

from __future__ import annotations

import json

import pytest
from testkit import length_pairs_file
from typer.testing import CliRunner

from judgeaudit.commands import datasets as datasets_cmd
from judgeaudit.commands import vp as vp_cmd
from judgeaudit.errors import InputError


def test_vp_audit_writes_result_and_report(tmp_path):
    p = length_pairs_file(tmp_path, 60)
    out = tmp_path / "out"
    res = CliRunner().invoke(vp_cmd.app, ["audit", "--set", f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref",
                                          "--permutations", "3", "--out", str(out), "--no-transfer"])
    assert res.exit_code == 0, res.output
    d = json.loads((out / "result.json").read_text())
    r = d["sets"]["pairs"]
    assert r["paired"]["members"]["length_only"]["accuracy"] > 0.85
    assert r["paired"]["preferred_longer_rate"] == 1.0 and r["paired"]["prefer_shorter_accuracy"] == 0.0
    assert r["item"]["n"] == 120 and d["config"]["n_permutations"] == 3
    html = (out / "report.html").read_text()
    assert "Table 7" in html and "per-member breakdown" in html
    # every permutation p-value has its resolution beside it: 1/(B+1) with B = 3 permutations
    assert "min attainable p" in html and "0.250" in html and "p (BH)" in html
    assert r["paired"]["members"]["length_only"]["p_value_min"] == 0.25
    assert "label-permutation null" in html and "sits at or below" in html


def test_vp_audit_bad_spec_raises_input_error(tmp_path):
    res = CliRunner().invoke(vp_cmd.app, ["audit", "--set", "nosuch:/x", "--out", str(tmp_path)])
    assert res.exit_code != 0 and isinstance(res.exception, InputError)


def test_ceiling_option_parses():
    assert vp_cmd.parse_ceiling("mt:paired=0.6,0.5,0.7") == ("mt", "paired", (0.6, 0.5, 0.7))
    assert vp_cmd.parse_ceiling("mt=0.6,0.5,0.7") == ("mt", None, (0.6, 0.5, 0.7))


def test_datasets_list_shows_the_registry():
    res = CliRunner().invoke(datasets_cmd.app, ["list"])
    assert res.exit_code == 0
    for name in ("judgebench", "llmbar", "rm_bench", "mt_bench", "halueval", "frank", "jsonl", "hf"):
        assert name in res.output


@pytest.mark.data
def test_vp_audit_of_an_llmbar_folder_audits_each_set_and_pools_on_request(data_dir, tmp_path):
    """The README's `vp audit --set llmbar:ROOT` audits the 6 sets found there as 6 rows of Table 7
    (it audited one pooled set of 773 pairs, mixing author and human-majority labels); the report
    says which rows are one set of a folder and which are a pool asked for with ?pool=true."""
    root = data_dir / "llmbar"
    out = tmp_path / "out"
    res = vp_cmd.run_audit([f"llmbar:{root}?max_rows=40"], mode="paired", permutations=0, n_boot=10,
                           transfer=False, out=out)
    assert res.set_names == ["llmbar:Natural", "llmbar:Adversarial/Neighbor", "llmbar:Adversarial/GPTInst",
                             "llmbar:Adversarial/GPTOut", "llmbar:MT-Bench", "llmbar:LLMEval2"]
    d = json.loads((out / "result.json").read_text())
    assert d["sets"]["llmbar:MT-Bench"]["meta"]["label_origin"] == "human_majority"
    assert d["sets"]["llmbar:Natural"]["meta"]["label_origin"] == "author_gold"
    html = (out / "report.html").read_text()
    assert "llmbar:Natural (one subset of llmbar:" in html and "audited as its own set" in html
    pooled = vp_cmd.run_audit([f"llmbar:{root}?pool=true&max_rows=120"], mode="paired", permutations=0,
                              n_boot=10, transfer=False, out=tmp_path / "pooled")
    assert pooled.set_names == ["llmbar"]
    assert "llmbar (pooled on request over subset Natural, " in (tmp_path / "pooled" / "report.html").read_text()


def test_vp_audit_prints_each_kappa_with_its_interval(tmp_path, cli_main):
    """The terminal summary carries what the report carries: κ as value [lo, hi], from result.json's a_imp_ci."""
    p = length_pairs_file(tmp_path, 60)
    out = tmp_path / "out"
    r = cli_main("vp", "audit", "--set", f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref",
                 "--permutations", "3", "--out", out, "--no-transfer")
    assert r.returncode == 0, r.stderr
    sets = json.loads((out / "result.json").read_text())["sets"]["pairs"]
    for mode in ("item", "paired"):
        m = sets[mode]
        lo, hi = m["a_imp_ci"]
        assert lo <= m["a_imp"] <= hi
        line = next(x for x in r.stdout.splitlines() if x.startswith(f"pairs · {mode}: "))
        assert f"κ {m['a_imp']:.3f} [{lo:.3f}, {hi:.3f}]" in line, line
    assert "n = 60 pairs" in r.stdout and "n = 120 items" in r.stdout


def test_the_audit_runs_its_sets_on_the_run_context_backend(tmp_path):
    """``run_command`` takes the command's ``RunContext`` like the other commands: the (set, mode) audits go
    through its backend's ``map``, with the result of the audit run here."""
    from judgeaudit.runtime.context import RunContext

    class Recording:
        name = "recording"

        def __init__(self):
            self.jobs = []

        def map(self, fn, jobs, kwargs):
            self.jobs += jobs
            return [fn(*job, **kwargs) for job in jobs]

    p = length_pairs_file(tmp_path, 30)
    values = {"sets": [f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref"], "permutations": 2,
              "no_transfer": True, "jobs": 1}
    backend = Recording()
    on_backend = vp_cmd.run_command({**values, "out": tmp_path / "a"}, context=RunContext(backend=backend))
    here = vp_cmd.run_command({**values, "out": tmp_path / "b"})
    assert [(job[1], job[3]) for job in backend.jobs] == [("pairs", ("item",)), ("pairs", ("paired",))]
    assert on_backend.to_dict() == here.to_dict()
