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
            return "Polished: " + body
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


def test_augmentation_admissibility_and_rows():
    pairs = pd.DataFrame({"pair_id": ["p1", "p2"], "prompt": "q", "response_a": ["good one", "bad one"],
                          "response_b": ["bad two", "good two"], "label": ["A", "B"], "source_set": "s"})
    with pytest.raises(InputError):
        tb.augment_pairs(pairs, generator=_generator(), admissible=False)
    out = tb.augment_pairs(pairs, generator=_generator(), admissible=True)
    pol = out[out["variant"] == "polished"].set_index("base_id")
    pad = out[out["variant"] == "padded"].set_index("base_id")
    assert pol.loc["p1", "response_a"].startswith("Polished: ") and pol["augmented"].all()
    # only the rejected response is padded
    assert pad.loc["p1", "response_a"] == "good one" and pad.loc["p1", "response_b"] == "bad two bad two"
    assert pad.loc["p2", "response_b"] == "good two" and pad.loc["p2", "response_a"] == "bad one bad one"


@pytest.mark.slow
def test_builder_with_the_local_judge_as_generator(tmp_path):
    """A small testbed whose every text is written by the embedded Gemma model (deterministic at T=0)."""
    from judgeaudit.judges import make_judge

    gen = make_judge("local", max_tokens=48)
    gate = Scripted("gate", "fam-b", lambda prompt, epoch: "5")
    src = pd.DataFrame({"question": ["What is the boiling point of water at sea level in Celsius?",
                                     "How many legs does a spider have?"],
                        "answer": ["100 degrees Celsius", "Eight"]})
    rows = tb.build_testbed(src, generator=gen, gate=gate, threshold=4, max_retries=1,
                            store_path=tmp_path / "calls.sqlite")
    df = pd.DataFrame(rows)
    plain = df[df["variant"] == "original"]
    assert len(plain) == 2 and list(plain["failure_type"]) == list(tb.ERROR_TYPES[:2])
    assert (plain["subtlety"] == 5).all() and (plain["attempts"] == 1).all()
    assert (df["label"] == "A").all() and (df["condition_a"] == "local:expanded").all()
    assert all(len(t) >= 10 for t in df["response_a"]) and all(len(t) >= 10 for t in df["response_b"])
    assert (plain["response_a"] != plain["response_b"]).all()
    again = pd.DataFrame(tb.build_testbed(src, generator=gen, gate=gate, threshold=4, max_retries=1,
                                          store_path=tmp_path / "calls.sqlite"))
    assert again["response_b"].tolist() == df["response_b"].tolist()
