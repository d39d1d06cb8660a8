"""The embedded judge under a user's template: a scale whose grades are single tokens is read off the
next-token distribution; one it cannot read so (1–10: "10" is two tokens) is generated and parsed."""

from __future__ import annotations

import asyncio
import math

from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest

REQ = JudgeRequest(request_id="x", text="The drug cures every cancer in all patients.",
                   evidence="A trial in 40 adults with melanoma found modest tumour shrinkage in some.",
                   prompt="What did the trial find?")


def test_a_one_token_scale_is_read_as_a_distribution():
    j = make_judge("local", template="geval")
    v = asyncio.run(j.judge_one(REQ))
    assert v.parse_ok and v.meta["read"] == "distribution" and v.score_source == "distribution"
    assert len(v.score_dist) == 5 and math.isclose(sum(v.score_dist), 1.0, abs_tol=1e-9)
    assert math.isclose(v.score, sum(p * s for p, s in zip(v.score_dist, range(1, 6))), abs_tol=1e-9)
    assert j.spec.template["name"] == "geval" and j.key(REQ) != make_judge("local").key(REQ)


def test_a_scale_with_a_two_token_grade_is_generated_and_parsed():
    j = make_judge("local", template="mt-bench-single", max_tokens=24)
    v = asyncio.run(j.judge_one(REQ))
    assert v.meta["read"] == "generated" and v.raw is not None
    parsed = j.template.parse(REQ, v.raw)
    assert v.parse_ok == parsed.ok and v.score == parsed.score
    assert v.parse_ok or v.meta["parse_error"] == parsed.error
