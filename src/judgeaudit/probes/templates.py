"""Versioned generator and verifier templates (construct-validity.txt §4.1–4.2, Appendix B).

There is one generator template per slot *class* (construct-changing, construct-preserving); a
slot enters a template only through ``{slot}`` and ``{gloss}``, filled from the frozen taxonomy
(``probes/taxonomy.py``), so a template is never edited to accommodate a slot. ``{tol}`` is the
length tolerance, fixed before generation. The verifier template asks for the Appendix B fields
as one JSON object, plus its own answer to the annotators' question (Appendix H, S4).

Bump ``TEMPLATE_VERSION`` whenever a template's text changes: it is recorded on every probe.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from judgeaudit.probes.taxonomy import SLOT_BY_NAME, SLOTS

TEMPLATE_VERSION = "probes-templates/1"

#: The construct every built probe is graded against (Probe.criterion).
DEFAULT_CRITERION = "Does the claim state no more than its evidence licenses?"

GENERATOR_TEMPLATES: dict[str, str] = {
    "construct_changing": """\
You are editing one sentence for a measurement study of scientific claims.

Evidence:
{evidence}

Claim:
{claim}

Make exactly ONE edit of type "{slot}": the edit {gloss}.
Rules:
- Change only what this edit type changes; keep every other word, fact and number.
- Do not add citations, sources or attributions ("according to ...", "[1]").
- Keep the same register and tone.
- The edited claim must be within {tol_pct}% of the original's length in characters.

Return only a JSON object: {{"edited": "<the edited claim>"}}
""",
    "construct_preserving": """\
You are editing one sentence for a measurement study of scientific claims.

Evidence:
{evidence}

Claim:
{claim}

Rewrite the claim with ONE edit of type "{slot}": the edit {gloss}.
The rewritten claim must say exactly what the original says, about exactly the same cases,
with exactly the same strength of commitment.
Rules:
- Do not add or remove hedges (may, might, suggests, ...), intensifiers (substantially,
  clearly, ...), quantifiers (some, all, often, ...) or asides ("as is well known", "in practice").
- Do not add citations, sources or attributions.
- Keep every fact and number.
- The rewritten claim must be within {tol_pct}% of the original's length in characters.

Return only a JSON object: {{"edited": "<the rewritten claim>"}}
""",
}

VERIFIER_TEMPLATE = """\
You are checking a minimal edit for a measurement study of scientific claims.

Evidence:
{evidence}

Sentence 1:
{original}

Sentence 2:
{edited}

Edit types (exactly one was intended):
{slot_menu}

Answer each question about the change from Sentence 1 to Sentence 2:
- facts_identical: do both sentences assert the same facts (same entities, numbers, findings)? true/false
- anchor_free_both: are both sentences free of provenance anchors (citations, "according to",
  named sources, "studies show")? true/false
- register_comparable: are the two sentences in a comparable register? true/false
- slot_changed: which ONE edit type from the list above best describes the change? (its name)
- scope_relation: compared with Sentence 1, does Sentence 2 cover the "same", a "wider" or a
  "narrower" set of situations?
- second_claims_more: does Sentence 2 claim more than the evidence licenses? true/false

Return only a JSON object with exactly these keys:
{{"facts_identical": true, "anchor_free_both": true, "register_comparable": true,
 "slot_changed": "<edit type>", "scope_relation": "same|wider|narrower",
 "second_claims_more": false}}
"""

SCOPE_RELATIONS = ("same", "wider", "narrower")


def slot_menu() -> str:
    """The list of edit types shown to the verifier (every slot, in taxonomy order)."""
    return "\n".join(f"- {s.name}: {s.gloss}" for s in SLOTS)


def render_generator_prompt(claim: str, evidence: str, slot: str, tolerance: float) -> str:
    """The generator prompt for one (base item, slot), from its slot class's template."""
    s = SLOT_BY_NAME[slot]
    return GENERATOR_TEMPLATES[s.slot_class].format(
        evidence=evidence, claim=claim, slot=s.name, gloss=s.gloss, tol_pct=f"{tolerance * 100:g}")


def render_verifier_prompt(original: str, edited: str, evidence: str) -> str:
    """The verifier prompt for one pair. The requested slot is *not* shown (the verifier names it)."""
    return VERIFIER_TEMPLATE.format(evidence=evidence, original=original, edited=edited,
                                    slot_menu=slot_menu())


_JSON_OBJ = re.compile(r"\{.*\}", re.S)


def _json_object(raw: str) -> dict[str, Any] | None:
    """The first JSON object in a completion (tolerates code fences and chatter around it)."""
    m = _JSON_OBJ.search(raw or "")
    if not m:
        return None
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_generator_output(raw: str | None) -> str | None:
    """The edited text from a generator completion: ``{"edited": ...}``; None when unparseable."""
    if raw is None:
        return None
    obj = _json_object(raw)
    if obj is None or not isinstance(obj.get("edited"), str):
        return None
    text = obj["edited"].strip()
    return text or None


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "yes"):
        return True
    if isinstance(v, str) and v.strip().lower() in ("false", "no"):
        return False
    return None


@dataclass(frozen=True)
class VerifierReport:
    """The Appendix B fields a verifier returns for one pair, plus its S4 answer."""

    facts_identical: bool
    anchor_free_both: bool
    register_comparable: bool
    slot_changed: str
    scope_relation: str
    second_claims_more: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_verifier_output(raw: str | None) -> VerifierReport | None:
    """Parse a verifier completion; None when any field is missing or of the wrong kind."""
    if raw is None:
        return None
    obj = _json_object(raw)
    if obj is None:
        return None
    bools = {k: _as_bool(obj.get(k)) for k in
             ("facts_identical", "anchor_free_both", "register_comparable", "second_claims_more")}
    if any(v is None for v in bools.values()):
        return None
    slot = obj.get("slot_changed")
    scope = obj.get("scope_relation")
    if not isinstance(slot, str) or not isinstance(scope, str):
        return None
    scope = scope.strip().lower()
    if scope not in SCOPE_RELATIONS:
        return None
    return VerifierReport(slot_changed=slot.strip(), scope_relation=scope, **bools)  # type: ignore[arg-type]
