"""The gates an edit must pass, in order (construct-validity.txt §4.2 Protocol 1, Appendix B).

1. ``length_gate``: the edited text is within a tolerance (default 10%, fixed before
   generation) of the original's length, in characters after collapsing whitespace.
2. ``epistemic_marker_gate``: a *control* edit may not add or remove an epistemic marker from a
   fixed list (hedges, intensifiers, quantifiers and "as is well known"-type asides). §4.2 is
   why this is a program and not a prompt instruction: a prompt states an intention, a filter
   enforces a property.
3. ``verifier_gate``: the verifier (a different model family) must return facts identical,
   anchor-free on both sides, register comparable and ``slot_changed`` equal to the requested
   slot; control edits additionally need ``scope_relation == "same"``.

Each gate returns a list of rejection reasons (empty when it passes).
"""

from __future__ import annotations

import re
from collections import Counter

from judgeaudit.probes.taxonomy import SLOT_BY_NAME
from judgeaudit.probes.templates import VerifierReport

DEFAULT_LENGTH_TOLERANCE = 0.10

# Rejection reasons, in the order the pipeline can produce them.
GENERATOR_ERROR = "generator_error"
GENERATOR_UNPARSEABLE = "generator_unparseable"
UNCHANGED = "unchanged"
LENGTH = "length_out_of_tolerance"
EPISTEMIC_MARKER = "epistemic_marker_change"
VERIFIER_ERROR = "verifier_error"
VERIFIER_UNPARSEABLE = "verifier_unparseable"
FACTS_DIFFER = "facts_not_identical"
ANCHOR = "anchor_introduced"
REGISTER = "register_not_comparable"
WRONG_SLOT = "wrong_slot"
SCOPE_CHANGED = "control_scope_not_same"

REASONS: tuple[str, ...] = (GENERATOR_ERROR, GENERATOR_UNPARSEABLE, UNCHANGED, LENGTH, EPISTEMIC_MARKER,
                            VERIFIER_ERROR, VERIFIER_UNPARSEABLE, FACTS_DIFFER, ANCHOR, REGISTER,
                            WRONG_SLOT, SCOPE_CHANGED)

#: The fixed epistemic-marker list, by kind. Frozen: tests/probes/test_gates.py pins it.
EPISTEMIC_MARKERS: dict[str, tuple[str, ...]] = {
    "hedge": (
        "may", "might", "could", "possibly", "perhaps", "likely", "unlikely", "probably",
        "potentially", "presumably", "apparently", "seemingly", "suggest", "suggests", "suggested",
        "appear to", "appears to", "seem to", "seems to", "tend to", "tends to", "in some cases",
        "to some extent", "somewhat", "partially", "partly", "preliminary", "tentatively",
        "arguably", "approximately", "roughly",
    ),
    "intensifier": (
        "substantially", "significantly", "markedly", "consistently", "strongly", "dramatically",
        "clearly", "highly", "greatly", "considerably", "very", "extremely", "remarkably",
        "robustly", "definitively", "undoubtedly", "certainly", "decisively", "profoundly",
        "vastly", "especially", "particularly", "strikingly", "unequivocally", "conclusively",
        "firmly", "truly", "far more", "much more",
    ),
    "quantifier": (
        "all", "every", "each", "some", "most", "many", "few", "several", "always", "never",
        "often", "usually", "rarely", "sometimes", "generally", "typically", "commonly",
        "frequently", "occasionally", "universally", "invariably", "none", "majority",
        "minority", "numerous", "across the board",
    ),
    "aside": (
        "as is well known", "as is widely known", "as is often observed", "as is commonly observed",
        "as is widely recognised", "as is widely recognized", "as expected", "as is expected",
        "it is well known", "it is well established", "well established", "well-established",
        "in practice", "of course", "naturally", "indeed", "notably", "importantly", "in fact",
        "needless to say", "obviously", "evidently", "as everyone knows", "as one would expect",
        "unsurprisingly", "famously",
    ),
}

_MARKER_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (kind, m, re.compile(r"(?<![\w-])" + re.escape(m).replace(r"\ ", r"\s+") + r"(?![\w-])"))
    for kind, markers in EPISTEMIC_MARKERS.items() for m in markers
)

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")


def _normalise_for_markers(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(_DASHES).replace("\u00a0", " ")).lower()


def marker_counts(text: str) -> Counter[tuple[str, str]]:
    """Occurrences of each ``(kind, marker)`` of ``EPISTEMIC_MARKERS`` in a text (case-insensitive).

    Each listed phrase is counted where it occurs, independently of the others; dashes and
    non-breaking spaces are normalised first, and matches respect word boundaries.
    """
    norm = _normalise_for_markers(text)
    out: Counter[tuple[str, str]] = Counter()
    for kind, marker, pat in _MARKER_PATTERNS:
        n = len(pat.findall(norm))
        if n:
            out[(kind, marker)] = n
    return out


def marker_changes(original: str, edited: str) -> dict[str, list[str]]:
    """Markers the edit added or removed: ``{"added": [...], "removed": [...]}`` as ``kind:marker``."""
    a, b = marker_counts(original), marker_counts(edited)
    added = sorted(f"{k}:{m}" for (k, m) in b if b[(k, m)] > a.get((k, m), 0))
    removed = sorted(f"{k}:{m}" for (k, m) in a if a[(k, m)] > b.get((k, m), 0))
    return {"added": added, "removed": removed}


def length_ratio(original: str, edited: str) -> float:
    """len(edited) / len(original) in characters, whitespace runs collapsed to one space."""
    a = len(" ".join(original.split()))
    b = len(" ".join(edited.split()))
    return b / a if a else float("inf")


def length_gate(original: str, edited: str, tolerance: float = DEFAULT_LENGTH_TOLERANCE) -> list[str]:
    """Reject an edit whose length differs from the original's by more than ``tolerance``."""
    r = length_ratio(original, edited)
    return [LENGTH] if abs(r - 1.0) > tolerance + 1e-12 else []


def epistemic_marker_gate(original: str, edited: str, slot: str) -> list[str]:
    """Reject a control edit that adds or removes any listed epistemic marker.

    Construct edits pass untouched: changing a hedge, intensifier or quantifier is what several
    of them are for (the verifier checks they changed the requested slot only).
    """
    if SLOT_BY_NAME[slot].is_construct:
        return []
    ch = marker_changes(original, edited)
    return [EPISTEMIC_MARKER] if (ch["added"] or ch["removed"]) else []


def verifier_gate(report: VerifierReport, slot: str) -> list[str]:
    """Every Appendix B condition the verifier's report fails for the requested ``slot``."""
    reasons = []
    if not report.facts_identical:
        reasons.append(FACTS_DIFFER)
    if not report.anchor_free_both:
        reasons.append(ANCHOR)
    if not report.register_comparable:
        reasons.append(REGISTER)
    if report.slot_changed != slot:
        reasons.append(WRONG_SLOT)
    if not SLOT_BY_NAME[slot].is_construct and report.scope_relation != "same":
        reasons.append(SCOPE_CHANGED)
    return reasons
