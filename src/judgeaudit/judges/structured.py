"""Structured outputs: the JSON schema of each verdict form, sent in ``response_format``, and the
strict reading of a schema-constrained reply.

``api:<model>?structured=json_schema`` sends, for a graded, pairwise or defects request,

    {"type": "json_schema", "json_schema": {"name": "<form>_verdict", "strict": true, "schema": {...}}}

as OpenAI's chat-completions API documents it (Structured Outputs; LiteLLM passes it on to providers that
support it). The schemas are the pydantic models below (``extra="forbid"``, every property required, as
strict mode asks):

* graded — ``{"score": 1..9}``;
* pairwise — ``{"rationale": str, "choice": "A" | "B" | "tie"}``;
* defects — ``{"defects": [{"span": str, "reason": str, "citation": str | null}, ...]}``.

The reply is read as JSON against the same model: a reply that is not JSON, or that breaks the schema (a
missing or extra key, a score off the scale, a choice that is not A/B/tie), is a parse failure with the
reason, counted like any other. World requests keep their own JSON replies (``world.parse``) and are sent
without a schema.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from judgeaudit.errors import InputError
from judgeaudit.judges.elicit import ParseResult, is_world
from judgeaudit.records import Defect, JudgeRequest

MODES = ("json_schema",)
"""The values of the ``structured`` option (``json_schema``: a schema in ``response_format``)."""


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class GradedReply(_Reply):
    """A graded verdict: one whole score on the 1–9 scale."""

    score: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9]


class PairwiseReply(_Reply):
    """A pairwise verdict: a short rationale, then the choice."""

    rationale: str
    choice: Literal["A", "B", "tie"]


class DefectItem(_Reply):
    span: str
    reason: str
    citation: str | None


class DefectsReply(_Reply):
    """A defect report: the quoted spans with reasons (an empty list: no defect)."""

    defects: list[DefectItem]


FORMS: dict[str, type[_Reply]] = {"graded": GradedReply, "pairwise": PairwiseReply, "defects": DefectsReply}
"""Verdict form -> the reply model whose JSON schema is sent."""


def check_mode(mode: str | None) -> str | None:
    if mode is not None and mode not in MODES:
        raise InputError(f"structured must be one of {', '.join(MODES)}, not {mode!r}", field="structured")
    return mode


def applies(request: JudgeRequest) -> bool:
    """Whether a request is sent with a schema (graded, pairwise and defects requests; not world ones)."""
    return request.form in FORMS and not is_world(request)


def _strict(schema: Any) -> Any:
    """``schema`` with pydantic's titles dropped (strict mode wants only the schema's keywords)."""
    if isinstance(schema, dict):
        return {k: _strict(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def schema(form: str) -> dict[str, Any]:
    """The JSON schema of a verdict form's reply."""
    return _strict(FORMS[form].model_json_schema())


def response_format(form: str) -> dict[str, Any]:
    """The ``response_format`` body field for a request of ``form``."""
    return {"type": "json_schema", "json_schema": {"name": f"{form}_verdict", "strict": True, "schema": schema(form)}}


_SCORE_AT_RE = re.compile(r'"score"\s*:\s*(\d)')


def _reason(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "the reply"
    return f"the reply breaks the {where!r} schema: {first.get('msg')}" if first.get("loc") else \
        f"the reply breaks the schema: {first.get('msg')}"


def parse(request: JudgeRequest, text: str | None) -> ParseResult:
    """Read a schema-constrained reply for ``request``; a parse failure, with the reason, when it is not
    JSON or breaks the form's schema."""
    if not text or not text.strip():
        return ParseResult(ok=False, error="empty response")
    model = FORMS[request.form]
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return ParseResult(ok=False, error=f"the reply is not JSON ({e.msg})")
    try:
        reply = model.model_validate_json(text)
    except ValidationError as e:
        return ParseResult(ok=False, error=_reason(e))
    if isinstance(reply, GradedReply):
        m = _SCORE_AT_RE.search(text)
        return ParseResult(ok=True, score=float(reply.score), score_at=m.start(1) if m else None)
    if isinstance(reply, PairwiseReply):
        return ParseResult(ok=True, choice=reply.choice, rationale=reply.rationale.strip() or None)
    assert isinstance(reply, DefectsReply)
    return ParseResult(ok=True, defects=[Defect(span=d.span, reason=d.reason, citation=d.citation)
                                         for d in reply.defects])
