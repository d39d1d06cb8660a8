"""Hugging Face dataset adapter: ``hf:PATH`` (a folder written by ``Dataset.save_to_disk`` or
``DatasetDict.save_to_disk``) or ``hf:NAME`` (a hub id such as ``allenai/reward-bench`` already in
the local Hugging Face datasets cache), read through the ``datasets`` library
(``pip install 'judgeaudit[datasets]'``).

The adapter never touches the hub: a hub id is looked up in the local cache only (offline mode
forced for the call, ``download_mode="reuse_dataset_if_exists"``). A set that is neither on disk
nor cached, or a missing ``datasets`` package, is an ``InputError`` that says how to get the set
there (load it once while online, or ``save_to_disk``) or to export it to JSONL/Parquet for the
generic adapter. Known layouts:

* ``chosen``/``rejected`` (+ ``prompt``, ``subset``) → a paired table (RewardBench and similar);
* any other layout needs a column mapping, as for the generic adapter
  (``hf:nvidia/HelpSteer2?text=response&label=helpfulness&group=prompt``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.errors import InputError

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@contextlib.contextmanager
def _hub_offline(datasets: Any) -> Iterator[None]:
    """Offline mode for the duration of one call, whatever the environment said at import time
    (``datasets`` and ``huggingface_hub`` read it into module constants when first imported)."""
    hub_constants = datasets.config.constants      # huggingface_hub.constants, as datasets reads it

    saved_env = {v: os.environ.get(v) for v in _OFFLINE_VARS}
    saved = (datasets.config.HF_HUB_OFFLINE, hub_constants.HF_HUB_OFFLINE)
    os.environ.update({v: "1" for v in _OFFLINE_VARS})
    datasets.config.HF_HUB_OFFLINE = hub_constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE, hub_constants.HF_HUB_OFFLINE = saved
        for v, val in saved_env.items():
            if val is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = val


def _load_local(name: str, split: str, config: str | None) -> pd.DataFrame:
    """``name`` from a ``save_to_disk`` folder or the local cache, as a DataFrame; never the hub."""
    try:
        import datasets  # type: ignore[import-not-found]
    except ImportError:
        raise InputError(f"hf:{name} needs the 'datasets' package (pip install 'judgeaudit[datasets]'); or "
                         "export the set to JSONL/Parquet and use jsonl:PATH?… / parquet:PATH?…",
                         field="hf") from None
    path = Path(name).expanduser()
    if path.is_dir():
        try:
            ds = datasets.load_from_disk(str(path))
        except Exception as e:  # not a save_to_disk folder
            raise InputError(f"hf:{name}: the folder is not a dataset saved with save_to_disk "
                             f"({type(e).__name__}: {e})", field="hf") from None
        if isinstance(ds, datasets.DatasetDict):
            if split not in ds:
                raise InputError(f"hf:{name}: no split {split!r} in the saved dataset (splits: "
                                 f"{', '.join(ds)}); add ?split=NAME", field="split")
            ds = ds[split]
        return ds.to_pandas()
    try:
        with _hub_offline(datasets):
            ds = datasets.load_dataset(name, config, split=split, download_mode="reuse_dataset_if_exists")
    except Exception as e:  # not cached (offline), unknown split or config
        raise InputError(f"hf:{name} is neither a folder saved with save_to_disk nor in the local Hugging Face "
                         f"cache ({datasets.config.HF_DATASETS_CACHE}); judgeaudit never downloads it: load it "
                         f"once while online (datasets.load_dataset({name!r})) or save_to_disk it and pass the "
                         f"folder ({type(e).__name__}: {e})", field="hf") from None
    return ds.to_pandas()


def load_hf(name: str, *, split: str = "train", config: str | None = None,
            mapping: Mapping[str, str] | None = None, _loader: Any = None) -> pd.DataFrame:
    """Load Hugging Face dataset ``name`` as an item or paired table.

    Args:
        name: a ``save_to_disk`` folder, or a hub id present in the local cache
            (e.g. ``allenai/reward-bench``).
        split / config: the split (of a saved DatasetDict or a cached set) and config.
        mapping: a generic column mapping (see ``judgeaudit.datasets.generic``).
        _loader: replaces the local load (tests): ``(name, split, config) -> DataFrame``.
    """
    from judgeaudit.datasets import generic

    if not name or "/" not in name and not name.replace("-", "").replace("_", "").isalnum():
        raise InputError(f"not a Hugging Face dataset name: {name!r}", field="hf")
    df = (_loader or _load_local)(name, split, config)
    mapping = dict(mapping or {})
    if "chosen" in df.columns and "rejected" in df.columns and "text" not in mapping:
        return generic._chosen_rejected(df, mapping, Path(name))
    if "response_a" in mapping:
        return generic._paired(df, mapping, Path(name))
    if "text" not in mapping and "text" not in df.columns:
        raise InputError(f"hf:{name}: columns {list(df.columns)} need a mapping, e.g. "
                         f"hf:{name}?text=COLUMN&label=COLUMN&group=COLUMN", field="hf")
    return generic._items(df, mapping, Path(name))
