"""The registry of data-set adapters and the ``load_set`` spec parser.

A spec is ``NAME:PATH[?key=value&…]``:

* ``llmbar:PATH[?subset=Natural,Adversarial/GPTInst]``, ``judgebench:PATH[?response_model=…]``,
  ``rm_bench:PATH[?pairs=diagonal|length|all&domains=chat,code]``,
  ``mt_bench:PATH[?judgments=FILE&turn=1]``,
  ``halueval:PATH[?part=general|qa|dialogue|summarization&strategy=one-turn]``,
  ``frank:PATH[?threshold=1.0]``, ``gsm8k:PATH[?part=items|pairs&pairs=first|all]``;
* ``jsonl:PATH?text=…&label=…&group=…`` (item mode) or ``jsonl:PATH?response_a=…&response_b=…&label=…``
  (paired), and likewise ``csv:`` and ``parquet:``;
* ``hf:PATH|NAME[?split=…&config=…&<mapping>]`` (a ``save_to_disk`` folder or a locally cached hub id).

Options every spec accepts: ``name=`` (display name) and ``max_rows=N`` (a deterministic trim:
whole groups are kept in order of a hash of the group key until ``N`` rows; recorded in the
table's ``attrs['judgeaudit']['trimmed']``).

``load_sets`` reads a spec as the label sets it holds: an LLMBar folder is one set per subset
found (``Natural``, ``Adversarial/Neighbor``, ``MT-Bench``, …: LLMBar's author labels and the
human-majority Processed sets are different rulers), JudgeBench one set per response model (the
GPT-4o and Claude pairs are separate sets in the JudgeBench paper), each named
``adapter:value``; ``?pool=true`` keeps them as one pooled set. ``load_set`` always gives one table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.specs import parse_options


@dataclass(frozen=True)
class Adapter:
    """One registered adapter: how to load it and what it offers."""

    name: str
    loader: Callable[..., pd.DataFrame]
    description: str
    modes: tuple[str, ...]
    label_space: str
    label_origin: str


def _llmbar(path: str, subset: str | None = None, **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import llmbar

    sets = [s.strip() for s in subset.split(",")] if subset else None
    return llmbar.load_pairs(path, sets=sets, **kw)


def _judgebench(path: str, **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import judgebench

    return judgebench.load_pairs(path, **kw)


def _rm_bench(path: str, domains: str | None = None, **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import rm_bench

    return rm_bench.load_pairs(path, domains=domains.split(",") if domains else None, **kw)


def _mt_bench(path: str, turn: str | None = None, **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import mt_bench

    return mt_bench.load_pairs(path, turn=int(turn) if turn else None, **kw)


def _halueval(path: str, part: str = "general", **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import halueval

    if part == "general":
        return halueval.load_items(path)
    if part in halueval.PARTS:
        return halueval.load_pairs(path, part=part, **kw)
    raise InputError(f"halueval part must be general or one of {', '.join(halueval.PARTS)}, got {part!r}",
                     field="part")


def _frank(path: str, threshold: str | None = None) -> pd.DataFrame:
    from judgeaudit.datasets import frank

    return frank.load_items(path, threshold=float(threshold) if threshold else 1.0)


def _gsm8k(path: str, part: str = "items", **kw: Any) -> pd.DataFrame:
    from judgeaudit.datasets import gsm8k

    if part == "items":
        return gsm8k.load_items(path, **kw)
    if part == "pairs":
        return gsm8k.load_pairs(path, **kw)
    raise InputError(f"gsm8k part must be items or pairs, got {part!r}", field="part")


def _generic(path: str, **mapping: Any) -> pd.DataFrame:
    from judgeaudit.datasets import generic

    return generic.load_table(path, mapping)


def _hf(name: str, split: str = "train", config: str | None = None, **mapping: Any) -> pd.DataFrame:
    from judgeaudit.datasets import hf

    return hf.load_hf(name, split=split, config=config, mapping=mapping)


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (
    Adapter("judgebench", _judgebench, "JudgeBench pairs (objective correctness; GPT-4o / Claude responses)",
            ("item", "paired"), "A/B", "objective correctness"),
    Adapter("llmbar", _llmbar, "every LLMBar-format set found (Natural, Adversarial/*, the Processed human sets "
            "MT-Bench / LLMEval² / FairEval, …) in a clone, its Dataset/ or one set folder",
            ("item", "paired"), "A/B", "author gold / human majority"),
    Adapter("rm_bench", _rm_bench, "RM-Bench chosen vs. rejected at three style levels",
            ("item", "paired"), "A/B", "pair role"),
    Adapter("mt_bench", _mt_bench, "MT-Bench questions, model answers and pairwise judgment files "
            "(GPT-4 pair files; human-judgment files with per-judge votes)", ("item", "paired"), "A/B/tie",
            "judge vote"),
    Adapter("halueval", _halueval, "HaluEval general (human yes/no, per item) or a paired part, qa / dialogue / "
            "summarization (gold vs. generated hallucination; provenance-inherited)", ("item", "paired"),
            "hallucinated/not_hallucinated | A/B", "human label | provenance"),
    Adapter("frank", _frank, "FRANK summary factuality (human, aggregated over sentences)", ("item",),
            "no_error/error", "human annotation"),
    Adapter("gsm8k", _gsm8k, "GSM8K test questions with GPT-3 6B/175B finetuned / verifier solutions "
            "(part=items: one row per solution; part=pairs: a correct vs. an incorrect solution per question)",
            ("item", "paired"), "correct/incorrect | A/B", "objective correctness (model answer vs. ground truth)"),
    Adapter("jsonl", _generic, "any JSONL table with a column mapping", ("item", "paired"), "user", "user"),
    Adapter("csv", _generic, "any CSV table with a column mapping", ("item", "paired"), "user", "user"),
    Adapter("parquet", _generic, "any Parquet table with a column mapping", ("item", "paired"), "user", "user"),
    Adapter("hf", _hf, "a Hugging Face dataset saved to disk or in the local cache (needs `datasets`; no hub)",
            ("item", "paired"), "user", "user"),
)}

COMMON_OPTIONS = ("name", "max_rows", "pool")

#: The column that divides an adapter's table into the label sets it holds (``load_sets``).
SET_COLUMN: dict[str, str] = {"llmbar": "subset", "judgebench": "response_model"}


def parse_spec(spec: str, known: Mapping[str, Any] | None = None) -> tuple[str, str, dict[str, str]]:
    """``NAME:PATH?k=v&…`` → ``(name, path, options)``; ``InputError`` for an adapter not in
    ``known`` (default: the table adapters ``ADAPTERS``; the world sets pass their own registry)."""
    known = ADAPTERS if known is None else known
    if ":" not in spec:
        raise InputError(f"data-set spec {spec!r} must look like NAME:PATH (known: {', '.join(known)})",
                         field="set")
    name, rest = spec.split(":", 1)
    name = name.strip().lower()
    if name not in known:
        raise InputError(f"unknown data-set adapter {name!r} (known: {', '.join(known)})", field="set")
    path, _, query = rest.partition("?")
    opts = parse_options(query, spec=spec, field="set")
    if not path:
        raise InputError(f"data-set spec {spec!r} has no path", field="set")
    return name, path, opts


def trim_groups(df: pd.DataFrame, max_rows: int, *, hashed: bool = True) -> pd.DataFrame:
    """Deterministic trim: keep whole groups, ordered by the SHA-1 of the group key (``hashed=False``:
    in order of first appearance), until at most ``max_rows`` rows (at least one group)."""
    if len(df) <= max_rows:
        return df
    key = df["group"].astype(str) if "group" in df.columns and df["group"].notna().all() else \
        pd.Series(range(len(df))).astype(str)
    order = sorted(key.unique(), key=lambda g: hashlib.sha1(g.encode("utf-8")).hexdigest()) if hashed \
        else list(key.unique())
    sizes = key.value_counts()
    kept, total = [], 0
    for g in order:
        if kept and total + sizes[g] > max_rows:
            break
        kept.append(g)
        total += sizes[g]
    return df.loc[key.isin(set(kept)).to_numpy()].reset_index(drop=True)


def first_groups(items: Sequence[Any], max_items: int | None) -> list[Any]:
    """The first ``max_items`` world items (``group``, else ``item_id``) by whole groups in order of
    first appearance (:func:`trim_groups` in file order), so a HaluEval question's right and
    hallucinated answers stay together. None keeps every item."""
    if max_items is None or len(items) <= max_items:
        return list(items)
    frame = pd.DataFrame({"pos": range(len(items)), "group": [it.group or it.item_id for it in items]})
    kept = set(trim_groups(frame, max_items, hashed=False)["pos"])
    return [it for i, it in enumerate(items) if i in kept]


def display_name(name: str, path: str, opts: dict[str, str]) -> str:
    if "name" in opts:
        return opts["name"]
    extra = opts.get("subset") or opts.get("part") or opts.get("response_model") or opts.get("pairs")
    if name == "halueval":
        return f"halueval:{opts.get('part', 'general')}"
    if name == "gsm8k":
        return f"gsm8k:{opts.get('part', 'items')}"
    if name in ("jsonl", "csv", "parquet"):
        return Path(path).stem
    return f"{name}:{extra}" if extra else name


def _pooled(opts: Mapping[str, str]) -> bool:
    v = str(opts.get("pool", "false")).strip().lower()
    if v not in ("true", "false", "1", "0", "yes", "no"):
        raise InputError(f"pool must be true or false, got {opts['pool']!r}", field="pool")
    return v in ("true", "1", "yes")


def _read(spec: str) -> tuple[str, pd.DataFrame, dict[str, Any], dict[str, str]]:
    """``(adapter name, table, meta, common options)`` of a spec, not yet trimmed."""
    name, path, opts = parse_spec(spec)
    adapter = ADAPTERS[name]
    common = {k: opts.pop(k) for k in COMMON_OPTIONS if k in opts}
    try:
        df = adapter.loader(path, **opts)
    except TypeError as e:
        raise InputError(f"{name}: unsupported option(s) {sorted(opts)} ({e})", field="set") from None
    meta: dict[str, Any] = {"spec": spec, "adapter": name, "name": display_name(name, path, {**opts, **common}),
                            "label_origin": adapter.label_origin}
    return name, df, meta, common


def _finish(df: pd.DataFrame, meta: dict[str, Any], common: Mapping[str, str]) -> pd.DataFrame:
    """The table with its label origin, any trimming (``max_rows``) and ``meta`` in its attrs."""
    meta = dict(meta)
    if "label_source" in df.columns and df["label_source"].notna().any():
        meta["label_origin"] = ", ".join(sorted(df["label_source"].dropna().astype(str).unique()))
    if "max_rows" in common:
        try:
            n_max = int(common["max_rows"])
        except ValueError:
            raise InputError(f"max_rows must be an integer, got {common['max_rows']!r}", field="max_rows") from None
        n0 = len(df)
        df = trim_groups(df, n_max)
        if len(df) < n0:
            meta["trimmed"] = {"from_rows": n0, "to_rows": len(df), "rule": "whole groups in SHA-1 order of "
                               "the group key until max_rows"}
    df.attrs = {**df.attrs, "judgeaudit": meta}
    return df


def load_set(spec: str) -> pd.DataFrame:
    """Load the set a spec names as one table; ``df.attrs['judgeaudit']`` records the spec, display
    name, adapter, label origin and any trimming."""
    _, df, meta, common = _read(spec)
    return _finish(df, meta, common)


def load_sets(spec: str) -> list[pd.DataFrame]:
    """The label sets a spec holds, each its own table (``SET_COLUMN``: one per LLMBar subset,
    one per JudgeBench response model, in the order found; ``max_rows`` trims each), or the one
    pooled table with ``?pool=true`` (and for every other adapter). ``attrs['judgeaudit']``
    records ``pooled`` (and ``split_by``, the column, when the spec's table held several sets)."""
    adapter, df, meta, common = _read(spec)
    col = SET_COLUMN.get(adapter)
    if col is None or col not in df.columns:
        return [_finish(df, meta, common)]
    values = list(dict.fromkeys(df[col].astype(str)))
    if _pooled(common) or len(values) < 2:
        pooled = len(values) > 1
        return [_finish(df, {**meta, "pooled": pooled, **({"pooled_over": {col: values}} if pooled else {})},
                        common)]
    stem = common.get("name") or adapter
    parts = []
    for v in values:
        part = df.loc[(df[col].astype(str) == v).to_numpy()].reset_index(drop=True)
        part.attrs = dict(df.attrs)
        parts.append(_finish(part, {**meta, "name": f"{stem}:{v}", "pooled": False, "split_by": col}, common))
    return parts


def list_adapters() -> pd.DataFrame:
    """The registry as a table (name, description, modes, label space, label origin)."""
    return pd.DataFrame([{"name": a.name, "description": a.description, "modes": ", ".join(a.modes),
                          "label space": a.label_space, "label origin": a.label_origin}
                         for a in ADAPTERS.values()])
