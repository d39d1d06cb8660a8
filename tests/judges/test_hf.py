"""The hf backend on tiny randomly initialised models built here (no weights can be downloaded)."""

from __future__ import annotations

import asyncio
import math
import string

import numpy as np
import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest

transformers = pytest.importorskip("transformers")


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(["[UNK]", "[PAD]", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]"), len(vocab)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    import torch

    torch.manual_seed(0)
    tok, n = _tokenizer()
    root = tmp_path_factory.mktemp("hf")
    cfg = transformers.GPT2Config(vocab_size=n, n_positions=2048, n_embd=32, n_layer=2, n_head=2)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(root / "causal")
    tok.save_pretrained(root / "causal")
    rcfg = transformers.GPT2Config(vocab_size=n, n_positions=2048, n_embd=32, n_layer=2, n_head=2, num_labels=1,
                                   pad_token_id=1)
    transformers.GPT2ForSequenceClassification(rcfg).save_pretrained(root / "reward")
    tok.save_pretrained(root / "reward")
    return root


# Two forward passes of a float32 model may differ in the last bits (reduction order); a real change
# of model or prompt moves a probability by orders of magnitude more than this.
ATOL = 1e-6

REQ = JudgeRequest(request_id="x", text="All patients are cured.", evidence="Some patients improved.")
PAIR = JudgeRequest(request_id="p", form="pairwise", prompt="2+2?", response_a="4", response_b="5")


def test_causal_lm_gives_a_proper_deterministic_distribution(tiny_models):
    j = make_judge(f"hf:{tiny_models / 'causal'}")
    a = asyncio.run(j.judge_one(REQ))
    b = asyncio.run(j.judge_one(REQ))
    assert a.parse_ok and len(a.score_dist) == 9 and math.isclose(sum(a.score_dist), 1.0, abs_tol=1e-9)
    np.testing.assert_allclose(a.score_dist, b.score_dist, rtol=0, atol=ATOL)
    assert 1 <= a.score <= 9
    p = asyncio.run(j.judge_one(PAIR))
    assert p.choice in ("A", "B")


def test_forward_passes_pin_torch_settings_and_restore_them(tiny_models):
    import torch

    before = torch.get_num_threads()
    j = make_judge(f"hf:{tiny_models / 'causal'}", threads=1)
    one = asyncio.run(j.judge_one(REQ))
    assert torch.get_num_threads() == before and not torch.are_deterministic_algorithms_enabled()
    seen = []
    original = torch.set_num_threads
    try:
        torch.set_num_threads = lambda n: (seen.append(n), original(n))   # record what each pass asks for
        asyncio.run(j.judge_one(REQ))
    finally:
        torch.set_num_threads = original
    assert seen == [1, before]                      # one thread during the pass, then the caller's count
    default = asyncio.run(make_judge(f"hf:{tiny_models / 'causal'}").judge_one(REQ))
    np.testing.assert_allclose(one.score_dist, default.score_dist, rtol=0, atol=ATOL)


@pytest.mark.parametrize("threads", [0, -2, "two", True])
def test_threads_must_be_a_positive_whole_number(threads):
    with pytest.raises(InputError, match="threads"):
        make_judge("hf:./model", threads=threads)


def test_reward_model_scores_and_prefers(tiny_models):
    j = make_judge(f"hf:{tiny_models / 'reward'}", kind="reward")
    v = asyncio.run(j.judge_one(REQ))
    r = float(v.raw.split("=")[1])
    assert v.score == pytest.approx(1 + 8 / (1 + math.exp(r)), abs=1e-3)   # raw keeps 4 decimals
    p = asyncio.run(j.judge_one(PAIR))
    ra, rb = (float(x.split("=")[1]) for x in p.raw.removeprefix("reward ").split())
    assert p.choice == ("A" if ra >= rb else "B")


def test_missing_model_is_a_clear_error(tmp_path):
    j = make_judge(f"hf:{tmp_path / 'nothing-here'}")
    with pytest.raises(InputError, match="cannot load Hugging Face model"):
        asyncio.run(j.judge_one(REQ))
