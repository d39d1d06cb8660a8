"""Scripted in-process judges for the probe-build tests: a generator and a verifier whose answers
are functions of the prompt, so every gate can be driven deliberately."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from judgeaudit.judges.base import Judge, JudgeSpec
from judgeaudit.records import JudgeRequest, Verdict

_GEN = re.compile(r"Claim:\n(?P<claim>.*?)\n\n.*?edit of type \"(?P<slot>\w+)\"", re.S)
_VER = re.compile(r"Sentence 1:\n(?P<original>.*?)\n\nSentence 2:\n(?P<edited>.*?)\n\nEdit types", re.S)


class ScriptedJudge(Judge):
    """A judge answering ``form="generate"`` requests with ``responder(prompt)`` — or
    ``responder(prompt, epoch)`` with ``pass_epoch=True`` — and recording every prompt it is sent."""

    def __init__(self, name: str, family: str, responder: Callable[..., str | None], *, pass_epoch: bool = False):
        super().__init__(JudgeSpec(id=name, backend="scripted", model=name, family=family))
        self.responder = responder
        self.pass_epoch = pass_epoch
        self.prompts: list[str] = []

    def render(self, request: JudgeRequest) -> str:
        return request.prompt or ""

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        self.prompts.append(request.prompt or "")
        args = (request.prompt or "", request.epoch) if self.pass_epoch else (request.prompt or "",)
        raw = self.responder(*args)
        if raw is None:
            return self.make_verdict(request, error="scripted API failure")
        return self.make_verdict(request, raw=raw, parse_ok=True)


def generator_from(edits: dict[tuple[str, str], str], family: str = "fam-a") -> ScriptedJudge:
    """A generator returning ``edits[(claim, slot)]`` as ``{"edited": ...}``."""

    def respond(prompt: str) -> str | None:
        m = _GEN.search(prompt)
        assert m, prompt
        text = edits.get((m["claim"], m["slot"]))
        return None if text is None else json.dumps({"edited": text})

    return ScriptedJudge("scripted-generator", family, respond)


def verifier_from(report: Callable[[str, str], dict], family: str = "fam-b") -> ScriptedJudge:
    """A verifier whose JSON report is ``report(original, edited)``."""

    def respond(prompt: str) -> str:
        m = _VER.search(prompt)
        assert m, prompt
        return "```json\n" + json.dumps(report(m["original"], m["edited"])) + "\n```"

    return ScriptedJudge("scripted-verifier", family, respond)


def good_report(slot: str, **over) -> dict:
    """A verifier report that passes every gate for ``slot``."""
    rep = {"facts_identical": True, "anchor_free_both": True, "register_comparable": True,
           "slot_changed": slot, "scope_relation": "same", "second_claims_more": False}
    rep.update(over)
    return rep
