"""Elicitation: versioned prompt templates and strict parsers for the verdict forms.

* graded — a score on a fixed 1–9 scale that *we* cut (construct-validity.txt Remark 1). The
  template is plain text ending in ``Score:`` so that a base model (the embedded default) puts its
  probability on the score digits, and a chat model answers in the same form.
* pairwise — ``A``, ``B`` or ``tie`` with a rationale.
* defects — a JSON list of ``{"span", "reason", "citation"?}`` objects (or ``[]``).
* generate — the request's ``prompt`` sent as is (generators and verifiers).

A parse failure is not an exception: parsers return ``ParseResult(ok=False, ...)`` and the judge
records a Verdict with ``parse_ok=False``.
"""

from __future__ import annotations

from judgeaudit.judges.forms import family
from judgeaudit.judges.replies import ParseResult, read_defects, read_graded, read_pairwise
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale
from judgeaudit.records import JudgeRequest

__all__ = ["ParseResult", "parse", "parse_defects", "parse_graded", "parse_pairwise", "render"]

TEMPLATE_VERSION = "v1"
WORLD_TEMPLATE = "world"
SCALE = tuple(range(1, 10))
OVERREACH_CRITERION = "Overreach: does the claim assert more than the evidence licenses?"

_GRADED_HEADER = (
    "Each claim below is graded for overreach against its evidence on a scale from 1 to 9.\n"
    "1 = fully licensed by the evidence; 5 = goes somewhat beyond it; 9 = far beyond what the "
    "evidence licenses.\n"
)
_GRADED_GENERIC_HEADER = (
    "Each text below is graded against the criterion on a scale from 1 to 9.\n"
    "1 = fully meets the criterion; 5 = partly fails it; 9 = fails it entirely.\n"
)

# Few-shot examples are part of the versioned template: the same for every judge and every item.
_GRADED_EXAMPLES = (
    ("Trials in 400 adults over 65 found the drug lowered systolic blood pressure by 8 mmHg on "
     "average over 12 weeks.",
     "In adults over 65, the drug lowered systolic blood pressure over 12 weeks in the trials.", 1),
    ("A survey of 30 coastal towns in Norway found that harbour investment was followed by modest "
     "employment gains in most towns.",
     "Harbour investment always creates large employment gains in every coastal economy.", 9),
    ("In two benchmark datasets, the pruned network kept accuracy within one point of the full model.",
     "The pruned network keeps accuracy close to the full model on all tasks.", 6),
)


def _graded_block(evidence: str | None, text: str, criterion: str | None, score: int | None) -> str:
    lines = []
    if criterion and criterion != OVERREACH_CRITERION:
        lines.append(f"Criterion: {criterion}")
    if evidence:
        lines.append(f"Evidence: {evidence}")
    lines.append(f"Claim: {text}" if evidence else f"Text: {text}")
    lines.append("Score:" + (f" {score}" if score is not None else ""))
    return "\n".join(lines)


def graded_prefix(criterion: str | None = None) -> str:
    """The item-independent part of the graded prompt (evaluated once by the local judge)."""
    generic = bool(criterion) and criterion != OVERREACH_CRITERION
    head = _GRADED_GENERIC_HEADER if generic else _GRADED_HEADER
    if generic:
        return head + "\n"
    shots = "\n\n".join(_graded_block(ev, cl, None, s) for ev, cl, s in _GRADED_EXAMPLES)
    return head + "\n" + shots + "\n\n"


def render_graded(request: JudgeRequest) -> str:
    """Full graded prompt: shared prefix + this item, ending in ``Score:``."""
    if request.text is None:
        raise ValueError(f"graded request {request.request_id} has no text")
    return graded_prefix(request.criterion) + _graded_block(request.evidence, request.text,
                                                            request.criterion, None)


def render_pairwise(request: JudgeRequest) -> str:
    """Pairwise prompt asking for a rationale then ``Verdict: A|B|tie``."""
    crit = request.criterion or "Which response follows the instruction better and is more accurate?"
    return (
        "You compare two responses to the same instruction.\n"
        f"Criterion: {crit}\n\n"
        f"Instruction:\n{request.prompt}\n\n"
        f"Response A:\n{request.response_a}\n\n"
        f"Response B:\n{request.response_b}\n\n"
        "Explain briefly which response is better, then end with a line 'Verdict: A', "
        "'Verdict: B' or 'Verdict: tie'.\nRationale:"
    )


