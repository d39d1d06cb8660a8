"""LLMBar adapter (princeton-nlp/LLMBar): the Natural and Adversarial instruction-following
sets, the repository's Processed sets (MT-Bench, LLMEval², FairEval; human majority labels), any
other set in LLMBar's format, and the evaluators' published outputs.

Sets are discovered, not listed: every folder holding a ``dataset.json`` under ``Dataset/`` (any
depth), or a set folder given directly; the subset name comes from the path. The published
outputs are every ``<set>/evaluators/<Evaluator>/<Mode>/result.json`` found.

Quirks handled here:

* ``label`` is 1 or 2 (which output is better; no ties) and becomes ``'A'`` / ``'B'``
  (``output_1`` is ``response_a``).
* In ``result.json`` the final verdict record is ``results[-1]`` (mode ``Swap`` adds a second,
  synthesised round when the first two orders disagree). ``"swap = False"`` showed output_1
  first, ``"swap = True"`` output_2 first, and **both** ``winner`` values are already mapped back
  to the original numbering; no flip is applied here. A null winner is a parse failure.
* Each set becomes its own benchmark (``source_set``): ``llmbar`` (Natural + Adversarial/*),
  ``llmbar_<name>`` for every other set (``llmbar_mtbench`` for Processed/MT-Bench,
  ``llmbar_llmeval2`` for Processed/LLMEval2 or LLMEval^2, ``llmbar_faireval``, …).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import (
    UNAVAILABLE,
    CoverageCell,
    family_of,
    finish_pairs,
    layout_error,
    read_json_array,
    require,
    two_order_frame,
)
from judgeaudit.errors import InputError

EXTRA_COLUMNS = ("label_source", "human_labels", "base_id")

#: LLMBar's own top-level folders under ``Dataset/`` and what they hold: the LLMBar sets carry the
#: authors' gold labels and form one benchmark (``llmbar``); every set under ``Processed/`` is a
#: benchmark of its own with human majority labels (``llmbar_<name>``). A set in any other folder
#: (``CaseStudy/…``, or a folder of the user's own) is a benchmark of its own with the label of its
#: ``dataset.json`` (``dataset_label``).
GROUPS: dict[str, tuple[str | None, str]] = {
    "LLMBar": ("llmbar", "author_gold"),
    "Processed": (None, "human_majority"),
}
#: The adversarial-surface subsets of the LLMBar paper (Table 2's C5 operator). A subset found
#: under ``Dataset/LLMBar/Adversarial/`` is adversarial whatever its name (:func:`coverage`).
ADVERSARIAL = ("Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut", "Adversarial/Manual")
_ADVERSARIAL_FOLDER = "Adversarial"
#: The order the paper's tables list its sets in; sets are loaded in this order and any other set
#: found follows, sorted by path (the order only fixes row order, so results do not depend on how
#: the file system lists folders; it plays no part in finding sets).
TABLE_ORDER = ("Natural", *ADVERSARIAL, "MT-Bench", "LLMEval2")

#: Labels are author gold labels on LLMBar, not objective task correctness, and pairs do not share
#: a source model: augmentation is not admissible (§3.2); C5 is measured by the native subsets.
AUGMENTATION_ADMISSIBLE = False


def _llmbar_cells(adversarial: tuple[str, ...]) -> dict[str, CoverageCell]:
    """Coverage of the ``llmbar`` benchmark (Table 2 column "LLMBar", operators from Appendix D)."""
    return {
        "C1": UNAVAILABLE, "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
        "C5": CoverageCell("direct", "Natural vs. adversarial-surface subsets (GPTInst, GPTOut, Manual, "
                           "Neighbor): BC on adversarial-surface items, Natural BC beside", adversarial),
        "C6": UNAVAILABLE,
        "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC"),
        "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
    }


def _other_cells(labels: str) -> dict[str, CoverageCell]:
    """Coverage of every other LLMBar-format set (the Processed human sets, case studies, a
    user's own): C7 and C8, labelled by ``labels``."""
    return {
        "C1": UNAVAILABLE, "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
        "C5": UNAVAILABLE, "C6": UNAVAILABLE,
        "C7": CoverageCell("direct", f"A/B and B/A orderings of every pair; BC ({labels})"),
        "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
    }


_OTHER_CELLS = _other_cells("human majority labels")
_OWN_LABEL_CELLS = _other_cells("the set's own labels")


class _Coverage(Mapping[str, dict[str, CoverageCell]]):
    """Coverage declaration per ``source_set``: ``llmbar`` and any discovered ``llmbar_<name>``
    set (sets are discovered, so the keys are not a fixed list)."""

    def __init__(self, cells: dict[str, dict[str, CoverageCell]]):
        self._cells = cells

    def __getitem__(self, source_set: str) -> dict[str, CoverageCell]:
        if source_set in self._cells:
            return self._cells[source_set]
        if source_set.startswith("llmbar_"):
            return _OTHER_CELLS
        raise KeyError(source_set)

    def __iter__(self) -> Iterator[str]:
        return iter(self._cells)

    def __len__(self) -> int:
        return len(self._cells)


#: Coverage declaration per source_set (Table 2 column "LLMBar", operators from Appendix D); any
#: ``llmbar_<name>`` key gives the Processed sets' declaration (C7, C8; :func:`coverage` gives a
#: loaded table's, whose sets outside ``Processed/`` are not human-labelled).
COVERAGE: Mapping[str, dict[str, CoverageCell]] = _Coverage({
    "llmbar": _llmbar_cells(ADVERSARIAL),
    "llmbar_mtbench": _OTHER_CELLS,
    "llmbar_llmeval2": _OTHER_CELLS,
})


def coverage(pairs: pd.DataFrame) -> dict[str, dict[str, CoverageCell]]:
    """Coverage per source_set of a loaded table; C5 of ``llmbar`` covers the paper's adversarial
    subsets and every other adversarial subset found (a folder under
    ``Dataset/LLMBar/Adversarial/``), so a new one is neither dropped from C5 nor counted as a
    natural reference item."""
    out = {}
    for s in dict.fromkeys(pairs["source_set"]):
        if s == "llmbar":
            subs = pairs.loc[pairs["source_set"] == s, "subset"].astype(str)
            new = sorted({x for x in subs if x.split("/")[0] == _ADVERSARIAL_FOLDER} - set(ADVERSARIAL))
            out[s] = _llmbar_cells(ADVERSARIAL + tuple(new)) if new else COVERAGE[s]
        elif (pairs.loc[pairs["source_set"] == s, "label_source"] == "human_majority").all():
            out[s] = COVERAGE[s]
        else:
            out[s] = _OWN_LABEL_CELLS
    return out


_LABEL = {1: "A", 2: "B", "1": "A", "2": "B"}
DATASET_FILE = "dataset.json"
_ANCHOR = "Dataset"


@dataclass(frozen=True)
class Subset:
    """One LLMBar-format set found on disk.

    Attributes:
        name: the subset name, derived from its path: the folder relative to ``Dataset/`` without
            the group folder (``Natural``, ``Adversarial/Neighbor``, ``FairEval``), the whole
            relative path outside the known groups (``CaseStudy/Base_9``), the folder's name when it
            lies in no ``Dataset/`` tree.
        rel: the folder relative to ``Dataset/`` (``Processed/FairEval``), or ``name``.
        source_set: ``llmbar`` or ``llmbar_<name in lower case, letters and digits only>``.
        label_source: ``author_gold``, ``human_majority`` or ``dataset_label`` (see ``GROUPS``).
        folder: the folder holding ``dataset.json``.
    """

    name: str
    rel: str
    source_set: str
    label_source: str
    folder: Path


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def _relative_parts(folder: Path, root: Path) -> tuple[str, ...]:
    """The folder's path below the nearest ``Dataset`` folder above it (or a known group folder's
    parent), else below ``root`` (the folder's own name when it is ``root``)."""
    for anc in folder.parents:
        if anc.name == _ANCHOR:
            return folder.relative_to(anc).parts
    for anc in folder.parents:
        if anc.name in GROUPS:
            return folder.relative_to(anc.parent).parts
    if folder == root:
        return (folder.name,)
    return folder.relative_to(root).parts


def _subset_of(folder: Path, root: Path) -> Subset:
    parts = _relative_parts(folder, root)
    rel = "/".join(parts)
    if len(parts) > 1 and parts[0] in GROUPS:
        name = "/".join(parts[1:])
        fixed, label_source = GROUPS[parts[0]]
    else:
        name, fixed, label_source = rel, None, "dataset_label"
    return Subset(name, rel, fixed or f"llmbar_{_slug(name)}", label_source, folder)


def discover(root: str | Path) -> dict[str, Subset]:
    """Every LLMBar-format set at ``root``: ``root`` itself when it holds ``dataset.json``, else
    every folder holding a ``dataset.json`` under ``root/Dataset`` (or under ``root``), at any
    depth (``evaluators/`` folders excluded). Keyed by subset name (the relative path when two
    names collide); ``InputError`` listing what is there when nothing is found."""
    root = Path(os.path.abspath(root))
    if (root / DATASET_FILE).is_file():
        folders = [root]
    else:
        if not root.is_dir():
            raise InputError("LLMBar folder not found", path=root)
        base = root / _ANCHOR if (root / _ANCHOR).is_dir() else root
        folders = sorted({f.parent for f in base.rglob(DATASET_FILE)
                          if f.is_file() and "evaluators" not in f.relative_to(base).parts[:-1]})
    if not folders:
        raise layout_error(f"no LLMBar {DATASET_FILE} under this folder (expected Dataset/<group>/<set>/"
                           f"{DATASET_FILE}, or a set folder holding {DATASET_FILE})", root)
    subs = sorted((_subset_of(f, root) for f in folders),
                  key=lambda x: (TABLE_ORDER.index(x.name) if x.name in TABLE_ORDER else len(TABLE_ORDER), x.rel))
    names = [s.name for s in subs]
    out: dict[str, Subset] = {}
    for s in subs:
        if names.count(s.name) > 1:
            s = Subset(s.rel, s.rel, f"llmbar_{_slug(s.rel)}" if s.source_set != "llmbar" else s.source_set,
                       s.label_source, s.folder)
        out[s.name] = s
    return out


def _selected(root: Path, sets: list[str] | None) -> list[Subset]:
    found = discover(root)
    if sets is None:
        return list(found.values())
    by_rel = {s.rel: s for s in found.values()}
    missing = [s for s in sets if s not in found and s not in by_rel]
    if missing:
        raise InputError(f"LLMBar set(s) not found: {', '.join(missing)}; found: {', '.join(found)}",
                         path=root, field="subset")
    return [found.get(s) or by_rel[s] for s in sets]


def pair_id(subset: str, index: int) -> str:
    """Stable id of the ``index``-th pair (0-based) of an LLMBar ``subset``."""
    return f"llmbar/{subset}/{index}"


def load_pairs(root: str | Path, *, sets: list[str] | None = None) -> pd.DataFrame:
    """Load LLMBar-format sets as a pairwise table.

    Args:
        root: the repository root (the folder holding ``Dataset/``), ``Dataset`` itself, any
            folder below it, or one set's folder holding ``dataset.json`` directly. Every set
            found is loaded (:func:`discover`).
        sets: subset names (``Natural``, ``Adversarial/GPTInst``, ``FairEval``) or paths relative
            to ``Dataset/`` (default: every one found).

    The Processed sets carry human majority labels (the repository keeps no per-annotator
    labels): ``label_source`` says ``human_majority`` there and ``author_gold`` on LLMBar, and
    ``human_labels`` holds the list of labels available per pair.
    """
    root = Path(root)
    rows: list[dict[str, Any]] = []
    for sub in _selected(root, sets):
        path = sub.folder / DATASET_FILE
        human = sub.label_source == "human_majority"
        for i, obj in enumerate(read_json_array(path)):
            if not isinstance(obj, dict):
                raise InputError(f"item {i}: expected an object", path=path)
            label = require(obj, "label", path, None)
            if label not in _LABEL:
                raise InputError(f"item {i}: label must be 1 or 2, got {label!r}", path=path, field="label")
            pid = pair_id(sub.name, i)
            rows.append({
                "pair_id": pid,
                "prompt": str(require(obj, "input", path, None)),
                "response_a": str(require(obj, "output_1", path, None)),
                "response_b": str(require(obj, "output_2", path, None)),
                "label": _LABEL[label],
                "group": str(obj["input"]),
                "source_set": sub.source_set,
                "subset": sub.name,
                "condition_a": None,
                "condition_b": None,
                "meta": {"index": i, "file": f"{sub.rel}/{DATASET_FILE}"},
                "label_source": sub.label_source,
                "human_labels": [_LABEL[label]] if human else None,
                "base_id": pid,
            })
    return finish_pairs(rows, EXTRA_COLUMNS, root)


def result_files(root: str | Path) -> dict[tuple[str, str], Path]:
    """(subset, ``Evaluator/Mode``) -> result.json, for every evaluator output found beside each
    discovered set (``<set>/evaluators/<Evaluator>/<Mode>/result.json``, any evaluator, any mode)."""
    out = {}
    for sub in discover(root).values():
        ev = sub.folder / "evaluators"
        if not ev.is_dir():
            continue
        for f in sorted(ev.rglob("result.json")):
            out[(sub.name, f.parent.relative_to(ev).as_posix())] = f
    return out


def is_llmbar(root: str | Path) -> bool:
    """Whether ``root`` holds LLMBar-format sets (:func:`discover` finds at least one)."""
    try:
        return bool(discover(root))
    except InputError:
        return False


def _winner(side: Any) -> tuple[str | None, str | None, str | None]:
    if not isinstance(side, dict):
        return None, None, "api"
    w = side.get("winner")
    comp = side.get("completion")
    text = comp[0] if isinstance(comp, list) and comp else (comp if isinstance(comp, str) else None)
    if w in _LABEL:
        return _LABEL[w], text, None
    return None, text, "parse"


def load_result(path: str | Path, subset: str, judge_id: str) -> pd.DataFrame:
    """One ``result.json`` as a two-order table (final verdict record ``results[-1]``)."""
    path = Path(path)
    evaluator = judge_id.split("/")[0]
    rows = []
    for i, obj in enumerate(read_json_array(path)):
        res = require(obj, "results", path, None)
        if not isinstance(res, list) or not res:
            raise InputError(f"item {i}: results must be a non-empty list", path=path, field="results")
        final = res[-1]
        if not isinstance(final, dict):
            raise InputError(f"item {i}: the final record results[-1] must be an object with "
                             "'swap = False' / 'swap = True'", path=path, field="results")
        c_ab, r_ab, f_ab = _winner(final.get("swap = False"))
        c_ba, r_ba, f_ba = _winner(final.get("swap = True"))
        rows.append({
            "pair_id": pair_id(subset, i), "judge_id": judge_id, "family": family_of(evaluator),
            "choice_ab": c_ab, "choice_ba": c_ba, "rationale_ab": r_ab, "rationale_ba": r_ba,
            "failure_ab": f_ab, "failure_ba": f_ba, "model": evaluator,
        })
    return two_order_frame(rows)


def published_judges(root: str | Path) -> dict[str, pd.DataFrame]:
    """Every evaluator/mode shipped, as one replay judge (``GPT-4/Vanilla_NoRules``) whose table
    spans all sets it was run on."""
    parts: dict[str, list[pd.DataFrame]] = {}
    for (subset, jid), f in result_files(root).items():
        parts.setdefault(jid, []).append(load_result(f, subset, jid))
    return {jid: pd.concat(frames, ignore_index=True) for jid, frames in sorted(parts.items())}


_FRAC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)")


