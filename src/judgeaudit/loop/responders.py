"""Responders: who writes the initial outputs and who revises them.

* Any generating judge spec (``api:…``, ``local``, ``hf:…``): the request is sent with
  ``form="generate"`` (as ``probes.build`` sends its generator prompts) and the completion is the
  output. Calls go through the call store, so a rerun buys nothing twice.
* ``reference:echo``: returns the output it is asked to revise, unchanged (a free, uncached
  instrument for tests and sanity tables: fixed = broken = 0).
* Initial outputs only: ``shipped`` (the released GPT-4 IFEval responses or GPT-3 GSM8K solutions;
  ``shipped:CONDITION`` picks another GSM8K condition) and ``replay:PATH`` (a JSONL of
  ``{item_id, output}`` or IFEval-style ``{prompt, response}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.families import REFERENCE
from judgeaudit.judges.base import Judge, JudgeSpec
from judgeaudit.records import JudgeRequest, Verdict

ECHO = "reference:echo"


class EchoResponder(Judge):
    """Returns ``request.meta['output']`` unchanged."""

    cacheable = False
    max_concurrency = 1024

    def render(self, request: JudgeRequest) -> str:
        return "\x1f".join(str(x) for x in (request.form, request.request_id, request.prompt,
                                            request.meta.get("output")))

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        return self.make_verdict(request, raw=str(request.meta.get("output", "")), parse_ok=True, provider="reference",
                             cost_usd=0.0, latency_s=0.0)


def make_responder(spec: str | Judge, **options: Any) -> Judge:
    """A responder from a spec (``reference:echo`` or any judge spec) or a ready Judge."""
    if isinstance(spec, Judge):
        return spec
    if spec == ECHO:
        return EchoResponder(JudgeSpec(id=ECHO, backend="reference", model="echo", family=REFERENCE))
    from judgeaudit.judges import make_judge

    return make_judge(spec, **options)


def read_outputs(path: str | Path, items: list[Any]) -> dict[str, str]:
    """``item_id → output`` from a JSONL of ``{item_id, output}`` or ``{prompt, response}`` (joined by
    the item's request text); every item must be found."""
    from judgeaudit.io import iter_jsonl

    by_id: dict[str, str] = {}
    by_prompt: dict[str, str] = {}
    for line, obj in iter_jsonl(path):
        if "item_id" in obj and "output" in obj:
            by_id[str(obj["item_id"])] = str(obj["output"])
        elif "prompt" in obj and "response" in obj:
            by_prompt[str(obj["prompt"])] = str(obj["response"])
        else:
            raise InputError("each line needs item_id and output (or prompt and response)", path=path, line=line,
                             field="output")
    out = {}
    for it in items:
        got = by_id.get(it.item_id, by_prompt.get(it.request))
        if got is None:
            raise InputError(f"no output for item {it.item_id}", path=path, field="item_id")
        out[it.item_id] = got
    return out
