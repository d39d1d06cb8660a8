"""``judgeaudit cap run`` on the package's JudgeBench-format fixture (self-written pairs, simulated judges) and
LLMBar slice, a live fake judge, and the demo; JudgeBench's published numbers on the user's copy (JUDGEAUDIT_DATA_DIR)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.commands import cap as cap_cmd
from judgeaudit.datasets import judgebench
from judgeaudit.errors import InputError
from judgeaudit.report.cap import coverage_matrix, profile_table, strict_vs_consistency

DATA = Path(judgeaudit.__file__).parent / "data"


def test_run_published_writes_result_and_report(tmp_path):
    res = cap_cmd.run_cap([f"judgebench:{DATA / 'judgebench_fixture'}", f"llmbar:{DATA / 'llmbar'}"], published=True,
                          n_boot=100, out=tmp_path)
    d = json.loads((tmp_path / "result.json").read_text())
    assert set(d["sets"]) == {"judgebench", "llmbar", "llmbar_mtbench"}
    j = d["sets"]["judgebench"]["judges"]["arena_hard/fixture-judge-positional"]
    c7 = j["conditions"]["C7"]
    assert {"value", "ci", "n", "coverage", "strict", "consistency", "acc_AB", "acc_BA"} <= set(c7)
    assert c7["coverage"] == "direct" and j["conditions"]["C1"]["coverage"] == "approx"
    assert "overall" in j and d["sets"]["judgebench"]["coverage"]["C3"]["status"] == "unavailable"
    assert isinstance(d["spearman"], list) and isinstance(d["stress"], list) and isinstance(d["l1"], list)
    # the C7 value equals the both-correct share computed directly from the replay table
    pairs = judgebench.load_pairs(DATA / "judgebench_fixture")
    t = judgebench.published_judges(DATA / "judgebench_fixture")["arena_hard/fixture-judge-positional"].merge(pairs, on="pair_id")
    ok = t["choice_ab"].notna() & t["choice_ba"].notna()
    assert (~ok).sum() == 2                     # the fixture's failed call and its unreadable verdict
    both = ((t["choice_ab"] == t["label"]) & (t["choice_ba"] == t["label"]))[ok].mean()
    assert c7["value"] == pytest.approx(both)
    html = (tmp_path / "report.html").read_text()
    assert "CAP coverage matrix" in html and "strict vs. pure consistency" in html and "plotly" in html
    assert "the unit is the base item: a pair's two orderings and all its presentation variants" in html
    prof = profile_table(res, "judgebench")
    assert (prof["C3"] == "—").all() and (prof["C5aug"] == "n.r.").all()
    assert coverage_matrix(res).shape[0] == 8
    assert len(strict_vs_consistency(res)) > 0


def test_cli_run_and_bad_spec(tmp_path):
    from judgeaudit.commands.cap import app

    r = CliRunner().invoke(app, ["run", "--set", f"judgebench:{DATA / 'judgebench_fixture'}", "--published",
                                 "--bootstrap", "50", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "result.json").is_file()
    with pytest.raises(InputError):
        cap_cmd.run_cap([f"frank:{tmp_path}"], published=True)
    with pytest.raises(InputError):
        cap_cmd.run_cap([f"judgebench:{DATA / 'judgebench_fixture'}"])  # no judges


def test_live_reference_judge_both_orders(tmp_path):
    """A live judge through the executor and store, both orders: the length judge is order-consistent and
    right exactly where the preferred response is the longer one."""
    res = cap_cmd.run_cap([f"judgebench:{DATA / 'judgebench_fixture'}"], judge_specs=["reference:length"], n_boot=50,
                          out=tmp_path)
    pairs = judgebench.load_pairs(DATA / "judgebench_fixture")
    pairs = pairs[pairs["response_a"].str.len() != pairs["response_b"].str.len()]
    longer = (pairs["response_a"].str.len() > pairs["response_b"].str.len()).map({True: "A", False: "B"})
    expected = float((longer == pairs["label"]).mean())
    assert res.value("judgebench", "reference:length", "C7", "consistency") == 1.0
    for kind in ("strict", "acc_AB", "acc_BA"):
        assert res.value("judgebench", "reference:length", "C7", kind) == pytest.approx(expected)
    calls = json.loads((tmp_path / "result.json").read_text())
    assert calls["sets"]["judgebench"]["judges"]["reference:length"]["conditions"]["C7"]["n"] == len(pairs)


def test_rm_bench_style_condition_with_a_live_judge(tmp_path, data_dir):
    """RM-Bench's style condition (C5) measured with a live judge: a coin flip is right in both orders 1/4 of the
    time; the length judge is fooled by RM-Bench's style-hard pairs (below the coin)."""
    res = cap_cmd.run_cap([f"rm_bench:{data_dir / 'rm_bench'}"], judge_specs=["reference:random", "reference:length"],
                          n_boot=200, out=tmp_path)
    coin = res.value("rm_bench", "reference:random", "C5", "value")
    length = res.value("rm_bench", "reference:length", "C5", "value")
    assert 0.21 < coin < 0.29
    assert length < coin
    d = json.loads((tmp_path / "result.json").read_text())
    assert d["sets"]["rm_bench"]["coverage"]["C5"]["status"] == "direct"


