"""CAP testbed builder and controlled augmentation, driven by scripted in-process judges."""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import pytest
from scripted_judges import ScriptedJudge

from judgeaudit.analyses.cap import cap_profile
from judgeaudit.datasets._common import TWO_ORDER_COLUMNS
from judgeaudit.errors import InputError
from judgeaudit.probes import cap_testbed as tb


def Scripted(name: str, family: str, responder: Callable[[str, int], str | None]) -> ScriptedJudge:  # noqa: N802
    """A scripted judge whose answers may depend on the regeneration epoch."""
    return ScriptedJudge(name, family, responder, pass_epoch=True)


def _generator():
    def respond(prompt: str, epoch: int) -> str | None:
        if prompt.startswith("Rewrite the short correct answer"):
            ans = re.search(r"Correct answer:\n(.*?)\n\nExplanation:", prompt, re.S)[1]
            return f"The answer is {ans}. It follows from the question."
        if prompt.startswith("Here is a correct explanation"):
            return f"A flawed explanation, attempt {epoch}, with one planted error."
        if prompt.startswith("Rewrite the text below in a more polished"):
            body = prompt.split("Text:\n", 1)[1].rsplit("\n\nPolished version:", 1)[0]
            return "Polished " + body
        if prompt.startswith("Make the text below"):
            body = prompt.split("Text:\n", 1)[1].rsplit("\n\nLonger version:", 1)[0]
            return body + " " + body
        raise AssertionError(prompt[:80])

    return Scripted("gen", "fam-a", respond)


def _gate(scores):
    """Subtlety by attempt number found in the flawed text."""

    def respond(prompt: str, epoch: int) -> str:
        m = re.search(r"attempt (\d+)", prompt)
        return str(scores[int(m[1])])

    return Scripted("gate", "fam-b", respond)


SOURCE = pd.DataFrame({"question": [f"Q{i}?" for i in range(8)], "answer": [f"ans{i}" for i in range(8)]})


def test_builder_shape_gate_and_variants(tmp_path):
    gen, gate = _generator(), _gate({0: 2, 1: 3, 2: 5, 3: 1})
    rows = tb.build_testbed(SOURCE, generator=gen, gate=gate, threshold=4, max_retries=3,
                            store_path=tmp_path / "calls.sqlite")
    df = pd.DataFrame(rows)
    assert len(df) == 8 * 3
    assert set(df["variant"]) == {"original", "polished", "padded"}
    assert df.groupby("failure_type")["base_id"].nunique().to_dict() == {t: 2 for t in tb.ERROR_TYPES}
    # gate: attempt 0 -> 2, attempt 1 -> 3, attempt 2 -> 5 passes; 3 attempts, none low quality
    assert (df["subtlety"] == 5).all() and (df["attempts"] == 3).all() and not df["low_quality"].any()
    plain = df[df["variant"] == "original"].iloc[0]
    padded = df[(df["variant"] == "padded") & (df["base_id"] == plain["base_id"])].iloc[0]
    assert padded["response_a"] == plain["response_a"]
    assert len(padded["response_b"]) > 1.9 * len(plain["response_b"])
    assert (df["label"] == "A").all()
    # a rerun is served by the call store: no new generator calls
    n = len(gen.prompts)
    tb.build_testbed(SOURCE, generator=gen, gate=gate, store_path=tmp_path / "calls.sqlite")
    assert len(gen.prompts) == n


def test_bounded_regeneration_flags_low_quality():
    gen, gate = _generator(), _gate({0: 1, 1: 2, 2: 3, 3: 2})
    df = pd.DataFrame(tb.build_testbed(SOURCE.head(4), generator=gen, gate=gate, threshold=4, max_retries=2))
    plain = df[df["variant"] == "original"]
    assert (plain["attempts"] == 3).all()  # 1 + max_retries
    assert (plain["subtlety"] == 3).all() and plain["low_quality"].all()  # best attempt kept


