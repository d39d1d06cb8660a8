"""Hugging Face dataset adapter: a dataset name (``hf:allenai/reward-bench``) read through the
``datasets`` library when it is installed and the hub is reachable.

The hub is a convenience, never a requirement: without ``datasets``, offline
(``HF_HUB_OFFLINE=1``), or when the download fails, an ``InputError`` says so and suggests
exporting the set to JSONL/Parquet and using the generic adapter. Known layouts:

* ``chosen``/``rejected`` (+ ``prompt``, ``subset``) → a paired table (RewardBench and similar);
* any other layout needs a column mapping, as for the generic adapter
  (``hf:nvidia/HelpSteer2?text=response&label=helpfulness&group=prompt``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.errors import InputError


def _offline() -> bool:
    return any(os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on")
               for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def _download(name: str, split: str, config: str | None) -> pd.DataFrame:  # pragma: no cover - network
    try:
        import datasets  # type: ignore[import-not-found]
    except ImportError:
        raise InputError(f"hf:{name} needs the 'datasets' package (pip install datasets); or export the set "
                         "to JSONL/Parquet and use jsonl:PATH?… / parquet:PATH?…", field="hf") from None
    if _offline():
        raise InputError(f"hf:{name}: the Hugging Face hub is disabled (HF_HUB_OFFLINE is set); export the set "
                         "to a file and use the generic adapter", field="hf")
    try:
        ds = datasets.load_dataset(name, config, split=split)
    except Exception as e:  # hub unreachable, unknown name, auth
        raise InputError(f"hf:{name}: could not load from the Hugging Face hub ({type(e).__name__}: {e})",
                         field="hf") from None
    return ds.to_pandas()


def load_hf(name: str, *, split: str = "train", config: str | None = None,
            mapping: Mapping[str, str] | None = None, _loader: Any = None) -> pd.DataFrame:
    """Load Hugging Face dataset ``name`` as an item or paired table.

    Args:
        name: the hub id, e.g. ``allenai/reward-bench``.
        split / config: passed to ``datasets.load_dataset``.
        mapping: a generic column mapping (see ``judgeaudit.datasets.generic``).
        _loader: replaces the download (tests): ``(name, split, config) -> DataFrame``.
    """
    from judgeaudit.datasets import generic

    if not name or "/" not in name and not name.replace("-", "").replace("_", "").isalnum():
        raise InputError(f"not a Hugging Face dataset name: {name!r}", field="hf")
    df = (_loader or _download)(name, split, config)
    mapping = dict(mapping or {})
    if "chosen" in df.columns and "rejected" in df.columns and "text" not in mapping:
        return generic._chosen_rejected(df, mapping, Path(name))
    if "response_a" in mapping:
        return generic._paired(df, mapping, Path(name))
    if "text" not in mapping and "text" not in df.columns:
        raise InputError(f"hf:{name}: columns {list(df.columns)} need a mapping, e.g. "
                         f"hf:{name}?text=COLUMN&label=COLUMN&group=COLUMN", field="hf")
    return generic._items(df, mapping, Path(name))
