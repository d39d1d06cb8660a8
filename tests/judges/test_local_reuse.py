"""The embedded judge reuses the evaluated few-shot prefix and evidence line, and its grades stay
bit-identical whatever the KV cache held before (fresh, after a sibling claim, after a generation)."""

from __future__ import annotations

import asyncio

import pytest

from judgeaudit.judges import local, make_judge
from judgeaudit.records import JudgeRequest

EVIDENCE = "A trial in 40 adults with melanoma found modest tumour shrinkage in some of them over 8 weeks."
CLAIMS = ["The drug cures every cancer in all patients.",
          "The drug shrank tumours in some adults with melanoma in the trial.",
          "The drug may shrink melanoma tumours in some adults."]


def _req(text: str, **kw) -> JudgeRequest:
    return JudgeRequest(request_id=text[:8], text=text, evidence=EVIDENCE,
                        criterion="Overreach: does the claim assert more than the evidence licenses?", **kw)


@pytest.fixture(scope="module")
def judge():
    return make_judge("local")


def _dist(judge, req) -> list[float]:
    local._DIST_CACHE.clear()
    return asyncio.run(judge.judge_one(req)).score_dist


def test_segments_end_at_newlines_and_depend_on_the_tokens_before_only(judge):
    llm = judge.llm
    tokens = llm.tokenize(judge.render(_req(CLAIMS[0])).encode() + b" ", add_bos=True, special=False)
    bounds = local.segment_bounds(llm, tokens)
    assert bounds[-1] == len(tokens) and bounds == sorted(set(bounds))
    assert all(llm.detokenize([tokens[b - 1]]).endswith(b"\n") or b == len(tokens) for b in bounds)
    assert [b for b in local.segment_bounds(llm, tokens[:bounds[3]])] == bounds[:4]


def test_a_graded_call_evaluates_only_its_claim_and_score_lines(judge, monkeypatch):
    _dist(judge, _req(CLAIMS[0]))
    seen: list[tuple[int, bool]] = []
    real = local._decode

    def counting(llm, tokens, *, logits):
        seen.append((len(tokens), logits))
        real(llm, tokens, logits=logits)

    monkeypatch.setattr(local, "_decode", counting)
    _dist(judge, _req(CLAIMS[1]))
    tail = judge.llm.tokenize(f"Claim: {CLAIMS[1]}\nScore: ".encode(), add_bos=False, special=False)
    assert sum(n for n, _ in seen) <= len(tail) + 1       # the prefix and the evidence line were reused
    assert [lg for _, lg in seen] == [False] * (len(seen) - 1) + [True]


def test_grades_are_bit_identical_whatever_was_evaluated_before(judge):
    fresh = [_dist(judge, _req(c, meta={"regrade": True})) for c in CLAIMS]
    after_sibling = [_dist(judge, _req(c)) for c in CLAIMS]           # each reuses the previous one's lines
    reverse = [_dist(judge, _req(c)) for c in reversed(CLAIMS)][::-1]
    gen = JudgeRequest(request_id="g", form="generate", prompt=judge.render(_req(CLAIMS[2]))[:-40])
    asyncio.run(make_judge("local", max_tokens=4).judge_one(gen))   # a completion fills the cache its own way
    after_generation = [_dist(judge, _req(c)) for c in CLAIMS]
    assert after_sibling == fresh and reverse == fresh and after_generation == fresh