def _qc_generator(bad_polish=(), bad_pad=(), change=()):
    """The scripted generator, except: polish doubles the text on epochs ``bad_polish``; pad returns the text
    unchanged (ratio 1) on epochs ``bad_pad``; on epochs ``change`` the polish changes the stated answer of
    Answer A ("ansK" -> "ansX") and a number of Answer B ("attempt K" -> "attempt 99")."""
    inner = _generator().responder

    def respond(prompt: str, epoch: int) -> str | None:
        if prompt.startswith("Rewrite the text below in a more polished"):
            body = prompt.split("Text:\n", 1)[1].rsplit("\n\nPolished version:", 1)[0]
            if epoch in bad_polish:
                return body + " " + body
            if epoch in change:
                body = re.sub(r"ans\d+", "ansX", re.sub(r"attempt \d+", "attempt 99", body))
            return "Polished " + body
        if prompt.startswith("Make the text below") and epoch in bad_pad:
            return prompt.split("Text:\n", 1)[1].rsplit("\n\nLonger version:", 1)[0]
        return inner(prompt, epoch)

    return Scripted("gen", "fam-a", respond)


def _ratios(df):
    plain = df[df["variant"] == "original"].set_index("base_id")
    out = {}
    for v in ("polished", "padded"):
        x = df[df["variant"] == v].set_index("base_id")
        out[v] = (x["response_a"].str.len() / plain.loc[x.index, "response_a"].str.len(),
                  x["response_b"].str.len() / plain.loc[x.index, "response_b"].str.len())
    return out


def test_length_qc_regenerates_out_of_range_variants():
    """App. A.6 (iii): polished within ±20% of the original length, padded within [1.7x, 2.3x]; out-of-range
    attempts are regenerated (new epoch) and recorded. The generator doubles the polish on its first attempt
    and returns an unpadded text on its first two pad attempts."""
    gen, gate = _qc_generator(bad_polish=(0,), bad_pad=(0, 1)), _gate({0: 5})
    df = pd.DataFrame(tb.build_testbed(SOURCE, generator=gen, gate=gate))
    assert (df.groupby("base_id")["variant"].nunique() == 3).all()
    r = _ratios(df)
    for side in (0, 1):
        assert r["polished"][side].between(0.8, 1.2).all()
    assert r["padded"][1].between(1.7, 2.3).all() and (r["padded"][0] == 1).all()
    pol, pad = df[df["variant"] == "polished"], df[df["variant"] == "padded"]
    assert (pol["qc_rejections"] == 2).all() and (pad["qc_rejections"] == 2).all()
    qc = df["meta"].iloc[0]["qc"]
    assert [x.split(":")[0] for x in qc["polished"]] == ["A", "B"]
    assert all("length ratio 2.0" in x for x in qc["polished"])
    assert qc["padded"] == ["B: length ratio 1.00 outside [1.70, 2.30]"] * 2


def test_length_qc_gives_up_after_bounded_attempts():
    gen = _qc_generator(bad_pad=range(10))
    df = pd.DataFrame(tb.build_testbed(SOURCE.head(2), generator=gen, gate=_gate({0: 5}), qc_retries=2))
    assert set(df["variant"]) == {"original", "polished"}
    # 1 + qc_retries attempts (both items' Answer B are the same text, so one call per attempt)
    assert sum(p.startswith("Make the text below") for p in gen.prompts) == 3
    meta = df.loc[df["variant"] == "original", "meta"].iloc[0]
    assert meta["dropped_variants"] == ["padded"] and len(meta["qc"]["padded"]) == 3


def test_label_preservation_of_polished_variants():
    """A polish that changes Answer A's stated answer or a number of Answer B is rejected and regenerated."""
    gen = _qc_generator(change=(0,))
    df = pd.DataFrame(tb.build_testbed(SOURCE.head(4), generator=gen, gate=_gate({0: 5})))
    pol = df[df["variant"] == "polished"].set_index("base_id")
    plain = df[df["variant"] == "original"].set_index("base_id")
    assert (pol["response_a"] == "Polished " + plain.loc[pol.index, "response_a"]).all()
    assert (pol["response_b"] == "Polished " + plain.loc[pol.index, "response_b"]).all()
    qc = pol["meta"].iloc[0]["qc"]["polished"]
    assert re.fullmatch(r"A: final answer changed: 'ans\d' -> 'ansx'", qc[0])
    assert qc[1] == "B: numbers changed: dropped 0; added 99"


