"""NLI backends: lexical values by hand, hf on tiny models with configs in either label order, api
against the local fake server, local with a stubbed forward pass, and the pair cache."""

from __future__ import annotations

import math
import string

import numpy as np
import pytest
from fakeserver import FakeServer
from structural_scripted import ScriptedNLI

from judgeaudit.errors import InputError
from judgeaudit.runtime.store import CallStore
from judgeaudit.structural.nli import (CachedNLI, LocalNLI, NLIPairCache, label_logprob_row, label_order,
                                       lexical_probs, make_nli, parse_label, render_nli)


@pytest.mark.parametrize("premise, hypothesis, expected", [
    ("The tower is 330 metres tall.", "The tower is 300 metres tall.", (0.0, 0.0, 1.0)),     # number conflict
    ("It was built in 1889 in Paris.", "It was built in 1889.", (1.0, 0.0, 0.0)),            # all covered
    ("The tower is not painted blue.", "The tower is painted blue.", (0.0, 0.0, 1.0)),       # negation
    ("Paris is big.", "Paris is a big old city.", (0.5, 0.5, 0.0)),                          # 2 of 4 words
    ("The tower is tall.", "The tower is 300 metres tall.", (1 / 3, 2 / 3, 0.0)),             # 2/3, halved: new number
    ("Cats sleep.", "Dogs do not bark.", (0.0, 1.0, 0.0)),                                    # parity differs, cov 0
])
def test_lexical_values(premise, hypothesis, expected):
    np.testing.assert_allclose(lexical_probs(premise, hypothesis), expected, rtol=0, atol=1e-12)


def test_lexical_batches_equal_one_pair_at_a_time():
    rng = np.random.default_rng(0)
    words = ["tower", "not", "tall", "1889", "330", "paris", "is", "the", "blue"]
    pairs = [(" ".join(rng.choice(words, 6)), " ".join(rng.choice(words, 4))) for _ in range(2100)]
    b = make_nli("lexical")
    np.testing.assert_array_equal(b.predict(pairs), np.array([lexical_probs(p, h) for p, h in pairs]))
    assert b.predict([]).shape == (0, 3)


# ------------------------------------------------------------------ hf

transformers = pytest.importorskip("transformers")


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(["[UNK]", "[PAD]", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]"), len(vocab)


ORDERS = {"standard": {0: "entailment", 1: "neutral", 2: "contradiction"},
          "reversed": {0: "CONTRADICTION", 1: "Neutral", 2: "Entailment"}}


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    import torch

    tok, n = _tokenizer()
    root = tmp_path_factory.mktemp("nli")
    for name, id2label in ORDERS.items():
        torch.manual_seed(0)
        cfg = transformers.BertConfig(vocab_size=n, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=32, max_position_embeddings=512, num_labels=3,
                                      id2label=id2label, label2id={v: k for k, v in id2label.items()}, pad_token_id=1)
        transformers.BertForSequenceClassification(cfg).save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root


PAIRS = [("The tower is 330 metres tall.", "The tower is tall."), ("Cats sleep.", "Dogs bark loudly at night."),
         ("A", "B"), ("It opened in 1932 and is long.", "It opened.")]


def _direct(path, pairs):
    """Softmax of the model's logits, one pair at a time, in config order."""
    import torch

    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        return np.stack([torch.softmax(model(**tok(p, h, return_tensors="pt")).logits[0].double(), -1).numpy()
                         for p, h in pairs])


def test_label_order_from_config():
    assert label_order(ORDERS["standard"]) == [0, 1, 2]
    assert label_order(ORDERS["reversed"]) == [2, 1, 0]
    assert label_order({"0": "ENTAILMENT", "1": "NEUTRAL", "2": "contradiction"}) == [0, 1, 2]   # string keys
    with pytest.raises(InputError, match="three labels"):
        label_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(InputError, match="three labels"):
        label_order({0: "entailment", 1: "not_entailment"})


@pytest.mark.parametrize("order", list(ORDERS))
def test_hf_backend_maps_columns_by_config_and_batches_like_single_pairs(tiny_nli, order):
    path = tiny_nli / order
    direct = _direct(path, PAIRS)
    cols = label_order(ORDERS[order])
    b = make_nli(f"hf:{path}", batch_size=3)
    got = b.predict(PAIRS)
    assert b.spec == f"hf:{path}"
    np.testing.assert_allclose(got, direct[:, cols], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-9)
    single = np.concatenate([make_nli(f"hf:{path}", batch_size=1).predict([p]) for p in PAIRS])
    np.testing.assert_allclose(got, single, rtol=0, atol=1e-6)


def test_hf_missing_model_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot load NLI model"):
        make_nli(f"hf:{tmp_path / 'absent'}").predict([("a", "b")])


# ------------------------------------------------------------------ api

@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")   # the fake server ignores it


def _label_logprobs(probs):
    def build(text):
        top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in probs.items()]
        first = text.split()[0]
        return [{"token": first, "logprob": math.log(probs.get(first, 0.5)), "bytes": list(first.encode()),
                 "top_logprobs": top}]
    return build


