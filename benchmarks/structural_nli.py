"""Structural judge costs, side by side in one run.

    PYTHONPATH=src python benchmarks/structural_nli.py [--pairs 256] [--no-hf]

1. NLI pairs per second, batched (``batch_size`` pairs per forward pass) vs one pair per call, same
   backend: a tiny randomly initialised BERT NLI model built here (transformers; nothing downloaded)
   and the lexical backend.
2. Graph construction cost vs world length (sentences): NLI pairs asked and seconds, all evidence vs
   routed top-k=5, with the saving as a ratio.
"""

from __future__ import annotations

import argparse
import string
import tempfile
import time
from pathlib import Path

import numpy as np

from judgeaudit.structural.graph import GraphParams, build_graph
from judgeaudit.structural.nli import NLIBackend, make_nli

WORDS = "tower bridge river city built opened painted tall long metres year paris london red blue not".split()


def _sentence(rng: np.random.Generator, n: int = 8) -> str:
    words = list(rng.choice(WORDS, n)) + [str(rng.integers(1800, 2000))]
    return " ".join(words).capitalize() + "."


def _tiny_hf(root: Path) -> str:
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(["[UNK]", "[PAD]", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=128, max_position_embeddings=512, num_labels=3,
                                  id2label={0: "entailment", 1: "neutral", 2: "contradiction"}, pad_token_id=1)
    transformers.BertForSequenceClassification(cfg).save_pretrained(root)
    fast.save_pretrained(root)
    return f"hf:{root}"


def _rate(backend: NLIBackend, pairs: list[tuple[str, str]], batch_size: int, repeats: int = 3) -> float:
    """Pairs per second, the best of ``repeats`` timed passes (the machine is shared: the fastest pass
    is the least disturbed one)."""
    backend.batch_size = batch_size
    backend.predict(pairs[:2])   # load / warm up
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        backend.predict(pairs)
        best = min(best, time.perf_counter() - t)
    return len(pairs) / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--no-hf", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    pairs = [(_sentence(rng, 20), _sentence(rng)) for _ in range(args.pairs)]

    print("1. NLI pairs per second: batched vs one pair per call (same backend)")
    print(f"{'backend':<12}{'batch':>7}{'batched/s':>12}{'single/s':>12}{'ratio':>8}")
    backends = [("lexical", make_nli("lexical"), 1024)]
    tmp = tempfile.TemporaryDirectory()
    if not args.no_hf:
        backends.append(("hf tiny", make_nli(_tiny_hf(Path(tmp.name) / "nli"), threads=1), 32))
    for name, b, bs in backends:
        batched = _rate(b, pairs, bs)
        single = _rate(b, pairs, 1)
        print(f"{name:<12}{bs:>7}{batched:>12.0f}{single:>12.0f}{batched / single:>8.1f}")

    print("\n2. Graph construction vs world length (5 claims; lexical backend; specificity on)")
    print(f"{'sentences':>9}{'pairs all':>11}{'pairs k=5':>11}{'pair ratio':>12}{'s all':>9}{'s k=5':>9}{'time ratio':>12}")
    nli = make_nli("lexical")
    claims = " ".join(_sentence(rng) for _ in range(5))
    for n in (10, 40, 160, 640):
        world = " ".join(_sentence(rng, 20) for _ in range(n))
        row = []
        for k in (None, 5):
            best = float("inf")
            for _ in range(3):       # best of three passes, as above
                t = time.perf_counter()
                g = build_graph(world, claims, nli, GraphParams(top_k=k))
                best = min(best, time.perf_counter() - t)
            row.append((len(g.probs), best))
        (pa, ta), (pk, tk) = row
        print(f"{n:>9}{pa:>11}{pk:>11}{pa / pk:>12.1f}{ta:>9.3f}{tk:>9.3f}{ta / tk:>12.1f}")
    tmp.cleanup()


if __name__ == "__main__":
    main()