def test_gate_from_same_family_refused():
    with pytest.raises(InputError):
        tb.build_testbed(SOURCE, generator=_generator(), gate=Scripted("g2", "fam-a", lambda p, e: "5"))


def test_testbed_feeds_cap_with_direct_cells():
    df = pd.DataFrame(tb.build_testbed(SOURCE, generator=_generator(), gate=_gate({0: 5})))
    # a judge that always picks the longer response: right on plain/polished, wrong on padded
    rows = []
    for r in df.itertuples():
        longer = "A" if len(r.response_a) >= len(r.response_b) else "B"
        rows.append({"pair_id": r.pair_id, "judge_id": "len", "family": "x", "choice_ab": longer,
                     "choice_ba": longer, "rationale_ab": "r", "rationale_ba": "r", "failure_ab": None,
                     "failure_ba": None})
    t = pd.DataFrame(rows, columns=list(TWO_ORDER_COLUMNS))
    res = cap_profile(df, {"len": t}, {tb.SOURCE_SET: tb.COVERAGE}, n_boot=50)
    truth = {r.pair_id: r.label for r in df.itertuples()}
    plain_acc = sum(truth[p] == c for p, c in zip(t["pair_id"], t["choice_ab"]) if p.endswith("|original")) / 8
    assert res.value(tb.SOURCE_SET, "len", "C6") == pytest.approx(0.0)
    assert res.value(tb.SOURCE_SET, "len", "C5") == pytest.approx(plain_acc)
    assert all(res.value(tb.SOURCE_SET, "len", c) is not None for c in ("C1", "C2", "C3", "C4", "C7"))


def _body(prompt: str, tail: str) -> str:
    return prompt.split("Text:\n", 1)[1].rsplit(f"\n\n{tail}", 1)[0]