def test_api_backend_reads_label_logprobs_from_the_server():
    probs = {"entailment": 0.6, "neutral": 0.1, "contradiction": 0.25, "The": 0.05}
    with FakeServer(responder=lambda prompt: "entailment", logprobs=_label_logprobs(probs)) as srv:
        b = make_nli("api:openai/fake-nli", api_base=srv.base_url, batch_size=2)
        got = b.predict([("P1.", "H1."), ("P2.", "H2."), ("P3.", "H3.")])
        sent = [m["messages"][0]["content"] for m in srv.requests]
    np.testing.assert_allclose(got, np.tile([0.6 / 0.95, 0.1 / 0.95, 0.25 / 0.95], (3, 1)), atol=1e-9)
    assert sorted(sent) == sorted(render_nli(f"P{i}.", f"H{i}.") for i in (1, 2, 3))
    assert all(r["logprobs"] is True for r in srv.requests)


def test_api_backend_without_logprobs_parses_the_label_and_nan_when_none():
    replies = {"P1.": "Contradiction.", "P2.": "I think it is neutral", "P3.": "no idea"}
    with FakeServer(responder=lambda prompt: next(v for k, v in replies.items() if k in prompt)) as srv:
        got = make_nli("api:openai/fake-nli", api_base=srv.base_url).predict(
            [("P1.", "H."), ("P2.", "H."), ("P3.", "H.")])
    np.testing.assert_array_equal(got[:2], [[0, 0, 1], [0, 1, 0]])
    assert np.isnan(got[2]).all()


def test_label_parsing_helpers():
    assert [parse_label(t) for t in ("Entailment", "  neutral.", "CONTRADICTS", "maybe", None)] == [0, 1, 2, None, None]
    np.testing.assert_allclose(label_logprob_row([(" ent", math.log(0.5)), ("Contr", math.log(0.5)), ("x", 0.0)]),
                               [0.5, 0.0, 0.5])
    assert label_logprob_row([("1", 0.0)]) is None


# ------------------------------------------------------------------ local (stubbed forward: never the model)

def test_local_backend_prompt_and_softmax_with_a_stubbed_forward():
    seen = []

    def forward(prompt):
        seen.append(prompt)
        return np.array([math.log(2.0), 0.0, math.log(1.0)])   # label-token logits: 2 : 1 : 1

    b = LocalNLI(forward=forward)
    got = b.predict([("The sky is blue.", "The sky has a colour.")])
    np.testing.assert_allclose(got, [[0.5, 0.25, 0.25]], atol=1e-12)
    assert seen == [("Decide whether the premise entails the hypothesis, contradicts it, or neither.\n"
                     "Premise: The sky is blue.\nHypothesis: The sky has a colour.\n"
                     "Answer with one word: entailment, neutral or contradiction.\nAnswer:")]
    assert make_nli("local").weak is True and make_nli("lexical").weak is True


def test_unknown_nli_spec_is_an_input_error():
    for spec in ("nope", "hf:", "api:", "lexical:x"):
        with pytest.raises(InputError, match="unknown NLI spec"):
            make_nli(spec)


# ------------------------------------------------------------------ pair cache

def test_pair_cache_lives_in_the_call_store_file_and_saves_recomputation(tmp_path):
    db = tmp_path / "calls.sqlite"
    inner = ScriptedNLI({("a", "b"): (0.7, 0.2, 0.1)})
    b = CachedNLI(inner, NLIPairCache(db))
    first = b.predict([("a", "b"), ("c", "d"), ("a", "b")])
    assert inner.asked == [("a", "b"), ("c", "d")]
    again = CachedNLI(inner, NLIPairCache(db)).predict([("c", "d"), ("a", "b")])
    assert inner.asked == [("a", "b"), ("c", "d")]                    # nothing recomputed
    np.testing.assert_array_equal(first, [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.7, 0.2, 0.1]])
    np.testing.assert_array_equal(again, first[[1, 0]])
    with CallStore(db, readonly=True) as cs:                         # still a call store
        assert len(cs) == 0


def test_pair_cache_does_not_keep_a_pair_without_probabilities(tmp_path):
    inner = ScriptedNLI({("a", "b"): (0.7, 0.2, 0.1)}, default=(np.nan, np.nan, np.nan))
    cache = NLIPairCache(tmp_path / "calls.sqlite")
    got = CachedNLI(inner, cache).predict([("a", "b"), ("c", "d")])
    assert np.isnan(got[1]).all() and len(cache) == 1           # only the answered pair is kept
    CachedNLI(inner, cache).predict([("c", "d")])
    assert inner.asked == [("a", "b"), ("c", "d"), ("c", "d")]  # the failed pair is asked again
    cache.close()
