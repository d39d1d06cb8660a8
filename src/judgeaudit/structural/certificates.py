"""Defects as patterns over the entailment graph, each with a certificate, and their verification.

Patterns (a claim with a conflict edge is *contradicted* even when it also has a support edge):

* ``contradicted_claim``: some routed evidence ``e`` has P(contradict | e, claim) ≥ ``tau_c``; the
  certificate names every such evidence sentence.
* ``unsupported_claim``: no routed evidence reaches ``tau_s`` for entailment (and none reaches
  ``tau_c`` for contradiction); the certificate names every evidence sentence examined, each with
  probabilities below the thresholds (an empty list when the world is empty). When a specificity
  edge fires, its pair is named too (the claim states its nearest evidence and more).
* ``uncovered_requirement``: no claim reaches ``tau_s`` for entailing the requirement; the
  certificate names every claim examined.

A certificate is a dict: ``type``, ``backend`` (the NLI spec), ``thresholds`` (``tau_s``, ``tau_c``,
``rule: "p >= tau"``), ``node`` (kind, index, text) and ``pairs``: each ``premise`` and
``hypothesis`` node (kind, index, text), ``probs`` ``[P(entail), P(neutral), P(contradict)]`` and
``role`` (``fired`` for the edge that makes the defect, ``examined`` for a pair shown below
threshold, ``specificity``).

:func:`verify_certificate` asks the backend the named pairs again and confirms (a) the recorded
probabilities within ``atol`` and (b) the pattern under the recorded thresholds. A pair without
probabilities (recorded as null, or NaN when asked again) never verifies. It checks what the
certificate names; it does not re-derive the routing, which needs the world.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgeaudit.records import Defect
from judgeaudit.structural.graph import Graph, NodeRef

CERTIFICATE_VERSION = "structural-cert-v1"
DEFECT_TYPES = ("contradicted_claim", "unsupported_claim", "uncovered_requirement")


def _node(g: Graph, ref: NodeRef) -> dict[str, Any]:
    return {"kind": ref[0], "index": ref[1], "text": g.text(ref)}


def _pair(g: Graph, pre: NodeRef, hyp: NodeRef, role: str) -> dict[str, Any]:
    return {"premise": _node(g, pre), "hypothesis": _node(g, hyp), "probs": list(g.probs[(pre, hyp)]), "role": role}


def _cert(g: Graph, kind: str, node: NodeRef, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": CERTIFICATE_VERSION, "type": kind, "backend": g.backend, "weak_backend": g.weak,
            "thresholds": {"tau_s": g.params.tau_s, "tau_c": g.params.tau_c, "rule": "p >= tau"},
            "node": _node(g, node), "pairs": pairs}


def claim_status(g: Graph) -> list[str]:
    """Per claim: ``contradicted``, ``supported`` or ``unsupported``."""
    conflict = {e.dst[1] for e in g.edges_of("conflict")}
    support = {e.dst[1] for e in g.edges_of("support")}
    return ["contradicted" if i in conflict else "supported" if i in support else "unsupported"
            for i in range(len(g.claims))]


def defects(g: Graph) -> list[Defect]:
    """The graph's defects in node order (claims, then requirements), each with its certificate."""
    out: list[Defect] = []
    spec_edge = {e.src[1]: e for e in g.edges_of("specificity")}
    for i, status in enumerate(claim_status(g)):
        c = ("claim", i)
        if status == "contradicted":
            pairs = [_pair(g, e.src, c, "fired") for e in g.edges_of("conflict") if e.dst == c]
            best = max(pairs, key=lambda p: p["probs"][2])
            out.append(Defect(span=g.claims[i], unit_id=f"claim:{i}", citation=f"E{best['premise']['index'] + 1}",
                              reason=f"contradicted by evidence: {best['premise']['text']} "
                                     f"(P(contradict)={best['probs'][2]:.3f})",
                              certificate=_cert(g, "contradicted_claim", c, pairs)))
        elif status == "unsupported":
            pairs = [_pair(g, ("evidence", e), c, "examined") for e in g.routes[i]]
            reason = "no evidence entails this claim" if pairs else "unsupported: the world is empty"
            if i in spec_edge:
                e = spec_edge[i]
                pairs.append(_pair(g, c, e.dst, "specificity"))
                reason += f"; it states evidence E{e.dst[1] + 1} and adds detail"
            out.append(Defect(span=g.claims[i], unit_id=f"claim:{i}", reason=reason,
                              certificate=_cert(g, "unsupported_claim", c, pairs)))
    covered = {e.dst[1] for e in g.edges_of("coverage")}
    for r, text in enumerate(g.requirements):
        if r in covered:
            continue
        node = ("requirement", r)
        pairs = [_pair(g, ("claim", i), node, "examined") for i in range(len(g.claims))]
        out.append(Defect(span=text, unit_id=f"requirement:{r}", reason="no claim of the output meets this requirement",
                          certificate=_cert(g, "uncovered_requirement", node, pairs)))
    return out


