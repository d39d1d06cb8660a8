"""The embedded judge reuses the KV cache for the prefix a prompt shares with the one before (the
few-shot prefix, an item's evidence, the start of a sibling's claim), and its logits stay bit-identical
whatever the KV cache held before (fresh, after a sibling claim, in another order, after another
prefix, after a generation)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import numpy as np
import pytest

from judgeaudit.judges import local, make_judge
from judgeaudit.records import JudgeRequest

EVIDENCE = "A trial in 40 adults with melanoma found modest tumour shrinkage in some of them over 8 weeks."
CLAIMS = ["The drug cures every cancer in all patients.",
          "The drug shrank tumours in some adults with melanoma in the trial.",
          # graded after the claim before it (or before it, in reverse) this one reuses a prefix that ends
          # off the 4-token grid: evaluating from there moves its logits (tests fail with PASS_ALIGN = 1)
          "The drug shrank tumours in most adults with melanoma in the trial.",
          "The drug may shrink melanoma tumours in some adults.",
          "The drug may shrink melanoma tumours in most adults."]


def _req(text: str, **kw) -> JudgeRequest:
    kw.setdefault("criterion", "Overreach: does the claim assert more than the evidence licenses?")
    return JudgeRequest(request_id=text[:8], text=text, evidence=EVIDENCE, **kw)


@contextlib.contextmanager
def _threads_fixed(judge, n: int) -> Iterator[None]:
    """The model's thread chooser fixed at ``n`` compute threads in place of its own (restored after)."""
    import llama_cpp

    from judgeaudit.judges.threads import ThreadChooser

    llm = judge.llm
    own = local._chooser(llm)
    try:
        setattr(llm, local._THREADS, ThreadChooser([n], lambda k: llama_cpp.llama_set_n_threads(llm.ctx, k, k)))
        yield
    finally:
        setattr(llm, local._THREADS, own)
        own.current = None                                    # its next call applies its own count again


@pytest.fixture(scope="module")
def judge():
    """The embedded judge on one compute thread: the count changes the speed only (the thread tests at the end
    pin it), and a chooser probing two threads beside another busy core makes a call several times slower."""
    judge = make_judge("local")
    with _threads_fixed(judge, 1):
        yield judge


@pytest.fixture
def passes(monkeypatch):
    """The (tokens, logits) of every forward pass ``_next_token_logits`` makes."""
    seen: list[tuple[int, bool]] = []
    real = local._decode

    def counting(llm, tokens, *, logits):
        seen.append((len(tokens), logits))
        real(llm, tokens, logits=logits)

    monkeypatch.setattr(local, "_decode", counting)
    return seen


def _logits(judge, req) -> np.ndarray:
    return judge._next_token_logits(judge.render(req) + " ", fresh=bool(req.meta.get("regrade")))


def _tokens(judge, req) -> list[int]:
    return judge.llm.tokenize((judge.render(req) + " ").encode(), add_bos=True, special=False)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 40, 128, 135, 136, 300])
