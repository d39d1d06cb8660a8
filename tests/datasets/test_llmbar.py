"""LLMBar adapter: published statistics.json numbers reproduced from result.json files."""

from __future__ import annotations

import json

import pytest

from judgeaudit.analyses.cap import cap_profile
from judgeaudit.commands import cap as cap_cmd
from judgeaudit.datasets import llmbar, published, registry
from judgeaudit.errors import InputError

from cap_data import BUNDLED, full


def _raw_counts(path, labels):
    """An independent loop over the raw result file (LLMBar's rule: results[-1])."""
    cf = ct = cb = eq = 0
    for it in json.loads(path.read_text()):
        lab = str(it["label"])
        fin = it["results"][-1]
        wf, wt = fin["swap = False"]["winner"], fin["swap = True"]["winner"]
        cf += wf == lab
        ct += wt == lab
        cb += wf == lab and wt == lab
        eq += wf == wt
    return cf, ct, cb, eq


def test_bundled_tables_match_raw_files():
    root = BUNDLED / "llmbar"
    pairs = llmbar.load_pairs(root)
    assert set(pairs["source_set"]) == {"llmbar", "llmbar_mtbench"}
    files = llmbar.result_files(root)
    assert len(files) >= 40
    for (subset, jid), f in files.items():
        t = llmbar.load_result(f, subset, jid)
        st = llmbar.llmbar_statistics(t, pairs)
        cf, ct, cb, eq = _raw_counts(f, None)
        assert (st["correct_False"][0], st["correct_True"][0], st["correct_both"][0], st["equal"][0]) \
            == (cf, ct, cb, eq), (subset, jid)


def test_labels_and_human_labels():
    p = llmbar.load_pairs(BUNDLED / "llmbar")
    mt = p[p["source_set"] == "llmbar_mtbench"]
    assert (mt["label_source"] == "human_majority").all()
    assert all(h == [lab] for h, lab in zip(mt["human_labels"], mt["label"]))
    assert p[p["source_set"] == "llmbar"]["human_labels"].isna().all()


@pytest.mark.data
def test_full_statistics_json_reproduced():
    """Per-order accuracy, both-correct accuracy and positional agreement from every shipped
    result.json equal the published numbers in the same folder's statistics.json; the CAP
    estimator (failures counted wrong, LLMBar's convention) gives the same per-order and
    both-correct accuracies."""
    root = full("llmbar")
    pairs = llmbar.load_pairs(root)
    files = llmbar.result_files(root)
    assert len(files) == 84
    cov = llmbar.COVERAGE
    checked = 0
    for (subset, jid), f in files.items():
        published = llmbar.published_statistics(f.parent / "statistics.json")
        t = llmbar.load_result(f, subset, jid)
        sub = pairs[pairs["subset"] == subset]
        assert llmbar.llmbar_statistics(t, sub) == published, (subset, jid)
        res = cap_profile(sub.assign(source_set="s", subset=None), {jid: t}, {"s": cov["llmbar_mtbench"]},
                          n_boot=2, failures="wrong")
        n = published["correct_False"][1]
        assert res.value("s", jid, "C7", "acc_AB") == pytest.approx(published["correct_False"][0] / n)
        assert res.value("s", jid, "C7", "acc_BA") == pytest.approx(published["correct_True"][0] / n)
        assert res.value("s", jid, "C7", "strict") == pytest.approx(published["correct_both"][0] / n)
        both_null = int((t["choice_ab"].isna() & t["choice_ba"].isna()).sum())
        assert res.value("s", jid, "C7", "consistency") == pytest.approx(
            (published["equal"][0] - both_null) / n)
        checked += 1
    assert checked == 84


# --- layouts not in the shipped copy -------------------------------------------------------------

def _write_set(folder, labels, *, evaluators=()):
    """An LLMBar-format set: dataset.json with one item per label (1 or 2), and for each
    ``Evaluator/Mode`` a result.json whose final record picks output 1 in both orders."""
    folder.mkdir(parents=True)
    items = [{"input": f"{folder.name} q{i}", "output_1": f"o1-{i}", "output_2": f"o2-{i}", "label": lab}
             for i, lab in enumerate(labels)]
    (folder / "dataset.json").write_text(json.dumps(items))
    for jid in evaluators:
        d = folder / "evaluators" / jid
        d.mkdir(parents=True)
        res = [{**it, "results": [{"swap = False": {"completion": ["Output (a)", "stop"], "winner": "1"},
                                   "swap = True": {"completion": ["Output (b)", "stop"], "winner": "1"}}]}
               for it in items]
        (d / "result.json").write_text(json.dumps(res))
    return folder


