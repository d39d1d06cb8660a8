"""World sets: corpora read as :class:`~judgeaudit.records.WorldItem` lists, with provenance.

A world set spec uses the table sets' syntax (``NAME:PATH?key=value&…``, parsed by
:func:`judgeaudit.datasets.registry.parse_spec`); the adapters are keyed by the prefix:

* ``halueval:PATH?part=qa[&strategy=one-turn|multi-turn|final]`` — world = knowledge, question,
  reference = the right answer; the right and the hallucinated answer are two judged outputs of
  one group (``meta['variant']`` records which generated hallucination was used).
* ``frank:PATH[?undetermined=exclude|keep]`` — world = article, reference summary, units = the
  summary's sentences with their exact labels where the summary-level annotation determines them.
* ``ifeval:PATH[?responses=FILE&mode=strict|loose&join=text|position]`` — world = the instruction,
  units = its constraints, output = a shipped response joined by prompt text (a prompt without one
  is excluded; ``join=position`` joins it by line), labels by the IFEval checker.
* ``gsm8k:PATH[?conditions=175b_verification,…]`` — world = the problem, output = a worked
  solution, label = correctness by the answer key (the GSM8K checker).
* ``ragtruth:PATH[?split=train|test|all&quality=good|all&task=QA,Summary,Data2txt]`` — RAGTruth's
  ``response.jsonl`` + ``source_info.jsonl``, character-offset spans.
* ``aggrefact:PATH[?doc=…&claim=…&label=…]`` — claim-level sets in the LLM-AggreFact shape.

Every spec also accepts ``name=`` and ``max_rows=N`` (whole groups kept in SHA-1 order of the group
key, as for the table sets). :func:`load_world` returns a frozen :class:`WorldSet` (items and
provenance: the files read, the data folder's ``PROVENANCE.json`` when there is one, the counts
kept and excluded with the reason); :func:`load_world_set` returns the items alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets.registry import COMMON_OPTIONS, parse_spec, trim_groups
from judgeaudit.datasets.world_base import AdapterResult
from judgeaudit.errors import InputError
from judgeaudit.records import WorldItem

PROVENANCE_FILE = "PROVENANCE.json"

@dataclass(frozen=True)
class WorldAdapter:
    """One registered world adapter."""

    name: str
    loader: Callable[..., AdapterResult]
    description: str
    task: str
    label_origin: str


@dataclass(frozen=True)
class WorldSet:
    """A loaded world set: its items (in the adapter's order) and where they came from.

    ``provenance`` holds ``spec``, ``adapter``, ``name``, ``label_origin``, ``files`` (the files
    read), ``provenance_file`` (the data folder's ``PROVENANCE.json``, parsed, or None),
    ``n_items``, ``excluded`` (reason → count of source records left out) and, when ``max_rows``
    trimmed the set, ``trimmed``.
    """

    items: tuple[WorldItem, ...]
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)


# ---- helpers the adapters share -------------------------------------------------------------------


def find_provenance(path: str | Path) -> tuple[Path | None, Any]:
    """The nearest ``PROVENANCE.json`` at ``path`` (a folder, or a file's folder) or in one of its
    two parent folders, and its parsed content; ``(None, None)`` when there is none."""
    p = Path(path)
    start = p if p.is_dir() else p.parent
    for folder in (start, *list(start.parents)[:2]):
        f = folder / PROVENANCE_FILE
        if f.is_file():
            try:
                return f, json.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputError(f"unreadable provenance file ({e})", path=f) from None
    return None, None


# ---- the registry ---------------------------------------------------------------------------------


def _halueval(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_corpora import load_halueval

    return load_halueval(path, **kw)


def _frank(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_corpora import load_frank

    return load_frank(path, **kw)


def _ifeval(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_corpora import load_ifeval

    return load_ifeval(path, **kw)


def _gsm8k(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_corpora import load_gsm8k

    return load_gsm8k(path, **kw)


def _ragtruth(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_generic import load_ragtruth

    return load_ragtruth(path, **kw)


def _aggrefact(path: str, **kw: Any) -> AdapterResult:
    from judgeaudit.datasets.world_generic import load_aggrefact

    return load_aggrefact(path, **kw)


WORLD_ADAPTERS: dict[str, WorldAdapter] = {a.name: a for a in (
    WorldAdapter("halueval", _halueval, "HaluEval QA (or dialogue/summarization): right and hallucinated answer "
                 "of one question as two outputs; world = knowledge", "qa", "provenance (gold vs. generated)"),
    WorldAdapter("frank", _frank, "FRANK summaries at sentence level; world = article", "summarization",
                 "human annotation (sentence labels where the summary-level annotation determines them)"),
    WorldAdapter("ifeval", _ifeval, "IFEval prompts with shipped responses; units = constraints; world = the "
                 "instruction", "instruction", "IFEval checker (strict by default)"),
    WorldAdapter("gsm8k", _gsm8k, "GSM8K example solutions; world = the problem", "math",
                 "GSM8K checker against the answer key"),
    WorldAdapter("ragtruth", _ragtruth, "RAGTruth format (response.jsonl + source_info.jsonl), character spans",
                 "rag", "human annotation (spans)"),
    WorldAdapter("aggrefact", _aggrefact, "claim-level sets in the LLM-AggreFact shape (document, claim, label)",
                 "claim", "human annotation (claim)"),
)}


def _trim(items: list[WorldItem], max_rows: str) -> tuple[list[WorldItem], dict[str, Any] | None]:
    try:
        n_max = int(max_rows)
    except ValueError:
        raise InputError(f"max_rows must be an integer, got {max_rows!r}", field="max_rows") from None
    if n_max < 1:
        raise InputError(f"max_rows must be at least 1, got {n_max}", field="max_rows")
    frame = pd.DataFrame({"pos": range(len(items)), "group": [it.group or it.item_id for it in items]})
    kept = set(trim_groups(frame, n_max)["pos"])
    if len(kept) == len(items):
        return items, None
    out = [it for i, it in enumerate(items) if i in kept]
    return out, {"from_rows": len(items), "to_rows": len(out),
                 "rule": "whole groups in SHA-1 order of the group key until max_rows"}


def load_world(spec: str) -> WorldSet:
    """Load the world set a spec names (see the module docstring for the specs)."""
    name, path, opts = parse_spec(spec, WORLD_ADAPTERS)
    adapter = WORLD_ADAPTERS[name]
    common = {k: opts.pop(k) for k in COMMON_OPTIONS if k in opts}
    try:
        items, prov = adapter.loader(path, **opts)
    except TypeError as e:
        raise InputError(f"{name}: unsupported option(s) {sorted(opts)} ({e})", field="set") from None
    if not items:
        left_out = "; ".join(f"{k}: {v}" for k, v in prov.get("excluded", {}).items())
        raise InputError(f"{name}: no items found" + (f" (every record was left out: {left_out})" if left_out else ""),
                         path=path)
    seen: set[str] = set()
    for it in items:
        if it.item_id in seen:
            raise InputError(f"duplicate item id {it.item_id!r}", path=path, field="item_id")
        seen.add(it.item_id)
    prov_path, prov_doc = find_provenance(path)
    shown = common.get("name") or prov.pop("name", None) or name
    prov.pop("name", None)
    provenance: dict[str, Any] = {
        "spec": spec, "adapter": name, "name": shown,
        "label_origin": adapter.label_origin, "options": opts,
        "provenance_path": str(prov_path) if prov_path else None, "provenance_file": prov_doc,
        **prov,
    }
    provenance.setdefault("excluded", {})
    if "max_rows" in common:
        items, trimmed = _trim(items, common["max_rows"])
        if trimmed:
            provenance["trimmed"] = trimmed
    provenance["n_items"] = len(items)
    provenance["n_groups"] = len({it.group or it.item_id for it in items})
    return WorldSet(items=tuple(items), provenance=provenance)


def load_world_set(spec: str) -> list[WorldItem]:
    """The items of the world set a spec names (:func:`load_world` without the provenance)."""
    return list(load_world(spec).items)


def list_world_adapters() -> pd.DataFrame:
    """The world adapters as a table (name, task, description, label origin)."""
    return pd.DataFrame([{"name": a.name, "task": a.task, "description": a.description,
                          "label origin": a.label_origin} for a in WORLD_ADAPTERS.values()])


__all__ = ["WORLD_ADAPTERS", "WorldAdapter", "WorldSet", "find_provenance", "list_world_adapters", "load_world",
           "load_world_set"]