def render_defects(request: JudgeRequest) -> str:
    """Defect-report prompt: quote each defective span with a reason, as a JSON list."""
    parts = ["You audit a text for defects against its source material."]
    if request.criterion:
        parts.append(f"Criterion: {request.criterion}")
    if request.evidence:
        parts.append(f"Source:\n{request.evidence}")
    parts.append(f"Text:\n{request.text}")
    parts.append(
        'Answer with a JSON list only: [{"span": "<exact quote from the text>", "reason": "<why>", '
        '"citation": "<quote from the source, optional>"}], or [] if there is no defect.\nDefects:'
    )
    return "\n\n".join(parts)


def is_world(request: JudgeRequest) -> bool:
    """Whether ``request`` uses the world templates (``meta['template'] == 'world'``; blind-spot §3)."""
    return request.meta.get("template") == WORLD_TEMPLATE


def render(request: JudgeRequest) -> str:
    """The exact text a judge is sent for ``request`` (it enters the call key)."""
    if is_world(request):
        return family(WORLD_TEMPLATE).render(request)
    if request.form == "graded":
        return render_graded(request)
    if request.form == "pairwise":
        return render_pairwise(request)
    if request.form == "defects":
        return render_defects(request)
    if request.prompt is None:
        raise ValueError(f"generate request {request.request_id} has no prompt")
    return request.prompt


def parse_graded(text: str | None, scale: Scale = OVERREACH_SCALE) -> ParseResult:
    """A grade on ``scale`` (default judgeaudit's 1–9) in any framing judges write (``replies.read_graded``):
    ``Score: N``, ``[[N]]``, ``{"score": N}``, ``Score (1-9): N``; a decimal, a range, a grade on another
    scale, a list number, an off-scale number, conflicting statements or no grade is a parse failure.
    ``score_at`` is the offset of the digit read (the first statement's, when there are several)."""
    return read_graded(text, scale)


def parse_pairwise(text: str | None) -> ParseResult:
    """A/B/tie in any framing judges write (``replies.read_pairwise``): the last ``Verdict:`` line,
    ``[[A]]``/``[[B]]``/``[[C]]``, Arena-Hard's five-way ``[[A>B]]`` (with its strength), ``{"verdict": "A"}``.
    Both sides named, or statements that disagree, is a parse failure."""
    return read_pairwise(text)


def parse_defects(text: str | None) -> ParseResult:
    """Defect parser: the first JSON list in the reply, each element with ``span`` and ``reason``."""
    return read_defects(text)


def parse(form: str, text: str | None, scale: Scale = OVERREACH_SCALE) -> ParseResult:
    """Read a reply of verdict form ``form`` (graded replies on ``scale``)."""
    if form == "graded":
        return parse_graded(text, scale)
    if form == "pairwise":
        return parse_pairwise(text)
    if form == "defects":
        return parse_defects(text)
    ok = bool(text and text.strip())
    return ParseResult(ok=ok, error=None if ok else "empty response")


def parse_request(request: JudgeRequest, text: str | None, scale: Scale | None = None) -> ParseResult:
    """``parse`` for a request (graded replies on ``scale``, default the 1–9): world requests go to the
    world parsers (which need the units)."""
    if is_world(request):
        return family(WORLD_TEMPLATE).parse(request, text)
    return parse(request.form, text, scale or OVERREACH_SCALE)


def world_fields(request: JudgeRequest, parsed: ParseResult) -> dict:
    """The Verdict fields a world reply fills (label, unit labels, ids, the 1–5 score); {} otherwise."""
    if not is_world(request):
        return {}
    fields = family(WORLD_TEMPLATE).verdict_fields
    return fields(request, parsed) if fields is not None else {}


def expected_score(dist: list[float]) -> float:
    """Mean of the 1–9 scale under a probability vector over it."""
    return float(sum(p * s for p, s in zip(dist, SCALE, strict=True)))
