"""FRANK adapter (artidoro/frank): human factuality annotations of system summaries, joined to
the summary texts, as an item table.

Quirks handled here:

* ``human_annotations.json`` holds one record per (article ``hash``, ``model_name``) with
  ``Factuality`` in [0, 1], the share of the summary's sentences the annotators found free of
  error, already aggregated. The per-annotator sentence file (``human_annotations_sentence.json``)
  is not in the public copy, so this adapter carries one label per item and no ``human_labels``:
  a human ceiling for FRANK has to be supplied by the user (``--ceiling``).
* The summary text is ``articles[hash][model_name]`` from ``articles.jsonl`` (the per-article
  files of the repository's first commit). CNN/DM systems' texts are lower-cased and tokenised
  by their pipelines, which is part of the generative condition.
* Item label: ``no_error`` when ``Factuality == 1.0`` (no annotated error in any sentence),
  else ``error`` (``threshold`` changes the cut). Group: the source article; condition: the
  summarisation system.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.datasets._common import read_json_array
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl


def load_items(root: str | Path, *, threshold: float = 1.0) -> pd.DataFrame:
    """FRANK as an item table (``item_id, text, label, group, condition`` + ``dataset``,
    ``split``, ``factuality``); ``label`` is ``no_error`` iff ``Factuality >= threshold``."""
    root = Path(root)
    ann_path = root / "human_annotations.json"
    art_path = root / "articles.jsonl"
    for p in (ann_path, art_path):
        if not p.is_file():
            raise InputError(f"FRANK file {p.name} not found", path=root)
    texts: dict[tuple[str, str], str] = {}
    for _, obj in iter_jsonl(art_path):
        h = str(obj.get("hash"))
        for k, v in obj.items():
            if isinstance(v, str):
                texts[(h, k)] = v
    rows = []
    for i, obj in enumerate(read_json_array(ann_path)):
        for key in ("hash", "model_name", "Factuality"):
            if key not in obj:
                raise InputError(f"record {i}: required field is missing", path=ann_path, field=key)
        h, m = str(obj["hash"]), str(obj["model_name"])
        text = texts.get((h, m))
        if text is None:
            raise InputError(f"record {i}: no summary text for article {h} system {m} in articles.jsonl",
                             path=ann_path, field="model_name")
        fact = float(obj["Factuality"])
        rows.append({"item_id": f"frank/{h}/{m}", "text": text,
                     "label": "no_error" if fact >= threshold else "error", "group": h, "condition": m,
                     "dataset": obj.get("dataset"), "split": obj.get("split"), "factuality": fact})
    return pd.DataFrame(rows)


__all__ = ["load_items"]
