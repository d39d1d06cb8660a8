"""Blinded packets (construct-validity.txt Appendix C, "Unit and blinding")."""

from __future__ import annotations

import pytest

from judgeaudit.errors import InputError
from judgeaudit.probes.packets import answer_to_direction, make_packets, stream_orders
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, CONTROL_SLOTS
from judgeaudit.records import Probe


def probes(n: int) -> list[Probe]:
    slots = CONSTRUCT_SLOTS + CONTROL_SLOTS
    return [Probe(probe_id=f"p{i}", base_id=f"b{i // 3}", group="g", domain="d", criterion="c",
                  evidence=f"evidence {i}", original=f"original {i}", edited=f"edited {i}",
                  slot=slots[i % len(slots)]) for i in range(n)]


def test_sides_recorded_and_texts_match_side():
    ps = probes(40)
    (pk,) = make_packets(ps, ["a1"], seed=3)
    by_id = {p.probe_id: p for p in ps}
    sides = [it.edited_side for it in pk.items]
    assert 5 < sides.count("A") < 35            # randomised, not constant
    for it in pk.items:
        p = by_id[it.probe_id]
        assert (it.text_a, it.text_b) == ((p.edited, p.original) if it.edited_side == "A" else (p.original, p.edited))
        assert it.evidence == p.evidence


def test_streams_differ_per_annotator_same_sides_and_deterministic():
    ps = probes(24)
    pks = make_packets(ps, ["a1", "a2", "a3"], seed=7)
    orders = [pk.order for pk in pks]
    assert len(set(orders)) == 3
    assert all(sorted(o) == sorted(p.probe_id for p in ps) for o in orders)
    sides = [{it.probe_id: it.edited_side for it in pk.items} for pk in pks]
    assert sides[0] == sides[1] == sides[2]     # A/B order is per item, shared by annotators
    assert [pk.order for pk in make_packets(ps, ["a1", "a2", "a3"], seed=7)] == orders
    # treatment and control interleaved: the stream is not sorted by arm
    arm = [p.slot in CONTROL_SLOTS for p in ps]
    by_id = dict(zip((p.probe_id for p in ps), arm, strict=True))
    seq = [by_id[i] for i in orders[0]]
    runs = sum(1 for x, y in zip(seq, seq[1:], strict=False) if x != y)
    assert runs >= 4


def test_impossible_distinct_orders_and_bad_input():
    assert len({tuple(o) for o in stream_orders(3, 6, seed=0)}) == 6
    with pytest.raises(InputError, match="distinct stream orders"):
        make_packets(probes(2), ["a1", "a2", "a3"])
    with pytest.raises(InputError):
        make_packets([], ["a1"])


def test_answer_mapping():
    assert answer_to_direction("A", "A") == "edited"
    assert answer_to_direction("A", "B") == "original"
    assert answer_to_direction("B", "B") == "edited"
    assert answer_to_direction("neither", "A") == "neither"
    assert answer_to_direction("cannot_tell", "B") == "cannot_tell"
