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

import json
import re
from dataclasses import dataclass

from judgeaudit.records import Defect, JudgeRequest

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
        from judgeaudit.world.templates import render as render_world

        return render_world(request)
    if request.form == "graded":
        return render_graded(request)
    if request.form == "pairwise":
        return render_pairwise(request)
    if request.form == "defects":
        return render_defects(request)
    if request.prompt is None:
        raise ValueError(f"generate request {request.request_id} has no prompt")
    return request.prompt


@dataclass(frozen=True)
class ParseResult:
    ok: bool
    score: float | None = None
    #: character offset in the reply of the digit read as ``score`` (where its logprobs are read)
    score_at: int | None = None
    choice: str | None = None
    rationale: str | None = None
    defects: list[Defect] | None = None
    error: str | None = None
    #: the world forms: per-item label, per-unit labels, typed defect ids
    label: bool | None = None
    unit_labels: list[bool] | None = None
    defect_ids: list[str] | None = None


# A whole number 1–9 that is not the start of a decimal ("4.5", "4,5"), a longer number ("10"), a
# range ("2-3", "2 to 3", "3 or 4") or a grade on another scale ("8/10", "8 out of 10"); "7/9" and
# "7 out of 9" state our own scale and are read as 7.
_GRADE = (r"\s*\**\s*([1-9])(?!\w|[.,]\d|\s*(?:[-\u2013\u2014]|to\b|or\b)\s*\d"
          r"|\s*(?:/|out\s+of\b)\s*(?!9(?!\d))\d)")
_GRADE_RE = re.compile(_GRADE, re.IGNORECASE)
_SCORE_LABEL_RE = re.compile(r"\bscore\**\s*[:=]", re.IGNORECASE)
# A scale stated on the grade's line: "(out of 10)" or "(/10)" just after the grade, "(1-10)" just
# after it, "on a 1-5 scale", "on a scale of 1 to 10", "a 10-point scale". Only 1-9 (or 9 points,
# "out of 9") is our own scale; any other makes the grade one on another scale.
_RANGE = r"(\d+)\s*(?:[-\u2013\u2014]|to\b)\s*(\d+)"
_STATED_SCALE_RE = re.compile(
    rf"{_RANGE}\s*(?:-?\s*points?\s+)?scale\b|\bscale\s+(?:of|from)\s+{_RANGE}|(\d+)\s*-?\s*points?\s+scale\b",
    re.IGNORECASE)
_AFTER_GRADE_SCALE_RE = re.compile(rf"\s*[(\[]\s*(?:(?:out\s+of|/)\s*(\d+)|{_RANGE})\s*[)\]]", re.IGNORECASE)
# A list number: a digit followed by "." or ")" and more text on its line ("1. The claim ...").
_LIST_NUMBER_RE = re.compile(r"[1-9][.)][ \t]+\S")


def _other_scale(text: str, at: int) -> bool:
    """Whether the line of the grade at offset ``at`` states a scale other than 1-9."""
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    line_tail = text[at + 1: len(text) if end < 0 else end]
    stated = [tuple(int(g) for g in m.groups() if g is not None)
              for m in _STATED_SCALE_RE.finditer(text[start: len(text) if end < 0 else end])]
    m = _AFTER_GRADE_SCALE_RE.match(line_tail)
    if m:
        stated.append(tuple(int(g) for g in m.groups() if g is not None))
    return any(s not in ((1, 9), (9,)) for s in stated)


def _list_number(text: str, at: int) -> bool:
    """Whether the digit at ``at`` opens a line as a list number ("1. The claim ...")."""
    return not text[text.rfind("\n", 0, at) + 1: at].strip(" \t*") and bool(_LIST_NUMBER_RE.match(text, at))


def _grade_problem(text: str, at: int) -> str | None:
    """Why the digit read at ``at`` is not a grade on our scale (None: it is one)."""
    if _other_scale(text, at):
        return "a grade on another scale"
    if _list_number(text, at):
        return "a list number, not a score"
    return None


def parse_graded(text: str | None) -> ParseResult:
    """Strict graded parser: ``Score: N`` labels, or a reply that starts with a lone digit 1–9.

    Every ``Score:`` label must be followed by the same whole number 1–9; a decimal, a range, a
    grade on another scale (``8/10``, ``8 (out of 10)``, or a line that states another scale: ``4 on a
    1-5 scale``), a list number (``1. The claim ...``), a 0 or a 10, conflicting labels, or no grade
    at all is a parse failure.
    ``score_at`` is the offset of the digit read (the first label's, when there are several).
    """
    if not text or not text.strip():
        return ParseResult(ok=False, error="empty response")
    labels = list(_SCORE_LABEL_RE.finditer(text))
    if labels:
        grades = [_GRADE_RE.match(text, label.end()) for label in labels]
        if not all(grades):
            return ParseResult(ok=False, error="a 'Score:' label not followed by a whole number 1-9")
        problem = next((p for g in grades if (p := _grade_problem(text, g.start(1)))), None)
        if problem:
            return ParseResult(ok=False, error=problem)
        values = sorted({g.group(1) for g in grades})
        if len(values) > 1:
            return ParseResult(ok=False, error=f"conflicting scores {values}")
        return ParseResult(ok=True, score=float(values[0]), score_at=grades[0].start(1))
    m = _GRADE_RE.match(text)
    if m:
        problem = _grade_problem(text, m.start(1))
        if problem:
            return ParseResult(ok=False, error=problem)
        return ParseResult(ok=True, score=float(m.group(1)), score_at=m.start(1))
    return ParseResult(ok=False, error="no whole number on the 1-9 scale found")


