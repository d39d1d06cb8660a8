"""The entailment graph as text, for an LLM judge (blind-spot P21 W5: the graph delivered as the world).

Layout (stable, so prompts stay byte-identical across items apart from the graph block)::

    Evidence:
    E1. <sentence>
    Claims:
    C1. <sentence>
    Requirements:            (only when there are any)
    R1. <text>
    Graph (NLI backend <spec>; support if P(entail) >= τs, conflict if P(contradict) >= τc):
    C1: supported by E2 (P(entail)=0.93)
    C2: CONFLICT with E1 (P(contradict)=0.88)
    C3: unsupported (best E4, P(entail)=0.31); states E4 and adds detail
    R1: covered by C2 (P(entail)=0.71)   |   R2: not covered by any claim
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgeaudit.structural.certificates import claim_status
from judgeaudit.structural.graph import Encoder, Graph, GraphParams, best_evidence, build_graph, route
from judgeaudit.structural.nli import NLIBackend
from judgeaudit.structural.segment import sentences


def graph_text(g: Graph) -> str:
    """The layout of the module docstring for a built graph."""
    lines = ["Evidence:", *(f"E{i + 1}. {s}" for i, s in enumerate(g.evidence))]
    if not g.evidence:
        lines.append("(none)")
    lines += ["Claims:", *(f"C{i + 1}. {s}" for i, s in enumerate(g.claims))]
    if not g.claims:
        lines.append("(none)")
    if g.requirements:
        lines += ["Requirements:", *(f"R{i + 1}. {s}" for i, s in enumerate(g.requirements))]
    lines.append(f"Graph (NLI backend {g.backend}; support if P(entail) >= {g.params.tau_s:g}, "
                 f"conflict if P(contradict) >= {g.params.tau_c:g}):")
    spec = {e.src[1]: e for e in g.edges_of("specificity")}
    for i, status in enumerate(claim_status(g)):
        c = ("claim", i)
        if status == "contradicted":
            parts = [f"E{e.src[1] + 1} (P(contradict)={e.p:.2f})" for e in g.edges_of("conflict") if e.dst == c]
            lines.append(f"C{i + 1}: CONFLICT with " + ", ".join(parts))
        elif status == "supported":
            parts = [f"E{e.src[1] + 1} (P(entail)={e.p:.2f})" for e in g.edges_of("support") if e.dst == c]
            lines.append(f"C{i + 1}: supported by " + ", ".join(parts))
        else:
            b = best_evidence(g, i)
            line = f"C{i + 1}: unsupported" + ("" if b is None else
                                               f" (best E{b + 1}, P(entail)={g.probs[(('evidence', b), c)][0]:.2f})")
            if i in spec:
                line += f"; states E{spec[i].dst[1] + 1} and adds detail"
            lines.append(line)
    covered: dict[int, list[Any]] = {}
    for e in g.edges_of("coverage"):
        covered.setdefault(e.dst[1], []).append(e)
    for r in range(len(g.requirements)):
        if r in covered:
            lines.append(f"R{r + 1}: covered by " + ", ".join(f"C{e.src[1] + 1} (P(entail)={e.p:.2f})"
                                                           for e in covered[r]))
        else:
            lines.append(f"R{r + 1}: not covered by any claim")
    return "\n".join(lines)


def render_graph(world: str | Sequence[str] | None, output: str | Sequence[str] | None, backend: NLIBackend,
                 params: GraphParams | None = None, requirements: Sequence[str] | None = None, **kw: Any) -> str:
    """Build the graph of ``output`` against ``world`` and render it as text (a world operator)."""
    return graph_text(build_graph(world, output, backend, params, requirements, **kw))


def routed_evidence(world: str | None, output: str | None, k: int = 3, encoder: Encoder | None = None) -> str:
    """The world cut to the ``k`` sentences nearest each output sentence (their union, in world order,
    joined by spaces): the routed top-k world (blind-spot P13, P21 W2), by the graph's router."""
    ev, cl = sentences(world), sentences(output)
    keep = sorted({e for r in route(cl, ev, k, encoder) for e in r})
    return " ".join(ev[e] for e in keep)
