"""Seven worlds (blind-spot §9): an agent answers HaluEval QA under W0–W6, scored by the QA checker.

* W0 none — the question alone.
* W1 another item's knowledge, the one whose length is closest to this item's (ties: file order).
* W2 a random half of the knowledge's sentences (⌈n/2⌉, seeded by the item id, in order).
* W3 all of the knowledge.
* W4 all + 3 distractor documents (other items' knowledge, seeded), the true one at a seeded position.
* W5 all, as numbered facts keyed to the question.
* W6 the plausible false (hallucinated) answer presented as the knowledge.

The agent's prompt is the same in every world except the knowledge block.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgeaudit.judges.base import Judge
from judgeaudit.loop.regulators import _SENT, _seeded_half
from judgeaudit.loop.tasks import LoopItem, Task
from judgeaudit.records import JudgeRequest

if TYPE_CHECKING:
    from judgeaudit.runtime.context import RunContext

WORLDS = ("W0", "W1", "W2", "W3", "W4", "W5", "W6")
DESCRIPTIONS = {
    "W0": "none", "W1": "another item's knowledge (closest length)", "W2": "a random half of the knowledge",
    "W3": "all of the knowledge", "W4": "all + 3 distractor documents", "W5": "all, as numbered facts",
    "W6": "the false answer presented as the knowledge",
}


def _rank(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def world_text(w: str, i: int, items: Sequence[LoopItem]) -> str | None:
    """The knowledge block of world ``w`` for item ``i`` (None for W0)."""
    it = items[i]
    if w == "W0":
        return None
    if w == "W1":
        others = [j for j in range(len(items)) if j != i]
        j = min(others, key=lambda j: (abs(len(items[j].world) - len(it.world)), j))
        return items[j].world
    sents = [s for s in _SENT.split(it.world) if s.strip()]
    if w == "W2":
        return " ".join(sents[k] for k in _seeded_half(len(sents), it.item_id))
    if w == "W3":
        return it.world
    if w == "W4":
        others = sorted((j for j in range(len(items)) if j != i), key=lambda j: _rank(f"{it.item_id}\x00{j}"))[:3]
        docs = [items[j].world for j in others]
        pos = int(_rank(it.item_id)[:8], 16) % (len(docs) + 1)
        docs.insert(pos, it.world)
        return "\n\n".join(f"Document {k + 1}:\n{d}" for k, d in enumerate(docs))
    if w == "W5":
        return f"Facts for the question {it.question!r}:\n" + "\n".join(f"{k}. {s}" for k, s in enumerate(sents, 1))
    if w == "W6":
        return it.extra["hallucinated_answer"]
    raise ValueError(w)


def agent_prompt(question: str, knowledge: str | None) -> str:
    block = f"Knowledge:\n{knowledge}\n\n" if knowledge is not None else ""
    return f"{block}Question: {question}\nAnswer the question in a few words."


def run_worlds(task: Task, agent: Judge, *, worlds: Sequence[str] = WORLDS, store: Any = None,
               concurrency: int | None = None, progress: bool = False,
               context: RunContext | None = None) -> pd.DataFrame:
    """One row per (world, item): the agent's answer and whether the QA checker passes it (the calls made in
    ``context``, the command's ``RunContext``)."""
    from judgeaudit.loop.engine import _execute

    items = task.items
    reqs, keys = [], []
    for w in worlds:
        for i, it in enumerate(items):
            reqs.append(JudgeRequest(form="generate", request_id=f"world|{w}|{it.item_id}",
                                     prompt=agent_prompt(it.question or it.request, world_text(w, i, items)),
                                     meta={"output": ""}))
            keys.append((w, it))
    vs = _execute(agent, reqs, store, concurrency, progress, "agent under seven worlds", context)
    rows = []
    for (w, it), v in zip(keys, vs, strict=True):
        ans = v.raw or ""
        rows.append({"world": w, "item_id": it.item_id, "answer": ans, "error": v.error,
                     "correct": v.error is None and task.check(it, ans).passed})
    return pd.DataFrame(rows)


def summarise_worlds(rows: pd.DataFrame) -> dict[str, dict[str, object]]:
    """Per world: accuracy with its Wilson 95% interval and counts (failed calls count as wrong and are listed)."""
    from judgeaudit.stats.tests import wilson_interval

    out = {}
    for w, g in rows.groupby("world", sort=False):
        k, n = int(g["correct"].sum()), len(g)
        out[str(w)] = {"description": DESCRIPTIONS[str(w)], "accuracy": k / n, "correct": k, "n": n,
                       "ci": list(wilson_interval(k, n)), "failed_calls": int(g["error"].notna().sum())}
    return out
