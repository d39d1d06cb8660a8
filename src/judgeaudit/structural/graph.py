"""The entailment graph (blind-spot §3.4, §7): typed nodes and edges from batched NLI calls.

Nodes: ``requirement`` (when the request has requirements, e.g. IFEval constraint texts),
``evidence`` (the sentences of the world, :mod:`~judgeaudit.structural.segment`) and ``claim``
(the sentences of the output). Each claim is *routed* to the evidence it is tested against: every
world sentence, or with ``top_k`` its ``k`` nearest by lexical similarity (Jaccard over content
words; ties to the earlier sentence) or by the cosine of an injected ``encoder``'s embeddings.

Edges (the paper leaves them unspecified; each threshold is a named parameter of
:class:`GraphParams`, and an edge fires when the probability is **at or above** its threshold, ``p ≥ τ``):

* **support** evidence ``e`` → claim ``c``: P(entail | premise e, hypothesis c) ≥ ``tau_s``;
* **conflict** evidence ``e`` → claim ``c``: P(contradict | e, c) ≥ ``tau_c``;
* **coverage** claim ``c`` → requirement ``r``: P(entail | premise c, hypothesis r) ≥ ``tau_s``
  (a requirement is covered when some single claim entails it);
* **specificity** claim ``c`` → evidence ``e*``: for the routed sentence ``e*`` with the highest
  P(entail | e, c), the reverse direction P(entail | premise c, hypothesis e*) ≥ ``tau_s``: the
  claim states its nearest evidence *and more* when it is also not supported (the overreach pattern).
  It is an annotation of unsupported claims, not a defect of its own.

Defaults ``tau_s = 0.95``, ``tau_c = 0.8`` were chosen on a recorded development split
(``DEV_SPLIT``: HaluEval QA questions whose seeded hash falls in the first 20% — 91 of 500, both
answers of a question together — with the lexical backend, the only one runnable offline here, a weak
bag-of-words baseline (``DEV_SPLIT["weak_backend"]``: the defaults are its thresholds, not a strong NLI model's);
``benchmarks/structural_calibrate.py``, grid ``tau_s`` 0.05–1.0 by 0.05 × ``tau_c`` 0.1–1.0 by 0.1):
balanced accuracy 0.890 there (ties go to the point nearest (0.5, 0.5)); 0.874 at ``tau_s = 0.9,
tau_c = 0.5``, 0.709 at ``tau_s = 0.5``; ``DEV_RESULT`` keeps the sensitivity lines through the
chosen point. Never chosen on a reported set: world runs record the development items they contain
(``calibrate.is_dev_item``) and ``world run --split report`` leaves them out. Another backend (an
``hf:`` DeBERTa) should be recalibrated the same way. :func:`calibrate.sensitivity` recomputes the
metric over a τ grid from the stored probabilities (no new NLI calls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.structural.nli import NLIBackend, _tokens
from judgeaudit.structural.segment import sentences

Encoder = Callable[[list[str]], np.ndarray]
NodeRef = tuple[str, int]   # (kind, index)

DEV_SPLIT = {"corpus": "halueval qa (generation/qa one-turn)", "source_set": "halueval_qa",
             "unit": "question (group halueval/qa/<line>; both answers kept together)", "share": 0.2,
             "seed": 20261130, "rule": "sha256('<seed>:<group>')[:16] / 16**16 < share", "backend": "lexical",
             "weak_backend": True}
DEV_RESULT: dict = {
    "n_groups": 91, "n_answers": 182, "metric": "balanced_accuracy (item flagged = any defect)",
    "grid": {"tau_s": [0.05, 1.0, 20], "tau_c": [0.1, 1.0, 10]}, "chosen": {"tau_s": 0.95, "tau_c": 0.8},
    "balanced_accuracy": 0.89, "flag_rate": 0.566, "grid_range": [0.505, 0.89],
    "along_tau_s": {"0.05": 0.511, "0.1": 0.511, "0.15": 0.516, "0.2": 0.516, "0.25": 0.522, "0.3": 0.566,
                    "0.35": 0.615, "0.4": 0.643, "0.45": 0.703, "0.5": 0.709, "0.55": 0.758, "0.6": 0.775,
                    "0.65": 0.813, "0.7": 0.841, "0.75": 0.846, "0.8": 0.868, "0.85": 0.885, "0.9": 0.885,
                    "0.95": 0.89, "1.0": 0.89},
    "along_tau_c": {"0.1": 0.874, "0.2": 0.879, "0.3": 0.879, "0.4": 0.879, "0.5": 0.879, "0.6": 0.885,
                    "0.7": 0.885, "0.8": 0.89, "0.9": 0.89, "1.0": 0.89}}
"""The calibration on ``DEV_SPLIT`` that chose the defaults (``calibrate.dev_result``)."""


@dataclass(frozen=True)
class GraphParams:
    """The graph's named parameters (see the module docstring for each edge)."""

    tau_s: float = 0.95
    tau_c: float = 0.8
    top_k: int | None = None
    specificity: bool = True

    def __post_init__(self) -> None:
        for name in ("tau_s", "tau_c"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0.0 <= float(v) <= 1.0:
                raise InputError(f"{name} must be a number in [0, 1], got {v!r}", field=name)
        if self.top_k is not None and (isinstance(self.top_k, bool) or not isinstance(self.top_k, int)
                                       or self.top_k < 1):
            raise InputError(f"top_k must be a whole number ≥ 1, got {self.top_k!r}", field="top_k")


@dataclass(frozen=True)
class Edge:
    kind: str          # support | conflict | coverage | specificity
    src: NodeRef
    dst: NodeRef
    p: float


@dataclass(frozen=True)
class Graph:
    """Nodes, the NLI probabilities of every pair asked, the routes and the edges they imply."""

    requirements: tuple[str, ...]
    evidence: tuple[str, ...]
    claims: tuple[str, ...]
    routes: tuple[tuple[int, ...], ...]
    probs: dict[tuple[NodeRef, NodeRef], tuple[float, float, float]]
    params: GraphParams
    backend: str
    weak: bool = False
    edges: tuple[Edge, ...] = field(default=())

    def text(self, ref: NodeRef) -> str:
        kind, i = ref
        return {"requirement": self.requirements, "evidence": self.evidence, "claim": self.claims}[kind][i]

    def edges_of(self, kind: str) -> list[Edge]:
        return [e for e in self.edges if e.kind == kind]

    def with_params(self, **changes: float) -> Graph:
        """The same graph under other thresholds (``tau_s``, ``tau_c``): edges re-derived from the
        stored probabilities. Changing ``top_k`` needs new NLI calls: use :func:`build_graph`."""
        if "top_k" in changes and changes["top_k"] != self.params.top_k:
            raise InputError("top_k changes the pairs asked: build the graph again", field="top_k")
        g = replace(self, params=replace(self.params, **changes))
        return replace(g, edges=_derive_edges(g))


def _words(text: str) -> set[str]:
    content, numbers, _ = _tokens(text)
    return content | numbers


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if (a or b) else 0.0


def route(claims: Sequence[str], evidence: Sequence[str], top_k: int | None,
          encoder: Encoder | None = None) -> list[tuple[int, ...]]:
    """For each claim, the indices (in world order) of the evidence it is tested against: all, or its
    ``top_k`` most similar (lexical Jaccard over content words, or cosine of ``encoder`` embeddings;
    ties to the earlier sentence)."""
    n = len(evidence)
    if top_k is None or top_k >= n:
        return [tuple(range(n)) for _ in claims]
    if encoder is not None:
        ce = np.asarray(encoder(list(claims)), dtype=float)
        ee = np.asarray(encoder(list(evidence)), dtype=float)
        ce = ce / np.maximum(np.linalg.norm(ce, axis=1, keepdims=True), 1e-12)
        ee = ee / np.maximum(np.linalg.norm(ee, axis=1, keepdims=True), 1e-12)
        sim = ce @ ee.T
    else:
        et = [_words(e) for e in evidence]
        sim = np.array([[_jaccard(cw, t) for t in et] for cw in map(_words, claims)]).reshape(len(claims), n)
    out = []
    for row in sim:
        order = sorted(range(n), key=lambda j: (-row[j], j))[:top_k]
        out.append(tuple(sorted(order)))
    return out


def _pairs_needed(claims: Sequence[str], requirements: Sequence[str],
                  routes: Sequence[tuple[int, ...]]) -> list[tuple[NodeRef, NodeRef]]:
    pairs = [(("evidence", e), ("claim", i)) for i, r in enumerate(routes) for e in r]
    pairs += [(("claim", i), ("requirement", r)) for r in range(len(requirements)) for i in range(len(claims))]
    return pairs


def _p(g: Graph, pre: NodeRef, hyp: NodeRef, j: int) -> float:
    row = g.probs.get((pre, hyp))
    return float("nan") if row is None else row[j]


def best_evidence(g: Graph, claim: int) -> int | None:
    """The routed evidence with the highest P(entail) for ``claim`` (ties to the earlier), or None."""
    r = g.routes[claim]
    if not r:
        return None
    scores = [(-np.nan_to_num(_p(g, ("evidence", e), ("claim", claim), 0), nan=-1.0), e) for e in r]
    return min(scores)[1]


def _derive_edges(g: Graph) -> tuple[Edge, ...]:
    ts, tc = g.params.tau_s, g.params.tau_c
    edges: list[Edge] = []
    for i, r in enumerate(g.routes):
        for e in r:
            pe, _, pc = g.probs[(("evidence", e), ("claim", i))]
            if pe >= ts:
                edges.append(Edge("support", ("evidence", e), ("claim", i), pe))
            if pc >= tc:
                edges.append(Edge("conflict", ("evidence", e), ("claim", i), pc))
    for r in range(len(g.requirements)):
        for i in range(len(g.claims)):
            pe = g.probs[(("claim", i), ("requirement", r))][0]
            if pe >= ts:
                edges.append(Edge("coverage", ("claim", i), ("requirement", r), pe))
    if g.params.specificity:
        for i in range(len(g.claims)):
            b = best_evidence(g, i)
            if b is None:
                continue
            pe = _p(g, ("claim", i), ("evidence", b), 0)
            if pe >= ts:
                edges.append(Edge("specificity", ("claim", i), ("evidence", b), pe))
    return tuple(edges)


def build_graph(world: str | Sequence[str] | None, output: str | Sequence[str] | None, backend: NLIBackend,
                params: GraphParams | None = None, requirements: Sequence[str] | None = None,
                encoder: Encoder | None = None) -> Graph:
    """Segment (strings are split with :func:`sentences`; lists are taken as the nodes), route, ask
    the backend every needed pair in one batched ``predict`` (duplicates asked once) and derive the
    edges. An empty world gives claims with no evidence (each is unsupported); an empty output gives
    no claims (no claim defect; every requirement is uncovered)."""
    params = params or GraphParams()
    ev = tuple(sentences(world) if isinstance(world, str) or world is None else [s for s in world if s.strip()])
    cl = tuple(sentences(output) if isinstance(output, str) or output is None else [s for s in output if s.strip()])
    req = tuple(r for r in (requirements or ()) if r.strip())
    routes = tuple(route(cl, ev, params.top_k, encoder))
    texts = {"evidence": ev, "claim": cl, "requirement": req}
    needed = _pairs_needed(cl, req, routes)
    probs = _ask(backend, needed, texts)
    g = Graph(requirements=req, evidence=ev, claims=cl, routes=routes, probs=probs, params=params,
              backend=backend.spec, weak=backend.weak)
    if params.specificity:
        rev = [(("claim", i), ("evidence", b)) for i in range(len(cl)) if (b := best_evidence(g, i)) is not None]
        probs = {**probs, **_ask(backend, rev, texts)}
        g = replace(g, probs=probs)
    return replace(g, edges=_derive_edges(g))


def _ask(backend: NLIBackend, refs: list[tuple[NodeRef, NodeRef]], texts: dict[str, tuple[str, ...]]
         ) -> dict[tuple[NodeRef, NodeRef], tuple[float, float, float]]:
    if not refs:
        return {}
    text_pairs = [(texts[p[0]][p[1]], texts[h[0]][h[1]]) for p, h in refs]
    unique = list(dict.fromkeys(text_pairs))
    got = backend.predict(unique)
    if got.shape != (len(unique), 3):
        raise ValueError(f"NLI backend {backend.spec} returned shape {got.shape} for {len(unique)} pairs")
    by_text = {tp: tuple(float(x) for x in row) for tp, row in zip(unique, got, strict=True)}
    return {ref: by_text[tp] for ref, tp in zip(refs, text_pairs, strict=True)}