def test_cap_build_cli_with_api_judges(tmp_path, fake_server, monkeypatch):
    """``judgeaudit cap build`` through the api backend: a scripted generator and a gate of another family
    (the model names are unknown to the family table, so the specs name their families)."""
    import re

    from judgeaudit.cli import app   # the whole command line: it records what each command wrote

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def respond(prompt):
        if prompt.startswith("Two explanations answer the same question"):
            return "5"
        m = re.search(r"Correct answer:\n(.*?)\n", prompt)
        if m:
            return f"The answer is {m[1]}, as a careful reading of the question shows."
        if prompt.startswith("Rewrite the text below in a more polished"):  # within ±20% of the length
            return "In short: " + prompt.split("Text:\n", 1)[1].rsplit("\n\nPolished version:", 1)[0]
        if prompt.startswith("Make the text below"):  # ~2x, within [1.7x, 2.3x]
            body = prompt.split("Text:\n", 1)[1].rsplit("\n\nLonger version:", 1)[0]
            return body + " " + body
        return "A rewritten version of the text that keeps every claim as it was."

    srv = fake_server(responder=respond)
    src = tmp_path / "qa.jsonl"
    src.write_text(json.dumps({"question": "How many legs has a spider?", "answer": "Eight"}) + "\n")
    out = tmp_path / "testbed.jsonl"
    r = CliRunner().invoke(app, ["cap", "build", "--source", str(src), "--generator", "api:openai/gen-model?family=openai",
                                 "--gate", "api:openai/gate-model?family=anthropic", "--api-base", srv.base_url,
                                 "--store", str(tmp_path / "calls.sqlite"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {x["variant"] for x in rows} == {"original", "polished", "padded"}
    assert all(x["label"] == "A" and x["failure_type"] == "factual_fabrication" for x in rows)
    n = len(srv.requests)
    r = CliRunner().invoke(app, ["cap", "build", "--source", str(src), "--generator", "api:openai/gen-model?family=openai",
                                 "--gate", "api:openai/gate-model?family=anthropic", "--api-base", srv.base_url,
                                 "--store", str(tmp_path / "calls.sqlite"), "--out", str(out)])
    assert r.exit_code == 0 and len(srv.requests) == n          # served by the call store


def test_demo_sections_have_no_model_calls():
    sections = cap_cmd.cap_demo(n_boot=50)
    titles = [s.title for s in sections]
    assert any(t.startswith("CAP profile: judgebench_fixture") for t in titles)
    assert not any(t.startswith("CAP profile: judgebench ") or t == "CAP profile: judgebench" for t in titles)
    assert "CAP coverage matrix" in titles


def test_built_testbed_spec_is_profiled(tmp_path):
    from judgeaudit.io import write_jsonl
    from judgeaudit.probes import cap_testbed

    rows = []
    for i in range(6):
        for v in ("original", "polished", "padded"):
            rows.append({"pair_id": f"t/{i}|{v}", "prompt": f"q{i}", "response_a": "right " * (2 if v == "padded" else 1),
                         "response_b": "wrong " * (4 if v == "padded" else 1), "label": "A", "group": f"q{i}",
                         "source_set": cap_testbed.SOURCE_SET, "subset": cap_testbed.ERROR_TYPES[i % 4],
                         "base_id": f"t/{i}", "variant": v, "failure_type": cap_testbed.ERROR_TYPES[i % 4]})
    f = tmp_path / "tb.jsonl"
    write_jsonl(f, rows)
    df, cov, adapter, _ = cap_cmd.load_cap_set(f"cap_testbed:{f}")
    assert adapter == "cap_testbed" and cov[cap_testbed.SOURCE_SET]["C4"].status == "direct"
    with pytest.raises(InputError):
        cap_cmd.run_cap([f"judgebench:{DATA / 'judgebench_fixture'}"], published=True, augment=["style"])


@pytest.mark.data
def test_judgebench_own_score_beside_cap_overall(tmp_path, data_dir):
    """JudgeBench's own pair-level rule (utils/metrics.py) reported next to CAP's overall and strict values, with
    both failure views, on the full published outputs: o1-mini reproduces the published 65.71."""
    root = data_dir / "judgebench"
    cap_cmd.run_cap([f"judgebench:{root}"], published=True, n_boot=50, out=tmp_path)
    d = json.loads((tmp_path / "result.json").read_text())["sets"]["judgebench"]["judges"]
    o1 = d["arena_hard/o1-mini-2024-09-12"]
    assert round(100 * o1["benchmark_score"]["value"], 2) == 65.71
    assert o1["benchmark_score"]["n"] == 350 and "utils/metrics.py" in o1["benchmark_score"]["rule"]
    assert o1["overall"]["value"] is not None
    pairs = judgebench.load_pairs(root)
    published = judgebench.published_judges(root)     # every output file, read once for every judge below
    for jid, entry in d.items():
        t = published[jid].merge(pairs[["pair_id", "label"]], on="pair_id")
        ok = (t["failure_ab"].isna() & t["failure_ba"].isna()).to_numpy()
        pa = 0.5 * ((t["choice_ab"] == t["label"]).astype(float) + (t["choice_ba"] == t["label"]).astype(float))
        bc = ((t["choice_ab"] == t["label"]) & (t["choice_ba"] == t["label"])).astype(float)
        ov = entry["overall"]
        assert ov["excluded"]["value"] == pytest.approx(pa[ok].mean()) and ov["excluded"]["n"] == ok.sum()
        assert ov["as_wrong"]["value"] == pytest.approx(pa.mean()) and ov["as_wrong"]["n"] == len(t)
        assert ov["strict_excluded"]["value"] == pytest.approx(bc[ok].mean())
        assert ov["strict_as_wrong"]["value"] == pytest.approx(bc.mean())
        assert entry["benchmark_score"]["value"] == pytest.approx(
            judgebench.official_score_from_table(published[jid], pairs) / 100)
    # a judge with parse failures: the two views differ and both are shown
    haiku = d["arena_hard/claude-3-haiku-20240307"]["overall"]
    assert haiku["as_wrong"]["n"] > haiku["excluded"]["n"]
    html = (tmp_path / "report.html").read_text()
    assert "65.71" in html and "benchmark's own score" in html.lower()