def _clone(tmp_path):
    """A repository clone with sets the shipped copy does not have."""
    ds = tmp_path / "LLMBar-main" / "Dataset"
    _write_set(ds / "LLMBar" / "Natural", [1, 2])
    _write_set(ds / "LLMBar" / "Adversarial" / "Manual", [2, 2, 1, 2], evaluators=("GPT-4/CoT",))
    _write_set(ds / "Processed" / "FairEval", [1, 1, 2], evaluators=("GPT-4/Metrics_Reference", "Claude/Vanilla"))
    _write_set(ds / "CaseStudy" / "Base_9", [2])
    _write_set(ds / "Processed" / "LLMEval^2", [2, 1])  # the repository's own spelling
    (ds / "README.md").write_text("not a set")
    return tmp_path / "LLMBar-main"


def test_repository_root_discovers_every_set(tmp_path):
    p = llmbar.load_pairs(_clone(tmp_path))
    assert p["subset"].value_counts().to_dict() == {"Adversarial/Manual": 4, "FairEval": 3, "Natural": 2,
                                                    "LLMEval^2": 2, "CaseStudy/Base_9": 1}
    # the paper's sets in its table order, then the others by path
    assert list(dict.fromkeys(p["subset"])) == ["Natural", "Adversarial/Manual", "CaseStudy/Base_9", "FairEval",
                                                "LLMEval^2"]
    src = p.groupby("subset")["source_set"].first().to_dict()
    assert src == {"Natural": "llmbar", "Adversarial/Manual": "llmbar", "FairEval": "llmbar_faireval",
                   "CaseStudy/Base_9": "llmbar_casestudybase9", "LLMEval^2": "llmbar_llmeval2"}
    assert p.loc[p["subset"] == "Adversarial/Manual", "label"].tolist() == ["B", "B", "A", "B"]
    fair = p[p["subset"] == "FairEval"]
    assert fair["label"].tolist() == ["A", "A", "B"]
    assert fair["pair_id"].tolist() == ["llmbar/FairEval/0", "llmbar/FairEval/1", "llmbar/FairEval/2"]
    assert (fair["label_source"] == "human_majority").all()
    assert fair["human_labels"].tolist() == [["A"], ["A"], ["B"]]
    assert (p.loc[p["source_set"] == "llmbar", "label_source"] == "author_gold").all()
    # subset selection by name or by path under Dataset/
    assert len(llmbar.load_pairs(_clone(tmp_path / "b"), sets=["FairEval", "LLMBar/Natural"])) == 5


def test_set_folder_given_directly(tmp_path):
    root = _clone(tmp_path)
    fair = llmbar.load_pairs(root / "Dataset" / "Processed" / "FairEval")
    assert (len(fair), set(fair["subset"]), set(fair["source_set"])) == (3, {"FairEval"}, {"llmbar_faireval"})
    manual = llmbar.load_pairs(root / "Dataset" / "LLMBar" / "Adversarial" / "Manual")
    assert manual["pair_id"].tolist() == [f"llmbar/Adversarial/Manual/{i}" for i in range(4)]
    assert set(manual["source_set"]) == {"llmbar"}
    # the group folder given directly: its sets, named as from the root
    adv = llmbar.load_pairs(root / "Dataset" / "LLMBar")
    assert adv["subset"].value_counts().to_dict() == {"Adversarial/Manual": 4, "Natural": 2}
    # a set folder outside any Dataset/ tree: named after the folder
    mine = _write_set(tmp_path / "mine", [2, 1])
    p = llmbar.load_pairs(mine)
    assert (p["subset"].tolist(), p["label"].tolist(), p["source_set"].iloc[0]) == \
        (["mine", "mine"], ["B", "A"], "llmbar_mine")