def _augmenter(bad_epochs=()):
    """Polishes by a short prefix and pads to 1.5x; on ``bad_epochs`` the polish changes the stated answer
    and the pad doubles the text (outside 1.5x's band)."""

    def respond(prompt: str, epoch: int) -> str:
        if prompt.startswith("Rewrite the text below in a more polished"):
            body = _body(prompt, "Polished version:")
            return "Polished: " + (body.replace("(C)", "(D)") if epoch in bad_epochs else body)
        body = _body(prompt, "Longer version:")
        return body + " " + (body if epoch in bad_epochs else body[: len(body) // 2])

    return Scripted("aug", "fam-a", respond)


AUG_PAIRS = pd.DataFrame({
    "pair_id": ["p1", "p2"], "prompt": "q",
    "response_a": ["Option C holds since 4 of the 5 premises imply it, so the answer is (C).",
                   "Option A fails because 2 premises contradict it, so the answer is (A)."],
    "response_b": ["Option A holds since 3 of the 5 premises imply it, so the answer is (A).",
                   "Option C holds because 4 premises support it fully, so the answer is (C)."],
    "label": ["A", "B"], "source_set": "s"})


def test_augmentation_admissibility_and_rows():
    with pytest.raises(InputError):
        tb.augment_pairs(AUG_PAIRS, generator=_augmenter(), admissible=False)
    out = tb.augment_pairs(AUG_PAIRS, generator=_augmenter(), admissible=True)
    pol = out[out["variant"] == "polished"].set_index("base_id")
    pad = out[out["variant"] == "padded"].set_index("base_id")
    assert pol.loc["p1", "response_a"] == "Polished: " + AUG_PAIRS["response_a"][0] and pol["augmented"].all()
    # only the rejected response is padded
    a1, b1 = AUG_PAIRS["response_a"][0], AUG_PAIRS["response_b"][0]
    assert pad.loc["p1", "response_a"] == a1 and pad.loc["p1", "response_b"] == b1 + " " + b1[: len(b1) // 2]
    assert pad.loc["p2", "response_b"] == AUG_PAIRS["response_b"][1]
    assert (out.loc[out["augmented"], "qc_rejections"] == 0).all() and out.attrs["qc"] == []


def test_augmentation_checks_label_preservation_and_length():
    """Table 12 "label-preservation checked" and App. A.6 length QC on JudgeBench-style augmentation: a polish
    that turns "(C)" into "(D)" and a pad outside 1.5x's band [1.275, 1.725] are rejected and regenerated."""
    gen = _augmenter(bad_epochs=(0,))
    out = tb.augment_pairs(AUG_PAIRS, generator=gen, admissible=True)
    pol = out[out["variant"] == "polished"].set_index("base_id")
    pad = out[out["variant"] == "padded"].set_index("base_id")
    for pid, k in (("p1", 0), ("p2", 1)):
        assert pol.loc[pid, "response_a"] == "Polished: " + AUG_PAIRS["response_a"][k]
        rej = pad.loc[pid, "response_b" if pid == "p1" else "response_a"]
        orig = AUG_PAIRS["response_b" if pid == "p1" else "response_a"][k]
        assert 1.275 <= len(rej) / len(orig) <= 1.725
    # p1: both sides state (C)/(A)... only texts stating "(C)" change under the bad polish
    assert pol.loc["p1", "qc_rejections"] == 1 and pol.loc["p2", "qc_rejections"] == 1
    assert (pad["qc_rejections"] == 1).all()
    reasons = [x["reason"] for x in out.attrs["qc"]]
    assert sum("final answer changed: 'c' -> 'd'" in r for r in reasons) == 2
    assert sum(r.startswith("length ratio 2.0") for r in reasons) == 2
    assert not any(x["dropped"] for x in out.attrs["qc"])


@pytest.mark.slow
def test_builder_with_the_local_judge_as_generator(tmp_path):
    """A small testbed whose every text is written by the embedded Gemma model (deterministic at T=0)."""
    from judgeaudit.judges import make_judge

    gen = make_judge("local", max_tokens=48)
    gate = Scripted("gate", "fam-b", lambda prompt, epoch: "5")
    src = pd.DataFrame({"question": ["What is the boiling point of water at sea level in Celsius?",
                                     "How many legs does a spider have?"],
                        "answer": ["100 degrees Celsius", "Eight"]})
    # greedy decoding writes the same text at every epoch, so a variant the length QC rejects would be rejected
    # again on every retry: no QC retries (the retries are tested with the scripted generators above)
    rows = tb.build_testbed(src, generator=gen, gate=gate, threshold=4, max_retries=1, qc_retries=0,
                            store_path=tmp_path / "calls.sqlite")
    df = pd.DataFrame(rows)
    plain = df[df["variant"] == "original"]
    # a question whose flawed rewrite came back empty or unchanged (greedy decoding: every retry alike) is
    # not in the testbed; which of the two does depends on llama.cpp's kernels, so at least one must be
    assert 1 <= len(plain) <= 2
    assert set(plain["failure_type"]) <= set(tb.ERROR_TYPES[:2])
    assert (plain["subtlety"] == 5).all() and (plain["attempts"] == 1).all()
    assert (df["label"] == "A").all() and (df["condition_a"] == "local:expanded").all()
    assert all(len(t) >= 10 for t in df["response_a"]) and all(len(t) >= 10 for t in df["response_b"])
    assert (plain["response_a"] != plain["response_b"]).all()
    again = pd.DataFrame(tb.build_testbed(src, generator=gen, gate=gate, threshold=4, max_retries=1, qc_retries=0,
                                          store_path=tmp_path / "calls.sqlite"))
    assert again["response_b"].tolist() == df["response_b"].tolist()
