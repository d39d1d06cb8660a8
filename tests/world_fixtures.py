from __future__ import annotations

import numpy as np

from judgeaudit.records import Span, Unit, WorldItem


def tiny_items() -> list[WorldItem]:
    """Two QA questions (a right and a hallucinated answer each) and one summary with units/spans."""
    k1 = "Paris is the capital of France. The Eiffel Tower was finished in 1889. It is 330 metres tall."
    k2 = "Mount Everest is 8849 metres high. It lies in the Himalayas. Tenzing Norgay climbed it in 1953."
    k3 = "The Nile flows north through Egypt. It empties into the Mediterranean Sea. It is very long."
    k4 = "Copper conducts electricity well. It is used in wiring. Its symbol is Cu."
    items = []
    for i, (k, q, right, wrong) in enumerate([
        (k1, "When was the Eiffel Tower finished?", "It was finished in 1889.", "It was finished in 1901."),
        (k2, "How high is Everest?", "Everest is 8849 metres high.", "Everest is 9100 metres high."),
        (k3, "Where does the Nile end?", "In the Mediterranean Sea.", "In the Red Sea."),
        (k4, "What is copper's symbol?", "Its symbol is Cu.", "Its symbol is Co."),
    ]):
        items.append(WorldItem(item_id=f"q{i}-right", task="qa", output=right, world=k, question=q,
                               reference=right, defective=False, group=f"q{i}"))
        wrong_at = wrong.index(wrong.split()[-1].rstrip("."))
        items.append(WorldItem(item_id=f"q{i}-wrong", task="qa", output=wrong, world=k, question=q,
                               reference=right, defective=True, group=f"q{i}",
                               spans=[Span(start=wrong_at, end=len(wrong) - 1)]))
    return items


def summary_item() -> WorldItem:
    out = "The council approved the budget. The vote was unanimous."
    return WorldItem(item_id="s1", task="summarization", output=out,
                     world="The council approved the budget on Monday. Two members voted against it.",
                     reference="The council passed the budget.", defective=True, group="s1",
                     units=[Unit(unit_id="s1.0", text="The council approved the budget.", start=0, end=32,
                                 defective=False, kind="entity"),
                            Unit(unit_id="s1.1", text="The vote was unanimous.", start=33, end=56,
                                 defective=True, kind="contradiction")],
                     spans=[Span(start=33, end=56)])




def fake_encoder(texts: list[str]) -> np.ndarray:
    """Deterministic bag-of-words embedding over a hashed vocabulary (unit-normalised)."""
    import hashlib
    import re

    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in re.findall(r"[a-z0-9]+", t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest()[:6], 16) % 64] += 1.0
    n = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(n == 0, 1, n)


class ScriptedJudge:
    """A judge whose reply text is ``reply(request)``; parsed by the judges' own world parsers."""

    def __new__(cls, reply, judge_id="scripted"):
        from judgeaudit.judges import elicit
        from judgeaudit.judges.base import Judge, JudgeSpec

        class _J(Judge):
            cacheable = False

            def render(self, request):
                return elicit.render(request)

            async def judge_one(self, request):
                text = reply(request)
                parsed = elicit.parse_request(request, text)
                return self.make_verdict(request, raw=text, parse_ok=parsed.ok, defects=parsed.defects,
                                     **elicit.world_fields(request, parsed))

        return _J(JudgeSpec(id=judge_id, backend="scripted", model=judge_id))


def oracle_reply(request) -> str:
    """Reports exactly the gold when the true world is shown, nothing otherwise (JSON per form)."""
    import json

    g = request.meta["gold"]
    shown = request.meta["world_shown"]
    if request.form == "label":
        return json.dumps({"defective": bool(g["defective"]) and shown})
    if request.form == "sentences":
        return json.dumps({"labels": [bool(x) and shown for x in g["unit_labels"]]})
    if request.form == "typed":
        return json.dumps({"defect_ids": g["defect_ids"] if shown else []})
    if request.form == "score":
        return json.dumps({"score": 2 if g["defective"] and shown else 5})
    return json.dumps({"defects": [{"quote": q, "reason": "gold"} for q in g["quotes"]] if shown else []})


def use_tiny_world(monkeypatch) -> None:  # noqa: ANN001 - pytest's MonkeyPatch
    """Every world set spec loads ``tiny_items()`` (the world data-set module replaced for the test), and the
    fake server's key is set."""
    import sys
    import types

    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def world_run(analysis: dict, items: list[WorldItem], set_spec: str, judges: list[str]) -> dict:
    """A world result with every key ``world run`` writes beside the analysis (the report reads it as
    ``WorldFile``): the run's provenance, split and call counts as a run over ``items`` records them, no matcher
    and no structural judge."""
    from judgeaudit.analyses.world.analysis import provenance
    from judgeaudit.commands.world import split_items

    return {**analysis, "votes": 1, "temperature": 0.3, "matcher_judge": None, "matcher_undecided": None,
            "matcher_pairs": None, "second_matcher_judge": None, "second_matcher_undecided": None,
            "provenance": {**provenance(items, set_spec), "judges": judges, "set_provenance": None},
            "split": split_items(items, "all")[1], "calibration": {}, "calls": {}, "calls_by_arm": {}}
