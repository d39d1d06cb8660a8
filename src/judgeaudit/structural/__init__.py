"""The structural judge (blind-spot §3.4, §7): an entailment graph over output and world.

``segment`` (sentences), ``nli`` (NLI backends and the pair cache), ``graph`` (nodes, edges,
parameters), ``certificates`` (defects, certificates, verification), ``render`` (the graph as text),
``judge`` (the ``structural:`` judge spec), ``calibrate`` (development split and τ sensitivity).
"""

from judgeaudit.structural.graph import GraphParams, build_graph
from judgeaudit.structural.nli import NLIBackend, make_nli
from judgeaudit.structural.render import graph_text, render_graph, routed_evidence

__all__ = ["GraphParams", "NLIBackend", "build_graph", "graph_text", "make_nli", "render_graph", "routed_evidence"]
