"""In-process scripted judges for loop tests: a responder that fixes exactly the units it is told
about, and a feedback judge that always returns one fixed reply."""

from __future__ import annotations

import json

from judgeaudit.judges.base import Judge, JudgeSpec
from judgeaudit.records import JudgeRequest, Verdict

FIXES = {
    "punctuation:no_comma": lambda t: t.replace(",", ""),
    "change_case:english_lowercase": str.lower,
    "change_case:english_capital": str.upper,
}


class FixNamedUnits(Judge):
    """Revises ``meta['output']`` by applying the fix of every unit the report names (and nothing else)."""

    cacheable = False

    def __init__(self):
        super().__init__(JudgeSpec(id="scripted:fixer", backend="scripted", family="reference"))

    def render(self, request: JudgeRequest) -> str:
        return request.prompt or ""

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        text = request.meta["output"]
        for units in request.meta.get("failed", []):
            for u in units:
                iid = u.split(":", 1)[1]
                text = FIXES[iid](text) if iid in FIXES else text
        return self.make_verdict(request, raw=text, parse_ok=True)


class Constant(Judge):
    """Returns the same reply to every request."""

    cacheable = False

    def __init__(self, reply: str | dict):
        super().__init__(JudgeSpec(id="scripted:constant", backend="scripted", family="reference"))
        self.reply = reply if isinstance(reply, str) else json.dumps(reply)
        self.prompts: list[str] = []

    def render(self, request: JudgeRequest) -> str:
        return request.prompt or ""

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        self.prompts.append(request.prompt or "")
        return self.make_verdict(request, raw=self.reply, parse_ok=True)