def test_every_pass_starts_on_the_grid_and_holds_the_fewest_tokens_at_least(n):
    for reusable in sorted({0, 1, 5, n // 2, n - 9, n - 8, n - 1, n} - {-1}):
        start = local.reuse_point(max(reusable, 0), n)
        ends = local.pass_bounds(start, n)
        assert start % local.PASS_ALIGN == 0 and 0 <= start <= max(reusable, 0) and ends[-1] == n
        bounds = [start, *ends]
        lengths = [e - s for s, e in zip(bounds, bounds[1:])]
        assert all(s % local.PASS_ALIGN == 0 for s in bounds[:-1])
        assert all(local.PASS_MIN <= k < local.PASS_MAX + local.PASS_MIN for k in lengths) or n < local.PASS_MIN
    assert local.pass_bounds(0, 300) == [128, 256, 300] and local.pass_bounds(0, 260) == [128, 260]


def test_a_call_evaluates_only_what_it_does_not_share_with_the_one_before(judge, passes):
    _logits(judge, _req(CLAIMS[0], meta={"regrade": True}))
    first = _tokens(judge, _req(CLAIMS[0]))
    assert sum(n for n, _ in passes) == len(first)              # a fresh call evaluates it all
    for before, claim in zip(CLAIMS, CLAIMS[1:]):
        passes.clear()
        _logits(judge, _req(claim))
        a, b = _tokens(judge, _req(before)), _tokens(judge, _req(claim))
        shared = local._common_prefix(a, b)
        # the prefix and evidence are never evaluated again: one pass, of the unshared tail to the grid
        assert passes == [(len(b) - local.reuse_point(shared, len(b)), True)]
        assert len(b) - shared <= passes[0][0] < max(len(b) - shared, local.PASS_MIN) + local.PASS_ALIGN
    assert passes[0][0] < 16                               # the last two claims share all but a word


def _planned_and_done(judge, passes, reqs) -> tuple[list[int], list[int]]:
    """Tokens each request is planned to evaluate (``planned_work``, from an empty prompt cache) and the tokens
    each evaluates when judged in turn."""
    local._DIST_CACHE.clear()
    plan = [w.evaluated for w in judge.planned_work(reqs)]
    done = []
    for r in reqs:
        passes.clear()
        asyncio.run(judge.judge_one(r))
        done.append(sum(n for n, _ in passes))
    return plan, done


def test_planned_work_is_the_work_done(judge, passes):
    # a regrade, then the same prompt graded (a regrade does not fill the prompt cache), siblings, a repeat
    reqs = [_req(CLAIMS[0], meta={"regrade": True}), *(_req(c) for c in CLAIMS), _req(CLAIMS[1])]
    plan, done = _planned_and_done(judge, passes, reqs)
    assert done[-1] == 0
    assert plan == done


@pytest.fixture(scope="module")
def fresh(judge) -> list[np.ndarray]:
    """The logits of each claim's prompt evaluated from an empty KV cache."""
    return [_logits(judge, _req(c, meta={"regrade": True})) for c in CLAIMS]


def test_planned_work_is_the_work_done_for_world_labels(judge, passes):
    """A world label is read off the next-token distribution as a grade is: a regrade evaluates its prompt from an
    empty KV cache, another vote of the same prompt is answered from the prompt cache."""
    from judgeaudit.records import WorldItem
    from judgeaudit.world.requests import build_request
    from judgeaudit.world.run import context_for

    item = WorldItem(item_id="w", task="qa", output="Lyon.", world="Paris is the capital of France.",
                     question="What is the capital of France?", defective=True)
    req = build_request(item, "informed", context_for([item], 0), form="label")
    regrade = req.model_copy(update={"epoch": 1, "meta": {**req.meta, "regrade": True}})
    reqs = [regrade, req, req.model_copy(update={"epoch": 1}), regrade]
    plan, done = _planned_and_done(judge, passes, reqs)
    assert done[2] == 0 and done[3] == done[0] == len(judge.llm.tokenize(
        (judge.render(req) + '\n{"defective":').encode(), add_bos=True, special=False))
    assert plan == done


def test_logits_are_bit_identical_whatever_was_evaluated_before(judge, fresh):
    after_sibling = [_logits(judge, _req(c)) for c in CLAIMS]           # each reuses the one before's prefix
    reverse = [_logits(judge, _req(c)) for c in reversed(CLAIMS)][::-1]
    _logits(judge, _req(CLAIMS[0], criterion="Fluency: is the text well written?"))   # another prefix
    other = [_logits(judge, _req(c)) for c in CLAIMS]
    gen = JudgeRequest(request_id="g", form="generate", prompt=judge.render(_req(CLAIMS[2]))[:-40])
    asyncio.run(make_judge("local", max_tokens=4).judge_one(gen))      # a completion fills the cache its own way
    after_generation = [_logits(judge, _req(c)) for c in CLAIMS]
    for runs in (after_sibling, reverse, other, after_generation):
        assert all(np.array_equal(f, r) for f, r in zip(fresh, runs, strict=True))


def test_grades_are_identical_first_or_after_others(judge):
    def dist(req):
        local._DIST_CACHE.clear()
        return asyncio.run(judge.judge_one(req)).score_dist

    first = dist(_req(CLAIMS[3]))
    for c in CLAIMS[:3]:
        dist(_req(c))
    assert dist(_req(CLAIMS[3])) == first == dist(_req(CLAIMS[3], meta={"regrade": True}))


def _tails(judge) -> list[np.ndarray]:
    """The logits of each claim's prompt evaluated after the first claim's: the tail after a reused prefix."""
    _logits(judge, _req(CLAIMS[0]))          # from here on the KV cache holds the same tokens at every count
    return [_logits(judge, _req(c)) for c in CLAIMS]


@pytest.fixture(scope="module")
def one_thread(judge, fresh) -> list[np.ndarray]:
    """The first claim's prompt evaluated fresh and the tails after it (``_tails``) on one compute thread."""
    return fresh[:1] + _tails(judge)


@pytest.mark.parametrize("count", [2, 3])
def test_logits_are_bit_identical_on_one_compute_thread_or_more(judge, one_thread, count):
    """The thread chooser may change the count between any two calls: it must not change a grade. Each
    count is run by a chooser fixed at it, in place of the model's own (restored after): a whole prompt
    evaluated fresh (its passes of 128 and of the rest) and the tails of every claim after a reused prefix."""
    import llama_cpp

    with _threads_fixed(judge, count):
        more = [_logits(judge, _req(CLAIMS[0], meta={"regrade": True})), *_tails(judge)]
        assert int(llama_cpp.llama_n_threads(judge.llm.ctx)) == count
    assert all(np.array_equal(a, b) for a, b in zip(one_thread, more, strict=True))
