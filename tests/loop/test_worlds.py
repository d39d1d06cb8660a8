"""Seven worlds: the knowledge block of each world, and the accuracy an agent reading its block gets."""

from __future__ import annotations

import pytest
from scripted import Constant

from judgeaudit.judges.base import Judge, JudgeSpec
from judgeaudit.loop.tasks import load_task
from judgeaudit.loop.worlds import WORLDS, run_worlds, summarise_worlds, world_text
from judgeaudit.records import JudgeRequest, Verdict



class KnowledgeReader(Judge):
    """An 'agent' that answers with the knowledge block it was given (nothing when it has none)."""

    cacheable = False

    def __init__(self):
        super().__init__(JudgeSpec(id="scripted:reader", backend="scripted", family="reference"))

    def render(self, request: JudgeRequest) -> str:
        return request.prompt or ""

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        p = request.prompt or ""
        if not p.startswith("Knowledge:"):
            return self.make_verdict(request, raw="I do not know", parse_ok=True)
        know = p.split("Knowledge:\n", 1)[1].split("\n\nQuestion:", 1)[0]
        return self.make_verdict(request, raw=know, parse_ok=True)


def test_world_blocks(data_dir):
    t = load_task("halueval_qa", data_dir / "halueval", max_items=20)
    items = t.items
    assert world_text("W0", 0, items) is None
    assert world_text("W3", 0, items) == items[0].world
    assert world_text("W6", 0, items) == "First for Women was started first."
    w1 = world_text("W1", 0, items)
    assert w1 != items[0].world and w1 in {it.world for it in items[1:]}
    w4 = world_text("W4", 0, items)
    assert w4.count("Document ") == 4 and items[0].world in w4
    w2 = world_text("W2", 0, items)       # two sentences → one kept
    assert w2 in ("Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia in "
                  "the 19th century.",
                  "First for Women is a woman's magazine published by Bauer Media Group in the USA.")
    assert world_text("W5", 0, items).splitlines()[1].startswith("1. Arthur's Magazine")


def test_an_agent_that_repeats_its_knowledge_is_right_only_when_the_knowledge_holds_the_answer(data_dir):
    t = load_task("halueval_qa", data_dir / "halueval", max_items=30)
    rows = run_worlds(t, KnowledgeReader())
    s = summarise_worlds(rows)
    assert list(s) == list(WORLDS)
    assert s["W0"]["correct"] == 0
    # W3/W4/W5 show the full knowledge: correct exactly where the knowledge contains the right answer
    from judgeaudit.checkers.halueval_qa import contains_answer

    expect = sum(contains_answer(it.world, it.extra["right_answer"]) for it in t.items)
    assert s["W3"]["correct"] == expect
    # W5 re-joins the split sentences as numbered lines, which moves containment on 3 of 30 items
    # ("El-P.Jaime Meline" → "1. … El-P." / "2. Jaime Meline …"): scored on its own block
    assert s["W5"]["correct"] == sum(contains_answer(world_text("W5", i, t.items), it.extra["right_answer"])
                                     for i, it in enumerate(t.items)) == 26
    assert s["W4"]["correct"] >= expect
    assert s["W6"]["correct"] == sum(contains_answer(it.extra["hallucinated_answer"], it.extra["right_answer"])
                                     for it in t.items)
    assert s["W2"]["correct"] <= expect


def test_worlds_cli_needs_halueval(tmp_path, data_dir):
    from judgeaudit.commands.loop import run_worlds_command
    from judgeaudit.errors import InputError

    with pytest.raises(InputError, match="halueval:PATH"):
        run_worlds_command(set_="gsm8k:/x", agent=Constant("x"), out=tmp_path / "o")
    r = run_worlds_command(set_=f"halueval:{data_dir / 'halueval'}", agent=Constant("Arthur's Magazine"), out=tmp_path / "o",
                           max_items=10, progress=False)
    assert all(x["n"] == 10 for x in r["worlds"].values())
    assert r["worlds"]["W0"]["correct"] == r["worlds"]["W3"]["correct"] >= 1
