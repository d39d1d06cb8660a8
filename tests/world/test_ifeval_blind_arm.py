"""IFEval's paired arms as the paper defines them (blind-spot §3.3): the blind arm receives the
constraint taxonomy in place of the instruction (``taxonomy``), the informed arm the instruction
under the same rubric (``informed+typed``)."""

from __future__ import annotations

import pytest

from judgeaudit.world.arms import ArmContext, get_arm
from judgeaudit.world.requests import taxonomy_of


@pytest.mark.data
def test_ifeval_blind_arm_receives_the_constraint_taxonomy_in_place_of_the_instruction(data_dir):
    from judgeaudit.datasets.world import load_world

    items = list(load_world(f"ifeval:{data_dir / 'ifeval'}").items)
    ctx = ArmContext(pool=tuple(items), taxonomy=taxonomy_of(items))
    assert len(ctx.taxonomy) == 25                      # IFEval's 25 instruction types
    it = items[0]
    blind, informed = get_arm("taxonomy")(it, ctx), get_arm("informed+typed")(it, ctx)
    assert blind.evidence is None and not blind.world_shown            # no instruction
    assert informed.evidence == it.world and informed.world_shown      # the instruction is the world
    assert blind.criterion == informed.criterion                       # one rubric in both arms
    assert all(k in blind.criterion for k in ctx.taxonomy)             # naming every constraint type