def _check_pattern(cert: dict[str, Any], probs: np.ndarray) -> str | None:
    ts, tc = float(cert["thresholds"]["tau_s"]), float(cert["thresholds"]["tau_c"])
    kind = cert["type"]
    roles = [p["role"] for p in cert["pairs"]]
    if kind == "contradicted_claim":
        if not roles or any(probs[j, 2] < tc for j, r in enumerate(roles) if r == "fired"):
            return f"a named pair does not reach P(contradict) >= tau_c={tc}"
    elif kind == "unsupported_claim":
        for j, r in enumerate(roles):
            if r == "examined" and (probs[j, 0] >= ts or probs[j, 2] >= tc):
                return f"examined pair {j} reaches a threshold (P={probs[j].round(6).tolist()})"
            if r == "specificity" and probs[j, 0] < ts:
                return f"specificity pair {j} is below tau_s={ts}"
    elif kind == "uncovered_requirement":
        if any(probs[j, 0] >= ts for j, r in enumerate(roles) if r == "examined"):
            return f"a claim entails the requirement at P(entail) >= tau_s={ts}"
    else:
        return f"unknown certificate type {kind!r}"
    return None


def _first_unknown(probs: np.ndarray) -> int | None:
    """The first row of ``probs`` that is not three finite numbers (None: every row is)."""
    unknown = np.nonzero(~np.isfinite(probs).all(axis=1))[0]
    return int(unknown[0]) if len(unknown) else None


def verify_certificate(cert: dict[str, Any], backend: Any, *, atol: float = 1e-6) -> str | None:
    """None when ``cert`` holds under ``backend`` (same spec), else why it does not."""
    if cert.get("backend") != backend.spec:
        return f"certificate names backend {cert.get('backend')!r}, verifier has {backend.spec!r}"
    try:
        pairs = [(p["premise"]["text"], p["hypothesis"]["text"]) for p in cert["pairs"]]
        recorded = np.array([p["probs"] for p in cert["pairs"]], dtype=float).reshape(len(pairs), 3)
        if cert["node"]["text"] not in {t for pair in pairs for t in pair} and pairs:
            return "the certified node is not in any named pair"
    except (KeyError, TypeError, ValueError) as e:
        return f"malformed certificate ({type(e).__name__}: {e})"
    if (j := _first_unknown(recorded)) is not None:
        return f"pair {j} records no probability ({recorded[j].tolist()}): a failed NLI call certifies nothing"
    fresh = backend.predict(pairs) if pairs else np.zeros((0, 3))
    if (j := _first_unknown(fresh)) is not None:
        return f"pair {j} has no probability when asked again ({fresh[j].tolist()}): the NLI call failed"
    bad = ~np.isclose(fresh, recorded, atol=atol, rtol=0)
    if bad.any():
        j = int(np.nonzero(bad.any(axis=1))[0][0])
        return (f"pair {j} ({cert['pairs'][j]['premise']['kind']} {cert['pairs'][j]['premise']['index']} → "
                f"{cert['pairs'][j]['hypothesis']['kind']} {cert['pairs'][j]['hypothesis']['index']}): recorded "
                f"{recorded[j].round(6).tolist()}, recomputed {fresh[j].round(6).tolist()}")
    return _check_pattern(cert, fresh)
