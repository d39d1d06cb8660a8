"""Blinded annotation packets (construct-validity.txt §4.2 Protocol 1 step 3; Appendix C "Unit and blinding").

The unit is one pair shown as sentences A and B with the evidence and nothing else. Which member
is A is randomised per item and recorded (so a first-position preference is detectable rather than
absorbed into the labels). Treatment and control pairs are interleaved in one shuffled stream, and
every annotator gets a different stream order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.records import Probe

Side = Literal["A", "B"]
#: What an annotator answers (about sides), and how it maps to a ``records.Direction``.
ANSWERS: tuple[str, ...] = ("A", "B", "neither", "cannot_tell")


@dataclass(frozen=True)
class PacketItem:
    """One pair as an annotator sees it. ``probe_id`` and ``edited_side`` never leave the server."""

    position: int
    probe_id: str
    evidence: str
    text_a: str
    text_b: str
    edited_side: Side


@dataclass(frozen=True)
class Packet:
    """One annotator's stream, in presentation order (positions 1..n)."""

    annotator: str
    items: tuple[PacketItem, ...]

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(it.probe_id for it in self.items)


def presentation_sides(probes: Sequence[Probe], seed: int = 0) -> dict[str, Side]:
    """The side (A or B) the edited member is shown on, randomised per item from ``seed``."""
    rng = np.random.default_rng([seed, 1])
    flips = rng.integers(0, 2, size=len(probes))
    return {p.probe_id: ("A" if f else "B") for p, f in zip(probes, flips, strict=True)}


def stream_orders(n_items: int, n_annotators: int, seed: int = 0) -> list[np.ndarray]:
    """One shuffled order of ``range(n_items)`` per annotator, no two alike.

    Raises ``InputError`` when there are fewer distinct orders than annotators.
    """
    if n_annotators > 1 and math.factorial(n_items) < n_annotators:
        raise InputError(f"{n_items} item(s) admit fewer than {n_annotators} distinct stream orders",
                         field="annotators")
    rng = np.random.default_rng([seed, 2])
    orders: list[np.ndarray] = []
    seen: set[tuple[int, ...]] = set()
    while len(orders) < n_annotators:
        o = rng.permutation(n_items)
        if tuple(o) in seen:
            continue
        seen.add(tuple(o))
        orders.append(o)
    return orders


def make_packets(probes: Sequence[Probe], annotators: Sequence[str], seed: int = 0) -> list[Packet]:
    """Blinded packets: per-item A/B order (shared by all annotators), a distinct stream per annotator.

    Args:
        probes: the pairs to annotate (construct and control slots together: they are interleaved).
        annotators: annotator ids, in the fixed order labels are later merged in.
        seed: the study seed; sides and stream orders are a pure function of it.
    """
    if not probes:
        raise InputError("no probes to annotate", field="probes")
    ids = [p.probe_id for p in probes]
    if len(set(ids)) != len(ids):
        raise InputError("probe ids repeat", field="probe_id")
    if len(set(annotators)) != len(annotators) or not annotators:
        raise InputError("annotator ids must be distinct and at least one", field="annotators")
    sides = presentation_sides(probes, seed)
    orders = stream_orders(len(probes), len(annotators), seed)
    packets = []
    for ann, order in zip(annotators, orders, strict=True):
        items = []
        for pos, idx in enumerate(order, 1):
            p = probes[int(idx)]
            side = sides[p.probe_id]
            a, b = (p.edited, p.original) if side == "A" else (p.original, p.edited)
            items.append(PacketItem(position=pos, probe_id=p.probe_id, evidence=p.evidence, text_a=a, text_b=b,
                                    edited_side=side))
        packets.append(Packet(annotator=ann, items=tuple(items)))
    return packets


def answer_to_direction(answer: str, edited_side: str) -> str:
    """Map a side answer back to a ``records.Direction``: the overreaching side is edited or original."""
    if answer in ("neither", "cannot_tell"):
        return answer
    if answer not in ("A", "B"):
        raise ValueError(f"unknown answer {answer!r}")
    return "edited" if answer == edited_side else "original"