def published_statistics(path: str | Path) -> dict[str, tuple[int, int]]:
    """The ``k / n`` counts of a ``statistics.json`` (correct_False, correct_True, correct_both,
    equal)."""
    st = json.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for key in ("correct_False", "correct_True", "correct_both", "equal"):
        m = _FRAC.match(str(st.get(key, "")))
        if m:
            out[key] = (int(m[1]), int(m[2]))
    return out


STATISTICS = ("correct_False", "correct_True", "correct_both", "equal")
"""The counts of a ``statistics.json`` that ``llmbar_statistics`` reproduces."""


def llmbar_statistics(table: pd.DataFrame, pairs: pd.DataFrame, *,
                      failures: str = "wrong") -> dict[str, tuple[int, int]]:
    """LLMBar's own per-file statistics from a two-order table: per-order accuracy
    (``correct_False``/``correct_True``), both-correct (``correct_both``) and positional agreement
    (``equal``, the two winners identical), each as ``(k, n)``.

    ``failures="wrong"`` is LLMBar's rule (every item counted; a null winner is wrong, and a pair of
    nulls counts as equal); ``"exclude"`` is CAP's default (conditional-accuracy-profiles.txt
    App. L): items with an unparsed winner in either order are left out of ``n``."""
    if failures not in ("wrong", "exclude"):
        raise InputError(f"failures must be wrong or exclude, got {failures!r}", field="failures")
    df = table.merge(pairs[["pair_id", "label"]], on="pair_id", how="inner")
    if failures == "exclude":
        df = df[df["choice_ab"].notna() & df["choice_ba"].notna()]
    n = len(df)
    ab = df["choice_ab"] == df["label"]
    ba = df["choice_ba"] == df["label"]
    same = (df["choice_ab"] == df["choice_ba"]) | (df["choice_ab"].isna() & df["choice_ba"].isna())
    return {"correct_False": (int(ab.sum()), n), "correct_True": (int(ba.sum()), n),
            "correct_both": (int((ab & ba).sum()), n), "equal": (int(same.sum()), n)}