def test_published_outputs_discovered(tmp_path):
    root = _clone(tmp_path)
    files = llmbar.result_files(root)
    assert sorted(files) == [("Adversarial/Manual", "GPT-4/CoT"), ("FairEval", "Claude/Vanilla"),
                             ("FairEval", "GPT-4/Metrics_Reference")]
    judges = published.published_judges(root)
    assert sorted(judges) == ["Claude/Vanilla", "GPT-4/CoT", "GPT-4/Metrics_Reference"]
    t = judges["GPT-4/CoT"]
    assert t["pair_id"].tolist() == [f"llmbar/Adversarial/Manual/{i}" for i in range(4)]
    assert t["choice_ab"].tolist() == ["A"] * 4 and t["choice_ba"].tolist() == ["A"] * 4
    # a set folder given directly finds its own outputs
    assert sorted(published.published_judges(root / "Dataset" / "Processed" / "FairEval")) == \
        ["Claude/Vanilla", "GPT-4/Metrics_Reference"]


def test_discovered_sets_have_coverage(tmp_path):
    p = llmbar.load_pairs(_clone(tmp_path))
    assert llmbar.COVERAGE["llmbar_faireval"]["C7"].status == "direct"
    assert llmbar.COVERAGE["llmbar_faireval"]["C5"].status == "unavailable"
    cov = llmbar.coverage(p)
    assert set(cov) == {"llmbar", "llmbar_faireval", "llmbar_casestudybase9", "llmbar_llmeval2"}
    assert cov["llmbar"]["C5"].subsets == llmbar.ADVERSARIAL  # Manual is one of the paper's four
    # an adversarial subset the paper does not have joins C5 (else it would count as a natural
    # reference item); `cap run` takes the coverage of the table it loaded
    root = _clone(tmp_path / "adv")
    _write_set(root / "Dataset" / "LLMBar" / "Adversarial" / "Invented", [1, 2, 2])
    _, cap_cov, _, _ = cap_cmd.load_cap_set(f"llmbar:{root}")
    assert cap_cov["llmbar"]["C5"].subsets == (*llmbar.ADVERSARIAL, "Adversarial/Invented")
    assert cap_cov["llmbar_faireval"]["C5"].status == "unavailable"
    assert cap_cov["llmbar_faireval"]["C7"].operator.endswith("(human majority labels)")
    assert cap_cov["llmbar_casestudybase9"]["C7"].operator.endswith("(the set's own labels)")
    spec = registry.load_set(f"llmbar:{_clone(tmp_path / 'c')}?subset=FairEval")
    assert len(spec) == 3


def test_unknown_layout_lists_what_was_found(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "data.json").write_text("[]")
    with pytest.raises(InputError) as e:
        llmbar.load_pairs(tmp_path)
    assert "no LLMBar dataset.json" in str(e.value) and "found: a.txt, b/" in str(e.value)
    with pytest.raises(InputError, match="FairEval"):
        llmbar.load_pairs(_clone(tmp_path / "c"), sets=["Nope"])
    # a result file whose final record is not a verdict record names the file and field
    bad = _write_set(tmp_path / "d" / "Natural", [1], evaluators=("X/Y",)) / "evaluators" / "X" / "Y" / "result.json"
    bad.write_text(json.dumps([{"label": 1, "results": [["text", "stop"]]}]))
    with pytest.raises(InputError) as e:
        llmbar.published_judges(tmp_path / "d" / "Natural")
    assert e.value.field == "results" and e.value.path == str(bad)


def test_cap_run_on_a_clone_with_a_new_adversarial_set(tmp_path):
    """`cap run --published` on a clone whose adversarial subset is not one of the paper's four:
    C5 is measured on it (BC 1/4), the Natural items stay the reference (BC 1/2); with the
    static declaration the new subset's items would be the 'natural' reference and C5 empty."""
    root = tmp_path / "clone"
    _write_set(root / "Dataset" / "LLMBar" / "Natural", [1, 2], evaluators=("GPT-4/CoT",))
    _write_set(root / "Dataset" / "LLMBar" / "Adversarial" / "Invented", [2, 2, 2, 1], evaluators=("GPT-4/CoT",))
    _write_set(root / "Dataset" / "Processed" / "FairEval", [1, 1, 2], evaluators=("GPT-4/CoT",))
    res = cap_cmd.run_cap([f"llmbar:{root}"], published=True, n_boot=20, seed=0)
    assert res.value("llmbar", "GPT-4/CoT", "C5") == pytest.approx(1 / 4)
    assert res.value("llmbar", "GPT-4/CoT", "C5", "reference") == pytest.approx(1 / 2)
    assert res.value("llmbar", "GPT-4/CoT", "C7", "strict") == pytest.approx(2 / 6)
    assert res.value("llmbar_faireval", "GPT-4/CoT", "C7", "strict") == pytest.approx(2 / 3)


