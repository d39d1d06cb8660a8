"""Checks on the bundled overreach probe set (issue 3, deliverable 3; construct-validity.txt §4.1, App. B).

The file is loaded with plain ``json`` so these tests check the data itself, independently of the
package's readers. Each check collects every violation and reports them all, so a bad edit is named
by its ``probe_id``.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from importlib.resources import files

import pytest

from judgeaudit.probes.taxonomy import (
    CONSTRUCT_SLOTS,
    CONTROL_SLOTS,
    SLOTS,
    axis_of,
    intended_direction,
)

CRITERION = "Overreach: does the claim assert more than the evidence licenses?"
DOMAINS = ("geoscience", "clinical_medicine", "machine_learning", "economics")
FIELDS = {
    "probe_id", "base_id", "group", "domain", "criterion", "evidence",
    "original", "edited", "slot", "intended_direction",
}

# Epistemic markers, grouped by the operator they carry. Matched as whole words, case-insensitive.
HEDGES = (
    "may", "might", "could", "suggest", "suggests", "suggested", "likely", "possibly", "probably",
    "appear", "appears", "appeared", "seem", "seems", "seemed", "perhaps", "potentially",
    "plausibly", "apparently", "presumably", "tentatively",
)
INTENSIFIERS = (
    "clearly", "definitely", "certainly", "strongly", "dramatically", "substantially", "markedly",
    "sharply", "greatly", "considerably", "consistently", "decisively", "profoundly", "robustly",
    "firmly", "unequivocally", "undoubtedly", "conclusively", "significantly", "very", "highly",
    "vastly", "massively", "tightly", "steeply", "indeed", "well known", "well established",
    "of course", "it is known", "without doubt",
)
QUANTIFIERS = (
    "all", "every", "always", "never", "most", "mostly", "some", "many", "several", "few",
    "often", "usually", "generally", "any", "none", "each", "typically", "universally",
    "invariably", "sometimes", "frequently", "occasionally", "rarely", "majority", "everywhere",
)
MARKERS = HEDGES + INTENSIFIERS + QUANTIFIERS
_PATTERNS = {m: re.compile(r"\b" + re.escape(m).replace(r"\ ", r"\s+") + r"\b", re.I) for m in MARKERS}
_SENTENCE_BREAK = re.compile(r"[.!?]\s+(?=[A-Z])")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z]+\b")


def _load() -> list[dict]:
    path = files("judgeaudit.probes") / "data" / "bundled.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


ROWS = _load()


def _counts(text: str, markers: tuple[str, ...]) -> Counter:
    return Counter({m: len(_PATTERNS[m].findall(text)) for m in markers})


# Inflections of one hedge count as one operator when judging what an edit added or removed
# ("appear" -> "appears" after a change of grammatical number is not a hedge edit).
_FAMILY = {"suggests": "suggest", "suggested": "suggest", "appears": "appear", "appeared": "appear",
           "seems": "seem", "seemed": "seem", "mostly": "most"}


def _family_counts(text: str, markers: tuple[str, ...]) -> Counter:
    out: Counter = Counter()
    for m, n in _counts(text, markers).items():
        out[_FAMILY.get(m, m)] += n
    return out


def _diff(row: dict, markers: tuple[str, ...]) -> tuple[int, int]:
    """(operators added, operators removed) by the edit, counted occurrence by occurrence."""
    a, b = _family_counts(row["original"], markers), _family_counts(row["edited"], markers)
    keys = set(a) | set(b)
    added = sum(max(b[m] - a[m], 0) for m in keys)
    removed = sum(max(a[m] - b[m], 0) for m in keys)
    return added, removed


def _report(bad: list[str]) -> None:
    assert not bad, f"{len(bad)} violation(s):\n" + "\n".join(bad[:40])


def test_counts_and_fields():
    assert len(ROWS) == 576
    for r in ROWS:
        assert set(r) == FIELDS, r.get("probe_id")
        assert r["criterion"] == CRITERION
        assert r["domain"] in DOMAINS
        assert r["probe_id"] == f"{r['base_id']}-{r['slot']}"
    assert len({r["probe_id"] for r in ROWS}) == 576
    bases = {r["base_id"]: r["domain"] for r in ROWS}
    assert len(bases) == 48
    assert Counter(bases.values()) == {d: 12 for d in DOMAINS}


def test_groups_two_bases_each_six_per_domain():
    group_bases: dict[str, set[str]] = defaultdict(set)
    group_domain: dict[str, set[str]] = defaultdict(set)
    group_evidence: dict[str, set[str]] = defaultdict(set)
    base_group: dict[str, set[str]] = defaultdict(set)
    for r in ROWS:
        group_bases[r["group"]].add(r["base_id"])
        group_domain[r["group"]].add(r["domain"])
        group_evidence[r["group"]].add(r["evidence"])
        base_group[r["base_id"]].add(r["group"])
    assert all(len(g) == 1 for g in base_group.values())
    assert all(len(b) == 2 for b in group_bases.values())
    assert all(len(d) == 1 for d in group_domain.values())
    assert all(len(e) == 1 for e in group_evidence.values()), "one evidence text per document"
    per_domain = Counter(next(iter(d)) for d in group_domain.values())
    assert per_domain == {d: 6 for d in DOMAINS}
    assert len({next(iter(e)) for e in group_evidence.values()}) == 24


def test_every_base_has_all_slots_once_and_one_original():
    by_base: dict[str, list[dict]] = defaultdict(list)
    for r in ROWS:
        by_base[r["base_id"]].append(r)
    names = sorted(s.name for s in SLOTS)
    for base, rows in by_base.items():
        assert sorted(r["slot"] for r in rows) == names, base
        assert len({r["original"] for r in rows}) == 1, base
        assert len({r["evidence"] for r in rows}) == 1, base
    assert len({rows[0]["original"] for rows in by_base.values()}) == 48


def test_directions_match_taxonomy():
    for r in ROWS:
        assert r["intended_direction"] == intended_direction(r["slot"]), r["probe_id"]
        assert r["intended_direction"] == ("edited" if r["slot"] in CONSTRUCT_SLOTS else "neither")
    assert Counter(r["intended_direction"] for r in ROWS) == {"edited": 48 * 7, "neither": 48 * 5}


def test_texts_well_formed():
    bad = []
    for r in ROWS:
        for field in ("original", "edited"):
            t = r[field]
            if "\n" in t or not t.endswith(".") or _SENTENCE_BREAK.search(t) or t != t.strip():
                bad.append(f"{r['probe_id']}: {field} is not one sentence: {t!r}")
        if r["edited"] == r["original"]:
            bad.append(f"{r['probe_id']}: edit is identical to the original")
        n_sent = len(_SENTENCE_BREAK.split(r["evidence"].strip()))
        if not 2 <= n_sent <= 4:
            bad.append(f"{r['probe_id']}: evidence has {n_sent} sentences")
    _report(bad)


@pytest.mark.parametrize("tolerance,slots", [(0.20, CONSTRUCT_SLOTS), (0.15, CONTROL_SLOTS)])
def test_length_within_tolerance(tolerance, slots):
    bad = []
    for r in ROWS:
        if r["slot"] not in slots:
            continue
        rel = len(r["edited"]) / len(r["original"]) - 1
        if abs(rel) > tolerance:
            bad.append(f"{r['probe_id']}: length change {rel:+.1%}")
    _report(bad)


def test_originals_are_hedged_and_unintensified():
    bad = []
    for o in sorted({r["original"] for r in ROWS}):
        if sum(_counts(o, HEDGES).values()) < 1:
            bad.append(f"no hedge: {o}")
        if sum(_counts(o, INTENSIFIERS).values()) > 0:
            bad.append(f"intensifier in a licensed original: {o}")
    _report(bad)


def test_controls_keep_every_epistemic_marker():
    bad = []
    for r in ROWS:
        if r["slot"] in CONTROL_SLOTS:
            a, b = _counts(r["original"], MARKERS), _counts(r["edited"], MARKERS)
            if a != b:
                delta = {m: b[m] - a[m] for m in MARKERS if a[m] != b[m]}
                bad.append(f"{r['probe_id']}: markers changed {delta}")
    _report(bad)


def test_strength_edits_move_their_operator_only():
    bad = []
    for r in ROWS:
        slot = r["slot"]
        h_add, h_rem = _diff(r, HEDGES)
        i_add, i_rem = _diff(r, INTENSIFIERS)
        q_add, q_rem = _diff(r, QUANTIFIERS)
        if axis_of(slot) != "strength":
            continue
        if q_add or q_rem:
            bad.append(f"{r['probe_id']}: a strength edit changed a quantifier")
        if slot == "hedging_removal" and (h_rem < 1 or h_add or i_add):
            bad.append(f"{r['probe_id']}: hedging_removal must remove a hedge and add nothing")
        if slot == "intensifier_addition" and (i_add < 1 or h_rem or h_add):
            bad.append(f"{r['probe_id']}: intensifier_addition must add an intensifier and keep hedges")
        if slot == "condition_removal" and (h_add or h_rem or i_add or i_rem):
            bad.append(f"{r['probe_id']}: condition_removal changed a hedge or intensifier")
    _report(bad)


def test_scope_edits_never_raise_commitment():
    bad = []
    for r in ROWS:
        if axis_of(r["slot"]) != "scope":
            continue
        h_add, h_rem = _diff(r, HEDGES)
        i_add, i_rem = _diff(r, INTENSIFIERS)
        q_add, q_rem = _diff(r, QUANTIFIERS)
        if h_rem or h_add or i_add or i_rem:
            bad.append(f"{r['probe_id']}: a scope edit changed a hedge or intensifier")
        if r["slot"] == "quantifier_strengthening" and not (q_add or q_rem):
            bad.append(f"{r['probe_id']}: quantifier_strengthening left the quantifiers unchanged")
        if r["slot"] in ("domain_extension", "population_widening") and q_rem:
            bad.append(f"{r['probe_id']}: {r['slot']} removed a quantifier")
    _report(bad)


def test_no_new_anchors():
    """Edits introduce no number and no capitalised name absent from the original."""
    bad = []
    for r in ROWS:
        o, e = r["original"], r["edited"]
        new_nums = Counter(_NUMBER.findall(e)) - Counter(_NUMBER.findall(o))
        if new_nums:
            bad.append(f"{r['probe_id']}: new number(s) {dict(new_nums)}")
        o_words = set(re.findall(r"[A-Za-z]+", o))
        new_names = {w for w in _CAPITALISED.findall(e) if w not in o_words and w.lower() not in o.lower()}
        if new_names:
            bad.append(f"{r['probe_id']}: new name(s) {sorted(new_names)}")
    _report(bad)


def test_claims_distinct_within_and_across_bases():
    edited = Counter(r["edited"] for r in ROWS)
    dup = [t for t, n in edited.items() if n > 1]
    assert not dup, dup[:5]