def _counts(st: Mapping[str, tuple[int, int]]) -> str:
    return ", ".join(f"{st[k][0]}/{st[k][1]}" if k in st else "—" for k in STATISTICS)


def reconcile_statistics(root: str | Path, pairs: pd.DataFrame,
                         judges: Collection[str] | None = None) -> pd.DataFrame:
    """Every shipped ``result.json`` of the loaded subsets (``pairs``; of ``judges`` only, when
    given) beside its folder's published ``statistics.json``: the counts recomputed with unparsed
    winners counted wrong (LLMBar's rule) and excluded (CAP's default), and which view reproduces
    the published counts — so each file reconciles with its published numbers. One row per file;
    a file without ``statistics.json`` has no published counts (``reproduced_by`` ``—``)."""
    rows = []
    loaded = set(pairs["subset"].astype(str))
    for (subset, jid), f in result_files(root).items():
        if subset not in loaded or (judges is not None and jid not in judges):
            continue
        sub = pairs[pairs["subset"].astype(str) == subset]
        t = load_result(f, subset, jid)
        st_file = f.parent / "statistics.json"
        pub = published_statistics(st_file) if st_file.is_file() else {}
        wrong, excl = llmbar_statistics(t, sub, failures="wrong"), llmbar_statistics(t, sub, failures="exclude")
        views = [name for name, st in (("failures wrong", wrong), ("failures excluded", excl))
                 if pub and all(pub.get(k) == st[k] for k in STATISTICS)]
        rows.append({"subset": subset, "judge_id": jid, "items": wrong["equal"][1],
                     "items with an unparsed winner": int((t["choice_ab"].isna() | t["choice_ba"].isna()).sum()),
                     "published": _counts(pub) if pub else "—",
                     "failures wrong (LLMBar's rule)": _counts(wrong),
                     "failures excluded (CAP default)": _counts(excl),
                     "reproduced_by": " and ".join(views) if views else ("none" if pub else "—")})
    return pd.DataFrame(rows, columns=["subset", "judge_id", "items", "items with an unparsed winner", "published",
                                       "failures wrong (LLMBar's rule)", "failures excluded (CAP default)",
                                       "reproduced_by"])
