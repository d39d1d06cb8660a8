"""Quality control of generated presentation variants (conditional-accuracy-profiles.txt App. A.6,
Table 12 "label-preservation checked").

Two checks decide whether a polished or padded variant may stand in for its original:

* **length** (App. A.6 (iii)): a polished text within ±20% of the original's length; a padded text
  within ``factor`` ± 15% of it (the paper's [1.7×, 2.3×] band at the testbed's 2×; [1.275×,
  1.725×] at JudgeBench's 1.5×). Length is the character count of the stripped text.
* **label preservation**: the content that decides which response is correct must survive the
  rewrite unchanged. The checkable rule used here: (1) the final answer extracted from the
  original (``\\boxed{…}``, "the answer is …", a trailing run like ``CCCCC``) is extracted unchanged
  from the variant; (2) the set of numbers stated is the same (a rewrite adds no number and drops
  none); (3) an ``anchor`` (e.g. the source's canonical answer) present in the original is still
  present. A variant failing a check is rejected with a one-line reason; the caller regenerates.
"""

from __future__ import annotations

import re

#: App. A.6: polished variants within ±20% of the original length.
POLISH_BAND = (0.8, 1.2)
#: Padded variants within factor × (1 ± 0.15): [1.7, 2.3] at 2×.
PAD_TOLERANCE = 0.15

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER_IS = re.compile(r"answer\s+is\s*:?\s*\(?\**([^\n.,;!?()*]*)\**\)?\s*(?:[.,;!?\n]|$)", re.I)
_RUN = re.compile(r"\b([A-J])\1{4,}\b")
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?![\w])")


def pad_band(factor: float) -> tuple[float, float]:
    """The accepted length-ratio band of a padded variant at target ``factor``."""
    return factor * (1 - PAD_TOLERANCE), factor * (1 + PAD_TOLERANCE)


def length_ratio(original: str, variant: str) -> float:
    return len(variant.strip()) / max(1, len(original.strip()))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[*_`$]", "", text)).strip().strip(".").strip().lower()


def final_answer(text: str) -> str | None:
    """The stated final answer of a response, or None when it states none in a recognised form:
    the last ``\\boxed{…}``, else the last run of one repeated letter A–J (MMLU-Pro style
    "CCCCC"), else the last "the answer is …" clause."""
    for pattern in (_BOXED, _RUN):
        found = pattern.findall(text)
        if found:
            return _norm(found[-1])
    found = _ANSWER_IS.findall(text)
    return _norm(found[-1]) if found and _norm(found[-1]) else None


def numbers(text: str) -> frozenset[str]:
    """The numbers a text states (thousands separators dropped)."""
    return frozenset(m.replace(",", "").replace("−", "-").rstrip(".") for m in _NUMBER.findall(text))


def label_problem(original: str, variant: str, anchor: str | None = None) -> str | None:
    """Why ``variant`` may no longer carry ``original``'s label, or None when it passes the rule."""
    fa = final_answer(original)
    if fa is not None:
        fv = final_answer(variant)
        if fv != fa:
            return f"final answer changed: {fa!r} -> {fv!r}"
    no, nv = numbers(original), numbers(variant)
    if no != nv:
        parts = []
        if no - nv:
            parts.append("dropped " + ", ".join(sorted(no - nv)))
        if nv - no:
            parts.append("added " + ", ".join(sorted(nv - no)))
        return "numbers changed: " + "; ".join(parts)
    if anchor and _norm(anchor) and _norm(anchor) in _norm(original) and _norm(anchor) not in _norm(variant):
        return f"answer {anchor!r} no longer stated"
    return None


def variant_problem(kind: str, original: str, variant: str, *, factor: float = 2.0,
                    anchor: str | None = None) -> str | None:
    """The first QC failure of a ``kind`` ('polished' or 'padded') variant, or None when it passes."""
    ratio = length_ratio(original, variant)
    lo, hi = POLISH_BAND if kind == "polished" else pad_band(factor)
    if not lo <= ratio <= hi:
        return f"length ratio {ratio:.2f} outside [{lo:.2f}, {hi:.2f}]"
    return label_problem(original, variant, anchor)
