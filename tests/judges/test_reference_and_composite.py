from __future__ import annotations

import asyncio

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest


def _g(text, role="edited", evidence="Trials in 200 adults found a small benefit.", epoch=0):
    return JudgeRequest(request_id=text[:20], text=text, evidence=evidence, meta={"role": role}, epoch=epoch)


def judge_scores(spec, reqs, **kw):
    j = make_judge(spec, **kw)
    return [v.score for v in asyncio.run(j.judge(reqs))]


def test_constant_flip_length_random():
    reqs = [_g("short", "original"), _g("a much longer edited claim " * 5, "edited")]
    assert judge_scores("reference:constant", reqs) == [5.0, 5.0]
    assert judge_scores("reference:flip", reqs) == [1.0, 9.0]
    s = judge_scores("reference:length", reqs)
    assert s[0] == pytest.approx(1 + 8 * 5 / 400) and s[1] > s[0]
    many = [_g(f"claim {i}") for i in range(400)]
    r = judge_scores("reference:random", many)
    assert set(r) == {1.0, 9.0} and 0.4 < r.count(9.0) / 400 < 0.6
    assert r == judge_scores("reference:random", many)            # seeded by the call
    with pytest.raises(ValueError, match="meta\\['role'\\]"):
        judge_scores("reference:flip", [JudgeRequest(request_id="q", text="t")])
    with pytest.raises(InputError, match="unknown reference judge"):
        make_judge("reference:nope")


def test_similarity_grades_unrelated_text_higher_than_a_paraphrase():
    ev = "In a trial of 200 adults, the drug lowered blood pressure slightly over twelve weeks."
    s = judge_scores("reference:similarity", [_g("The drug slightly lowered blood pressure in adults.", evidence=ev),
                                              _g("Volcanic ash clouds disrupt aviation routes.", evidence=ev)])
    assert 1 <= s[0] < s[1] <= 9


def test_vote_averages_samples_and_ensemble_averages_judges():
    reqs = [_g("some claim", "original"), _g("other claim", "edited")]
    assert judge_scores("ensemble:reference:flip,reference:constant", reqs) == [3.0, 7.0]
    v = make_judge("vote:4:reference:random")
    out = asyncio.run(v.judge(reqs))
    for o in out:
        samples = [float(x) for x in o.raw.strip("[]").split(",")]
        assert len(samples) == 4 and o.score == pytest.approx(sum(samples) / 4)
        assert o.meta == {"n_samples": 4, "n_usable": 4}
    with pytest.raises(InputError):
        make_judge("vote:x:local")
    with pytest.raises(InputError):
        make_judge("ensemble:local")


def test_a_vote_on_a_regrade_is_a_regrade_by_its_kind():
    """The estimate rates a judge's stored calls by request kind; a vote over a regrade keeps the flag."""
    from judgeaudit.runtime.estimate import request_kind

    req = _g("A claim.", epoch=1).model_copy(update={"meta": {"role": "edited", "regrade": True}})
    v, = asyncio.run(make_judge("vote:3:reference:constant").judge([req]))
    assert request_kind(v) == "graded (regrade)" and v.meta["n_samples"] == 3
    plain, = asyncio.run(make_judge("vote:3:reference:constant").judge([_g("A claim.")]))
    assert request_kind(plain) == "graded"