def test_published_statistics_reconciled_in_both_failure_views(tmp_path):
    """A result.json with an unparsed winner: LLMBar's statistics.json counts it wrong (every item in
    n); CAP's default leaves the item out. `cap run --published` shows the published counts beside
    both recomputations, file by file, and says which view reproduces each file."""
    root = tmp_path / "clone"
    folder = _write_set(root / "Dataset" / "LLMBar" / "Natural", [1, 2, 1], evaluators=("GPT-4/CoT", "X/Y"))
    res_file = folder / "evaluators" / "GPT-4" / "CoT" / "result.json"
    items = json.loads(res_file.read_text())
    items[2]["results"][-1]["swap = True"]["winner"] = None     # unparsed in the second order
    res_file.write_text(json.dumps(items))
    # LLMBar's numbers: output 1 chosen in both orders on labels 1, 2, 1 (the last second order unparsed)
    (res_file.parent / "statistics.json").write_text(json.dumps({
        "correct_False": "2 / 3 = 66.7%", "correct_True": "1 / 3 = 33.3%", "correct_both": "1 / 3 = 33.3%",
        "equal": "2 / 3 = 66.7%"}))
    (folder / "evaluators" / "X" / "Y" / "statistics.json").write_text(json.dumps({
        "correct_False": "2 / 3", "correct_True": "2 / 3", "correct_both": "2 / 3", "equal": "3 / 3"}))
    pairs = llmbar.load_pairs(root)
    t = llmbar.reconcile_statistics(root, pairs).set_index("judge_id")
    cot = t.loc["GPT-4/CoT"]
    assert cot["published"] == "2/3, 1/3, 1/3, 2/3"
    assert cot["failures wrong (LLMBar's rule)"] == "2/3, 1/3, 1/3, 2/3"
    assert cot["failures excluded (CAP default)"] == "1/2, 1/2, 1/2, 2/2"
    assert cot["reproduced_by"] == "failures wrong" and cot["items with an unparsed winner"] == 1
    assert t.loc["X/Y", "reproduced_by"] == "failures wrong and failures excluded"
    res = cap_cmd.run_cap([f"llmbar:{root}"], published=True, n_boot=10, seed=0, out=tmp_path / "out")
    d = json.loads((tmp_path / "out" / "result.json").read_text())
    assert [r["reproduced_by"] for r in d["published_statistics"]] == ["failures wrong",
                                                                        "failures wrong and failures excluded"]
    assert len(res.published_statistics) == 2
    html = (tmp_path / "out" / "report.html").read_text()
    assert "2 of 2 files reproduced with unparsed winners counted wrong" in html
    assert "1 of 2 with them excluded" in html


@pytest.mark.data
def test_every_shipped_llmbar_file_reconciles_with_its_statistics_json(tmp_path):
    """The shared LLMBar copy ships 84 result.json files, each beside its statistics.json: with unparsed
    winners counted wrong (LLMBar's rule) every one is reproduced; with them excluded (CAP's default,
    the only view shown before) 55 are, and the other 29 are exactly the files with unparsed winners."""
    root = full("llmbar")
    res = cap_cmd.run_cap([f"llmbar:{root}"], published=True, n_boot=2, seed=0)
    t = res.published_statistics
    assert len(t) == 84 and (t["published"] != "—").all()
    assert t["reproduced_by"].str.contains("failures wrong").all()
    excl = t["reproduced_by"].str.contains("failures excluded")
    assert excl.sum() == 55
    assert (~excl == (t["items with an unparsed winner"] > 0)).all()
