"""World judge prompts: one template per report form, assembled from named blocks.

A rendered prompt is a sequence of blocks joined by a blank line. Arms change only the blocks
named in ``CONTEXT_BLOCKS`` (the world, the question, the reference) and, for the arms that add a
step, the ``procedure`` block; every other block is the same bytes in every arm (blind-spot §3.3:
prompts "byte-identical across arms except for the block that carries w"). ``render_blocks``
returns the blocks so that tests can check exactly that.

What a request carries (``JudgeRequest``): ``text`` = the judged output; ``evidence`` = the world
block's body as the arm delivers it (plain, numbered, among distractors, routed), None when the
arm shows no world; ``question``, ``reference`` = optional blocks; ``criterion`` = the rubric
(the defect classes; a typed rubric lists the type ids); ``units`` = the numbered sentences or
claims (``sentences`` form) or the allowed type ids (``typed`` form); ``meta['procedure']`` = an
extra step (restate, cite, self-contradiction check) or absent.
"""

from __future__ import annotations

from judgeaudit.records import JudgeRequest

TEMPLATE_VERSION = "world-v1"
WORLD_FORMS = ("label", "sentences", "typed", "score", "defects")
CONTEXT_BLOCKS = ("question", "world", "reference")
#: the blocks an arm with an extra step may also change
PROCEDURE_BLOCKS = ("procedure",)

DEFAULT_RUBRIC = (
    "Defect classes: a statement that is false, unsupported or contradicted by what the output must "
    "respect; an omitted or violated requirement; an internal contradiction; an error of reasoning "
    "or arithmetic."
)

_HEADER = "You audit an output for defects. Judge only the output; report what is wrong with it."

_ANSWER = {
    "label": ('Answer with one JSON object only: {"defective": true} if the output has at least one '
              'defect, {"defective": false} otherwise.'),
    "sentences": ('Answer with one JSON object only: {"labels": [true, false, ...]} with one entry per '
                  'numbered unit, in order; true means the unit is defective.'),
    "typed": ('Answer with one JSON object only: {"defect_ids": ["<id>", ...]} listing the ids, from '
              'the allowed ids, of every requirement the output violates, or [] if none.'),
    "score": ('Answer with one JSON object only: {"score": N}, N a whole number from 1 (severely '
              'defective) to 5 (no defect).'),
    "defects": ('Answer with one JSON object only: {"defects": [{"quote": "<verbatim quote from the '
                'output>", "reason": "<why it is a defect>", "citation": "<optional>"}]}, or '
                '{"defects": []} if there is no defect.'),
}

#: Procedure steps. ``restate`` and its rubric-restating control ``restate-rubric`` (and the blind
#: restatement ``restate-blind``) have the same number of whitespace-separated tokens (test).
PROCEDURES = {
    "restate": ("Before reporting, restate the source material in your own words under the "
                "heading 'Restatement:', then give your report."),
    "restate-rubric": ("Before reporting, restate the defect classes in your own words under the "
                       "heading 'Restatement:', then give your report."),
    "restate-blind": ("Before reporting, restate the judged output in your own words under the "
                      "heading 'Restatement:', then give your report."),
    "cite": ("The source sentences are numbered. Every defect you report must cite the number of the "
             "source sentence that contradicts it or fails to support it, as citation \"[n]\"."),
    "self-contradiction": ("Also check whether the output contradicts itself: report every pair of its "
                           "own statements that cannot both be true as a defect."),
}


def _units_block(request: JudgeRequest) -> str | None:
    if request.form == "sentences":
        units = request.units or []
        return "Units:\n" + "\n".join(f"({i}) {u}" for i, u in enumerate(units, 1))
    if request.form == "typed":
        return "Allowed ids:\n" + "\n".join(request.units or [])
    return None


def render_blocks(request: JudgeRequest) -> list[tuple[str, str]]:
    """The named blocks of the prompt for ``request``, in order (absent blocks left out)."""
    if request.form not in WORLD_FORMS:
        raise ValueError(f"no world template for form {request.form!r}")
    if request.text is None:
        raise ValueError(f"world request {request.request_id} has no output text")
    blocks: list[tuple[str, str]] = [("header", _HEADER), ("rubric", request.criterion or DEFAULT_RUBRIC)]
    if request.question is not None:
        blocks.append(("question", f"Question:\n{request.question}"))
    if request.evidence is not None:
        blocks.append(("world", f"Source material:\n{request.evidence}"))
    if request.reference is not None:
        blocks.append(("reference", f"Reference:\n{request.reference}"))
    blocks.append(("output", f"Output:\n{request.text}"))
    units = _units_block(request)
    if units is not None:
        blocks.append(("units", units))
    procedure = request.meta.get("procedure")
    if procedure is not None:
        if procedure not in PROCEDURES:
            raise ValueError(f"unknown procedure {procedure!r}; one of {', '.join(PROCEDURES)}")
        blocks.append(("procedure", PROCEDURES[procedure]))
    blocks.append(("answer", _ANSWER[request.form]))
    return blocks


def render(request: JudgeRequest) -> str:
    """The exact prompt text (it enters the call key)."""
    return "\n\n".join(text for _, text in render_blocks(request))
