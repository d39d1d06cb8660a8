"""HaluEval QA's entailment fallback (blind-spot §8, §9, §11): where containment of the right answer
fails, an NLI backend decides whether the output entails it.

The paper scores HaluEval correctness "by containment and then entailment" without giving the pair
it asks the entailment model about; the pair here is judgeaudit's own
(:func:`judgeaudit.checkers.halueval_qa.entailment_pair`: premise = the question and the output,
hypothesis = the question and the right answer), and the output entails the right answer when
P(entail) ≥ ``tau_s`` (the structural judge's support threshold, default 0.95). The spec is the
structural judge's NLI spec with its options (``lexical``, ``hf:PATH``, ``api:MODEL``, ``local``,
``?tau_s=…&batch_size=…&cache=PATH``; :func:`judgeaudit.structural.judge.parse_structural`).

:class:`EntailmentFallback` is the checker's ``nli`` callable; it counts what it decided, and a
reply no label can be read from (a NaN row) counts as ``unusable`` and does not entail.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from judgeaudit.checkers.halueval_qa import entailment_pair
from judgeaudit.structural.nli import CachedNLI, NLIBackend, NLIPairCache, make_nli


class EntailmentFallback:
    """``fallback(question, right_answer, output) -> bool``: P(entail) ≥ ``tau`` under ``backend``."""

    def __init__(self, backend: NLIBackend, tau: float):
        self.backend = backend
        self.tau = float(tau)
        self.counts: Counter[str] = Counter()

    @property
    def spec(self) -> str:
        return self.backend.spec

    def __call__(self, question: str, right_answer: str, output: str) -> bool:
        p = float(self.backend.predict([entailment_pair(question, right_answer, output)])[0][0])
        if math.isnan(p):
            self.counts["unusable"] += 1
            return False
        ok = p >= self.tau
        self.counts["entails" if ok else "does_not_entail"] += 1
        return ok

    def describe(self) -> dict[str, Any]:
        return {"nli": self.backend.spec, "weak_backend": self.backend.weak, "tau_s": self.tau,
                "rule": "P(entail | premise = question + output, hypothesis = question + right answer) >= tau_s "
                        "(judgeaudit's own pair; the paper does not give one)"}


def make_fallback(spec: str, *, api_base: str | None = None) -> EntailmentFallback:
    """The fallback an NLI spec names (``lexical``, ``hf:PATH``, ``api:MODEL``, ``local``, with the
    structural judge's ``?tau_s=&batch_size=&cache=`` options)."""
    from judgeaudit.structural.judge import parse_structural

    nli_spec, params, opts = parse_structural(spec, {} if api_base is None else {"api_base": api_base})
    cache = opts.pop("cache", None)
    backend = make_nli(nli_spec, **opts)
    backend.load()   # a model that cannot load fails here, in one line, before any item is checked
    if cache:
        backend = CachedNLI(backend, NLIPairCache(cache))
    return EntailmentFallback(backend, params.tau_s)
