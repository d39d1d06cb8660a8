"""FRANK adapter (artidoro/frank): human factuality annotations of system summaries, joined to
the summary texts, as an item table.

Quirks handled here:

* ``human_annotations.json`` holds one record per (article ``hash``, ``model_name``) with
  ``Factuality`` in [0, 1], the share of the summary's sentences the annotators found free of
  error, already aggregated. The per-annotator sentence file (``human_annotations_sentence.json``)
  is not in the public copy, so this adapter carries one label per item and no ``human_labels``:
  a human ceiling for FRANK has to be supplied by the user (``--ceiling``).
* The summary text is ``articles[hash][model_name]`` from ``articles.jsonl`` (the per-article
  files of the repository's first commit), or ``summary`` of the repository's
  ``benchmark_data.json``; files are found by their fields, not their names. CNN/DM systems'
  texts are lower-cased and tokenised by their pipelines, which is part of the generative
  condition.
* Item label: ``no_error`` when ``Factuality == 1.0`` (no annotated error in any sentence),
  else ``error`` (``threshold`` changes the cut). Group: the source article; condition: the
  summarisation system.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import files_under, first_record, layout_error, read_json, read_json_array
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl


ANNOTATION_FIELDS = ("hash", "model_name", "Factuality")


def _json_files(root: Path) -> list[Path]:
    return files_under(root, (".json", ".jsonl"))


def _records(path: Path) -> list[dict[str, Any]]:
    """The objects a JSON (array or single object) or JSON Lines file holds."""
    if path.suffix == ".jsonl":
        return [obj for _, obj in iter_jsonl(path)]
    data = read_json(path)
    if isinstance(data, dict):
        return [data]
    return [o for o in data if isinstance(o, dict)] if isinstance(data, list) else []


def annotation_file(root: str | Path) -> Path:
    """The human annotation file under ``root`` (any name, any depth; a JSON array of records with
    ``hash``, ``model_name``, ``Factuality``), or ``root`` itself when it is that file."""
    root = Path(root)
    if root.is_file():
        return root
    if not root.is_dir():
        raise InputError("FRANK folder not found", path=root)
    found = [f for f in _json_files(root) if f.suffix == ".json" and all(
        k in (first_record(f) or {}) for k in ANNOTATION_FIELDS)]
    if not found:
        raise layout_error("no FRANK annotation file (a JSON array of records with "
                           + ", ".join(ANNOTATION_FIELDS) + ") under this folder", root)
    if len(found) > 1:
        raise InputError(f"several FRANK annotation files: {', '.join(map(str, found))}", path=root)
    return found[0]


def summary_texts(root: str | Path, *, exclude: Path | None = None) -> dict[tuple[str, str], str]:
    """(article hash, system) -> summary text, from every text source found under ``root``:
    records with ``hash``, ``model_name`` and ``summary`` (the repository's
    ``benchmark_data.json``), and per-article records with ``hash`` and ``article`` whose other
    string fields are the systems' summaries (``articles.jsonl``, or the per-article files of
    ``data/articles-*-json/``). The first source found for a pair wins."""
    texts: dict[tuple[str, str], str] = {}
    for f in _json_files(Path(root)):
        if exclude is not None and f == exclude:
            continue
        for obj in _records(f):
            if "hash" not in obj:
                continue
            h = str(obj["hash"])
            if "model_name" in obj:
                if isinstance(obj.get("summary"), str):
                    texts.setdefault((h, str(obj["model_name"])), obj["summary"])
            elif "article" in obj:
                for k, v in obj.items():
                    if isinstance(v, str):
                        texts.setdefault((h, k), v)
    return texts


def load_items(root: str | Path, *, threshold: float = 1.0) -> pd.DataFrame:
    """FRANK as an item table (``item_id, text, label, group, condition`` + ``dataset``,
    ``split``, ``factuality``); ``label`` is ``no_error`` iff ``Factuality >= threshold``.

    ``root`` is the repository root, its ``data/`` folder or the shared copy's folder: the
    annotation file and the summary texts are found by their fields (:func:`annotation_file`,
    :func:`summary_texts`)."""
    root = Path(root)
    ann_path = annotation_file(root)
    texts = summary_texts(root if root.is_dir() else ann_path.parent, exclude=ann_path)
    if not texts:
        raise layout_error("no FRANK summary texts (benchmark_data.json, articles.jsonl or per-article "
                           "files) under this folder", root if root.is_dir() else ann_path.parent)
    rows = []
    for i, obj in enumerate(read_json_array(ann_path)):
        for key in ANNOTATION_FIELDS:
            if key not in obj:
                raise InputError(f"record {i}: required field is missing", path=ann_path, field=key)
        h, m = str(obj["hash"]), str(obj["model_name"])
        text = texts.get((h, m))
        if text is None:
            raise InputError(f"record {i}: no summary text for article {h} system {m} in the text sources",
                             path=ann_path, field="model_name")
        fact = float(obj["Factuality"])
        rows.append({"item_id": f"frank/{h}/{m}", "text": text,
                     "label": "no_error" if fact >= threshold else "error", "group": h, "condition": m,
                     "dataset": obj.get("dataset"), "split": obj.get("split"), "factuality": fact})
    return pd.DataFrame(rows)


__all__ = ["load_items"]
