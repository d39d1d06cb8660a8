"""The world report forms, registered into the judges' template-family registry (``judges.forms``).

Importing this module (``world.requests`` does) tells every judge how a world request is rendered
(``world.templates``), how its reply is read (``world.parse``), which blocks a user's template for it
may name (``world``, ``question``, ``reference``, ``units``, ``procedure``, ``rubric``), and which
Verdict fields the reply fills.
"""

from __future__ import annotations

from typing import Any

from judgeaudit.judges.elicit import WORLD_TEMPLATE
from judgeaudit.judges.forms import TemplateFamily, register_family
from judgeaudit.judges.replies import ParseResult
from judgeaudit.records import JudgeRequest
from judgeaudit.world import parse as world_parse
from judgeaudit.world import templates as world_templates


def _context(request: JudgeRequest) -> dict[str, Any]:
    """The rendered blocks of the world prompt by name (``world``, ``rubric``, ``units``, ``answer``…)."""
    return {name: text for name, text in world_templates.render_blocks(request)}


def _fields(request: JudgeRequest, parsed: ParseResult) -> dict[str, Any]:
    fields: dict[str, Any] = dict(label=parsed.label, unit_labels=parsed.unit_labels, defect_ids=parsed.defect_ids)
    if request.form == "score":
        fields.update(score=parsed.score, score_source="parsed" if parsed.ok else None)
    return fields


WORLD = register_family(TemplateFamily(
    name=WORLD_TEMPLATE, forms=world_templates.WORLD_FORMS, render=world_templates.render,
    parse=world_parse.parse, context=_context, verdict_fields=_fields, version=world_templates.TEMPLATE_VERSION,
    reply_keys=dict(world_parse._KEYS)))
