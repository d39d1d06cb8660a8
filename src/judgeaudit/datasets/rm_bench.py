"""RM-Bench adapter (THU-KEG/RM-Bench): chosen/rejected responses that differ by a subtle
content change, each written in three styles (0 concise, 1 detailed plain text, 2 detailed
markdown).

A pair is (chosen in style i, rejected in style j). ``load_pairs`` emits the three same-style
pairs by default (the plain/polished variants of one base item, for Style Robustness), and on
request the length pair (chosen concise vs. rejected detailed: the weaker response is the
longer one) or the full 3x3 matrix. Which side holds the chosen response is fixed per base item
by a stable hash (so a constant-'A' judge is not rewarded); ``label`` names that side. Both
responses come from one generator, labels follow the planted content change: the only generative
condition recorded (``condition_a``/``condition_b``) is each response's style, which says nothing of
the label (every style is chosen as often as it is rejected). The pair role is the label itself and
is never recorded as a condition.

Files are recognised by their schema, not their names; domains come from the file name (the
per-domain files carry no ``domain`` field: chat, code, math, safety-refuse, safety-response in
the repository; math is not in the shared copy) or, in a combined file, from each item's
``domain`` field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgeaudit.datasets._common import (
    UNAVAILABLE,
    CoverageCell,
    files_under,
    finish_pairs,
    hash_side,
    layout_error,
    read_json,
    require,
)
from judgeaudit.errors import InputError

SOURCE_SET = "rm_bench"
STYLES = ("concise", "detailed", "markdown")
EXTRA_COLUMNS = ("domain", "base_id", "style_chosen", "style_rejected", "style_level", "variant",
                 "error_key")

#: Style variants are native: no generated augmentation is needed or admitted.
AUGMENTATION_ADMISSIBLE = False

COVERAGE: dict[str, CoverageCell] = {
    "C1": CoverageCell("approx", "chat domain (inserted factual error, error_key); PA, concise pairs",
                       ("chat",), ("L0",)),
    "C2": UNAVAILABLE,
    "C3": UNAVAILABLE,
    "C4": UNAVAILABLE,
    "C5": CoverageCell("direct", "same item, concise pair (x1) vs. markdown pair (x2); BC (PA over orders)",
                       variants=("L0", "L2")),
    "C6": CoverageCell("approx", "concise pair (x1) vs. chosen-concise/rejected-detailed pair (x2); "
                       "BC (PA over orders); needs pairs='length' or 'all'",
                       variants=("L0", "length")),
    "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC"),
    "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
}

PairSelection = Literal["diagonal", "length", "all"]


def _combos(selection: PairSelection) -> list[tuple[int, int]]:
    if selection == "diagonal":
        return [(0, 0), (1, 1), (2, 2)]
    if selection == "length":
        return [(0, 0), (1, 1), (2, 2), (0, 1)]
    if selection == "all":
        return [(i, j) for i in range(3) for j in range(3)]
    raise InputError(f"pairs must be 'diagonal', 'length' or 'all', got {selection!r}", field="pairs")


def _variant(i: int, j: int) -> str:
    if i == j:
        return f"L{i}"
    return "length" if (i, j) == (0, 1) else f"c{i}r{j}"


def chosen_side(base_id: str) -> str:
    """The side ('A' or 'B') holding the chosen response for every pair of ``base_id``."""
    return hash_side(base_id)


def _is_item(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("chosen"), list) and isinstance(obj.get("rejected"), list)


def _read_domains(root: Path) -> tuple[dict[str, tuple[Path, list[dict[str, Any]]]], dict[str, int]]:
    """domain -> (file, items) for every RM-Bench file found, and the items a combined file held
    for a domain that has a file of its own (skipped, counted per file).

    A file is recognised by its schema (a JSON array of objects with ``chosen`` and ``rejected``
    lists), whatever its name. Its domain is the items' ``domain`` field when they carry one (a
    combined file such as ``total_dataset.json``), else the file name without ``_filtered``.
    """
    if not root.exists():
        raise InputError("RM-Bench folder not found", path=root)
    files = files_under(root / "data" if (root / "data").is_dir() else root, (".json",))
    own: dict[str, tuple[Path, list[dict[str, Any]]]] = {}
    combined: list[tuple[Path, list[dict[str, Any]]]] = []
    for f in files:
        items = read_json(f)
        if not isinstance(items, list) or not items or not all(_is_item(o) for o in items):
            continue
        if any("domain" in o for o in items):
            combined.append((f, items))
        else:
            name = f.stem.removesuffix("_filtered")
            if name in own:
                raise InputError(f"two RM-Bench files for domain {name!r}: {own[name][0]}", path=f)
            own[name] = (f, items)
    skipped: dict[str, int] = {}
    found = dict(own)
    for f, items in combined:
        by_domain: dict[str, list[dict[str, Any]]] = {}
        for k, o in enumerate(items):
            dom = o.get("domain")
            if not isinstance(dom, str) or not dom:
                raise InputError(f"item {k}: domain must be a non-empty string", path=f, field="domain")
            by_domain.setdefault(dom, []).append(o)
        for dom, its in by_domain.items():
            if dom in own:
                skipped[str(f)] = skipped.get(str(f), 0) + len(its)
            elif dom in found:
                raise InputError(f"two RM-Bench files for domain {dom!r}: {found[dom][0]}", path=f)
            else:
                found[dom] = (f, its)
    return found, skipped


def domains_found(root: str | Path) -> list[str]:
    """The RM-Bench domains present at ``root`` (sorted)."""
    return sorted(_read_domains(Path(root))[0])


def load_pairs(root: str | Path, *, pairs: PairSelection = "diagonal",
               domains: list[str] | None = None) -> pd.DataFrame:
    """Load RM-Bench as a pairwise table (``PAIRWISE_COLUMNS`` + ``EXTRA_COLUMNS``).

    Args:
        root: the repository root, its ``data/`` folder, or one file: every file of RM-Bench's
            schema found is read (per-domain files such as ``chat_filtered.json``, and a combined
            file's domains that have no file of their own; the items a combined file repeats are
            counted in ``df.attrs['rm_bench_skipped']``).
        pairs: ``diagonal`` (3 same-style pairs per item), ``length`` (+ chosen concise vs.
            rejected detailed), or ``all`` (the 3x3 style matrix).
        domains: restrict to these domains (default: every domain found).
    """
    root = Path(root)
    combos = _combos(pairs)
    found, skipped = _read_domains(root)
    if not found:
        raise layout_error("no RM-Bench file (a JSON array of items with chosen and rejected lists) "
                           "under this path", root)
    if domains:
        missing = [d for d in domains if d not in found]
        if missing:
            raise InputError(f"RM-Bench domain(s) not found: {', '.join(missing)}; found: {', '.join(sorted(found))}",
                             path=root, field="domains")
    rows: list[dict[str, Any]] = []
    for domain in domains or sorted(found):
        path, items = found[domain]
        for k, obj in enumerate(items):
            chosen = require(obj, "chosen", path, None)
            rejected = require(obj, "rejected", path, None)
            if not (isinstance(chosen, list) and isinstance(rejected, list) and len(chosen) == 3
                    and len(rejected) == 3):
                raise InputError(f"item {k}: chosen and rejected must be lists of 3 styles", path=path,
                                 field="chosen")
            base = f"rm_bench/{domain}/{obj.get('id', k)}"
            side = chosen_side(base)
            for i, j in combos:
                c, r = str(chosen[i]), str(rejected[j])
                a, b = (c, r) if side == "A" else (r, c)
                # the generative condition of a response is its style; which side is chosen is the
                # label, never part of a condition (a predictor of the condition would read it)
                ca, cb = (STYLES[i], STYLES[j]) if side == "A" else (STYLES[j], STYLES[i])
                rows.append({
                    "pair_id": f"{base}/{_variant(i, j)}",
                    "prompt": str(require(obj, "prompt", path, None)),
                    "response_a": a, "response_b": b, "label": side,
                    "group": str(obj["prompt"]), "source_set": SOURCE_SET, "subset": domain,
                    "condition_a": ca, "condition_b": cb,
                    "meta": {"id": obj.get("id"), "source_subset": obj.get("subset")},
                    "domain": domain, "base_id": base,
                    "style_chosen": STYLES[i], "style_rejected": STYLES[j],
                    "style_level": i if i == j else None, "variant": _variant(i, j),
                    "error_key": obj.get("error_key"),
                })
    df = finish_pairs(rows, EXTRA_COLUMNS, root)
    if skipped:
        df.attrs["rm_bench_skipped"] = skipped
    return df