# The template asks for "Verdict: A", "Verdict: B" or "Verdict: tie". Accepted around the choice:
# markdown emphasis, brackets ("[[A]]", "(B)"), quotes, and the prompt's own label "Response A".
# A and B are matched case-sensitively as whole words ("a" is the English article; lower-case "b"
# is refused as well so neither side gains from a lenient spelling), "tie" in any case.
_VERDICT_LABEL_RE = re.compile(r"\bverdict\**\s*[:=]", re.IGNORECASE)
_CHOICE_RE = re.compile(r"""[\s*_"'`\[(]*(?:(?i:response)\s+[*_"'`\[(]*)?(A|B|(?i:tie))(?!\w)""")
_NAMED_RE = re.compile(r"\b(A|B|(?i:tie))\b")


def _choice(word: str) -> str:
    return "tie" if word.lower() == "tie" else word


def parse_pairwise(text: str | None) -> ParseResult:
    """Pairwise parser: the last ``Verdict:`` line must name exactly one of A, B, tie.

    The text before that label is the rationale. A verdict line that names something else first
    ("Verdict: a tie", "My verdict: a slight edge to B") or names both sides ("Verdict: A or B") is
    a parse failure.
    """
    if not text or not text.strip():
        return ParseResult(ok=False, error="empty response")
    labels = list(_VERDICT_LABEL_RE.finditer(text))
    if not labels:
        return ParseResult(ok=False, rationale=text.strip(), error="no 'Verdict: A|B|tie' found")
    last = labels[-1]
    rationale = text[: last.start()].rstrip(" \t*_#").strip() or None
    line = text[last.end():].split("\n", 1)[0]
    m = _CHOICE_RE.match(line)
    if not m:
        return ParseResult(ok=False, rationale=rationale, error="the verdict line does not name A, B or tie")
    choice = _choice(m.group(1))
    others = {_choice(w) for w in _NAMED_RE.findall(line[m.end():])} - {choice}
    if others:
        return ParseResult(ok=False, rationale=rationale,
                           error=f"the verdict line names {choice} and {', '.join(sorted(others))}")
    return ParseResult(ok=True, choice=choice, rationale=rationale)


def parse_defects(text: str | None) -> ParseResult:
    """Defect parser: the first JSON list in the reply, each element with ``span`` and ``reason``."""
    if text is None:
        return ParseResult(ok=False, error="empty response")
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return ParseResult(ok=False, error="no JSON list found")
    try:
        items = json.loads(text[start : end + 1])
    except json.JSONDecodeError as e:
        return ParseResult(ok=False, error=f"malformed JSON list ({e.msg})")
    defects = []
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not isinstance(it.get("span"), str) or not isinstance(it.get("reason"), str):
            return ParseResult(ok=False, error=f"defect {i} lacks a string 'span' and 'reason'")
        cit = it.get("citation")
        defects.append(Defect(span=it["span"], reason=it["reason"], citation=cit if isinstance(cit, str) else None))
    return ParseResult(ok=True, defects=defects)


def parse(form: str, text: str | None) -> ParseResult:
    if form == "graded":
        return parse_graded(text)
    if form == "pairwise":
        return parse_pairwise(text)
    if form == "defects":
        return parse_defects(text)
    ok = bool(text and text.strip())
    return ParseResult(ok=ok, error=None if ok else "empty response")


def parse_request(request: JudgeRequest, text: str | None) -> ParseResult:
    """``parse`` for a request: world requests go to the world parsers (which need the units)."""
    if is_world(request):
        from judgeaudit.world.parse import parse as parse_world

        return parse_world(request, text)
    return parse(request.form, text)


def world_fields(request: JudgeRequest, parsed: ParseResult) -> dict:
    """The Verdict fields a world reply fills (label, unit labels, ids, the 1–5 score); {} otherwise."""
    if not is_world(request):
        return {}
    fields = dict(label=parsed.label, unit_labels=parsed.unit_labels, defect_ids=parsed.defect_ids)
    if request.form == "score":
        fields.update(score=parsed.score, score_source="parsed" if parsed.ok else None)
    return fields


def expected_score(dist: list[float]) -> float:
    """Mean of the 1–9 scale under a probability vector over it."""
    return float(sum(p * s for p, s in zip(dist, SCALE, strict=True)))
