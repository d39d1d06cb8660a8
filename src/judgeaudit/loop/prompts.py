"""The loop's prompts: the regulator's (judge's) request and the responder's revision request.

Principle (blind-spot §3.1): the regulator prompts of every arm are byte-identical except for the
block that carries the world (``world_block``); the channel (free text, typed ids, score) and the
goal wording are the other named factors, each changed only by its own arm. The paper's prompts are
unpublished ("on request"): these are this package's, versioned by ``TEMPLATE_VERSION``.
"""

from __future__ import annotations

import json
import re
from typing import Any

TEMPLATE_VERSION = "loop-1"

GOALS = {
    "default": "Find every defect in the response.",
    "good": "Is the response good? Report what is wrong with it.",
    "constraints": "Does the response satisfy every constraint in the instruction? Report each constraint it "
                   "does not satisfy.",
}
"""Goal wording (P37): ``good`` is E0 ("is it good"), ``constraints`` is E1."""

WORLD_LABEL = {
    "ifeval": "The instruction the response had to follow",
    "gsm8k": "The problem the response had to solve",
    "halueval_qa": "The knowledge the answer had to respect",
}

_CHANNEL = {
    "free": ('Answer with JSON only: {"defects": [{"quote": "<text from the response>", "reason": "<what is '
             'wrong>", "severity": <1 minor, 2 major, 3 critical>}]}. An empty list means no defect.'),
    "typed": ('Answer with JSON only: {"violated": [<ids>]}, listing the ids from this list that the response '
              'violates (an empty list means none): {ids}.'),
    "score": ('Answer with JSON only: {"score": <1-5>}, where 5 means no defect and 1 means severely '
              'defective.'),
}


def world_block(task: str, world: str | None) -> str:
    """The block that carries the world; empty for a blind arm (the only text arms differ in)."""
    if not world:
        return ""
    return f"{WORLD_LABEL[task]}:\n<<<\n{world}\n>>>\n\n"


def regulator_prompt(task: str, output: str, *, world: str | None, question: str | None, channel: str,
                     goal: str = "default", typed_ids: tuple[str, ...] = ()) -> str:
    """The judge's request for one output."""
    q = f"Question:\n<<<\n{question}\n>>>\n\n" if question else ""
    fmt = _CHANNEL[channel].replace("{ids}", ", ".join(typed_ids))
    return (f"You are reviewing a response. {GOALS[goal]}\n\n{world_block(task, world)}{q}"
            f"Response:\n<<<\n{output}\n>>>\n\n{fmt}")


def rewrite_prompt(request: str) -> str:
    """The constraints-hidden arm's rewriter request (§8.2): drop every format/length/case/keyword/
    structure requirement, keep the task."""
    return ("Rewrite the following user request so that it keeps the task but drops every requirement on "
            "format, length, case, keywords and structure. Output the rewritten request only.\n\n"
            f"<<<\n{request}\n>>>")


def initial_prompt(task: str, request: str, world: str) -> str:
    """The request an initial responder (or a §9 agent) answers."""
    if task == "gsm8k":
        return f"{request}\n\nSolve the problem step by step and end with a line 'A: <number>'."
    if task == "halueval_qa":
        return f"Knowledge:\n{world}\n\nQuestion: {request}\nAnswer the question in a few words."
    return request


def responder_prompt(task: str, request: str, world: str, output: str, feedback: list[str] | None) -> str:
    """The revision request: the responder keeps its task and sees its previous output and the
    report (``feedback``); the no-report control (``None``) is told only to revise."""
    head = initial_prompt(task, request, world)
    if feedback is None:
        tail = "Revise your response."
    else:
        items = "\n".join(f"{i}. {f}" for i, f in enumerate(feedback, 1))
        tail = f"A reviewer reported these problems:\n{items}\n\nRevise your response to fix them."
    return (f"{head}\n\nYour previous response:\n<<<\n{output}\n>>>\n\n{tail} "
            "Reply with the revised response only.")


_JSON = re.compile(r"\{.*\}", re.DOTALL)


def parse_json(raw: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (code fences and prose around it are ignored), or None."""
    if not raw:
        return None
    m = _JSON.search(raw)
    if m is None:
        return None
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_free(raw: str | None) -> list[tuple[str, int]] | None:
    """``[(complaint text, severity)]`` from a free-text report; None when it does not parse."""
    obj = parse_json(raw)
    if obj is None or not isinstance(obj.get("defects"), list):
        return None
    out = []
    for d in obj["defects"]:
        if isinstance(d, dict):
            text = " — ".join(str(d[k]) for k in ("quote", "reason") if d.get(k))
            sev = d.get("severity")
            sev = int(sev) if isinstance(sev, (int, float)) and not isinstance(sev, bool) else 1
        else:
            text, sev = str(d), 1
        if text.strip():
            out.append((text, sev))
    return out


def parse_typed(raw: str | None, allowed: tuple[str, ...]) -> list[str] | None:
    """The reported ids among ``allowed`` (others dropped); None when the reply does not parse."""
    obj = parse_json(raw)
    if obj is None or not isinstance(obj.get("violated"), list):
        return None
    return [i for i in dict.fromkeys(str(x) for x in obj["violated"]) if i in allowed]


def parse_score(raw: str | None) -> float | None:
    """The 1–5 score, or None."""
    obj = parse_json(raw)
    s = None if obj is None else obj.get("score")
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not 1 <= s <= 5:
        return None
    return float(s)
