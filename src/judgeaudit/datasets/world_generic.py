"""World adapters for corpora users hold themselves: RAGTruth's format and LLM-AggreFact's shape.

* **RAGTruth** (ParticleMedia/RAGTruth, ``dataset/``): ``response.jsonl`` (``id``, ``source_id``,
  ``model``, ``temperature``, ``labels`` = ``[{start, end, text, label_type, meta, due_to_null?,
  implicit_true?}]``, ``split``, ``quality``, ``response``) and ``source_info.jsonl``
  (``source_id``, ``task_type`` = ``QA`` | ``Summary`` | ``Data2txt``, ``source``, ``source_info``,
  ``prompt``). The world is built as the authors' ``baseline/prepare_dataset.py`` builds its
  ``reference``: QA → ``source_info['passages']`` (and ``question`` = ``source_info['question']``),
  Summary → ``source_info`` (a string), Data2txt → ``f"{source_info}"`` (the dict's Python text).
  An output is defective when it has any label (the authors' ``is_halu = len(labels) > 0``); its
  spans are the labels' character offsets ``[start, end)`` with ``label_type``. By default only
  ``quality == "good"`` responses are kept, as the authors do (``quality=all`` keeps every one);
  ``split=train|test`` and ``task=QA,Summary`` filter; a response whose source (the world) is
  missing or empty, or with a label of zero length, is left out; each exclusion is counted.
* **LLM-AggreFact** shape: one claim per row with its grounding document and a label (1 =
  supported, 0 = unsupported), in JSONL, CSV/TSV or Parquet (a file or every such file in a
  folder). Columns ``doc`` (or ``document``), ``claim``, ``label`` and optionally ``dataset``;
  other names are given as options (``doc=…&claim=…&label=…&dataset=…&id=…``).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from pathlib import Path
from typing import Any

from judgeaudit.datasets._common import files_under, first_record, layout_error, require
from judgeaudit.datasets.generic import _row_line
from judgeaudit.datasets.world_base import AdapterResult, excluded, make_item
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl, read_table
from judgeaudit.records import Span, WorldItem

# ---- RAGTruth ------------------------------------------------------------------------------------

RESPONSE_FIELDS = ("id", "source_id", "response", "labels")
SOURCE_FIELDS = ("source_id", "task_type", "source_info")
RAGTRUTH_EMPTY_LABEL = "a label of zero length (start = end) marks no text"
RAGTRUTH_TASKS = {"QA": "rag", "Summary": "summarization", "Data2txt": "data2text"}
"""RAGTruth ``task_type`` → world item ``task`` (the arms pick placebo worlds within a task)."""


def _find(root: Path, name: str, fields: tuple[str, ...]) -> Path:
    if (root / name).is_file():
        return root / name
    found = [f for f in files_under(root, (".jsonl",)) if set(fields) <= set(first_record(f) or {})]
    if len(found) != 1:
        raise layout_error(f"expected one RAGTruth {name} (JSON Lines with {', '.join(fields)}), found {len(found)}",
                           root)
    return found[0]


def _ragtruth_world(info: Any, task_type: str, path: Path, line: int) -> tuple[str | None, str | None]:
    """(world, question) of one source, as the authors' ``prepare_dataset.py`` builds them."""
    if task_type == "QA":
        if not isinstance(info, dict):
            raise InputError("a QA source must be an object with question and passages", path=path, line=line,
                             field="source_info")
        q = info.get("question")
        return info.get("passages"), (str(q) if q is not None else None)
    if task_type == "Summary":
        return (info if isinstance(info, str) else None), None
    return f"{info}", None


def _split_list(value: str | None) -> set[str] | None:
    return {v.strip() for v in value.split(",") if v.strip()} if value else None


def load_ragtruth(path: str | Path, *, split: str = "all", quality: str = "good",
                  task: str | None = None) -> AdapterResult:
    """RAGTruth-format responses as world items (see the module docstring)."""
    root = Path(path)
    if not root.is_dir():
        raise InputError("RAGTruth folder (with response.jsonl and source_info.jsonl) not found", path=root)
    resp_path = _find(root, "response.jsonl", RESPONSE_FIELDS)
    src_path = _find(root, "source_info.jsonl", SOURCE_FIELDS)
    tasks = _split_list(task)
    sources: dict[str, tuple[dict[str, Any], int]] = {}
    for line, obj in iter_jsonl(src_path):
        for key in SOURCE_FIELDS:
            require(obj, key, src_path, line)
        sources[str(obj["source_id"])] = (obj, line)
    counts: Counter[str] = Counter()
    mismatched = 0
    items: list[WorldItem] = []
    for line, obj in iter_jsonl(resp_path):
        for key in RESPONSE_FIELDS:
            require(obj, key, resp_path, line)
        if split != "all" and obj.get("split") != split:
            counts[f"split is not {split}"] += 1
            continue
        if quality != "all" and obj.get("quality", "good") != quality:
            counts[f"quality is not {quality}"] += 1
            continue
        sid = str(obj["source_id"])
        if sid not in sources:
            counts[f"no source (the world) in {src_path.name}"] += 1
            continue
        src, src_line = sources[sid]
        task_type = str(src["task_type"])
        if tasks is not None and task_type not in tasks:
            counts[f"task is not {', '.join(sorted(tasks))}"] += 1
            continue
        world, question = _ragtruth_world(src["source_info"], task_type, src_path, src_line)
        if not isinstance(world, str) or not world.strip():
            counts["the world (source_info) is missing or empty"] += 1
            continue
        response, labels = obj["response"], obj["labels"]
        if not isinstance(response, str):
            raise InputError("must be a string", path=resp_path, line=line, field="response")
        if not isinstance(labels, list):
            raise InputError("must be a list of {start, end, label_type} objects", path=resp_path, line=line,
                             field="labels")
        spans = []
        for i, lab in enumerate(labels):
            if not isinstance(lab, dict) or not all(isinstance(lab.get(k), int) and not isinstance(lab.get(k), bool)
                                                    for k in ("start", "end")):
                raise InputError("must be an object with integer start and end", path=resp_path, line=line,
                                 field=f"labels[{i}]")
            if lab["start"] == lab["end"]:
                break
            spans.append(Span(start=lab["start"], end=lab["end"], label=lab.get("label_type")))
            if "text" in lab and 0 <= lab["start"] <= lab["end"] <= len(response) \
                    and response[lab["start"]:lab["end"]] != lab["text"]:
                mismatched += 1
        if len(spans) < len(labels):
            counts[RAGTRUTH_EMPTY_LABEL] += 1
            continue
        items.append(make_item(
            path=resp_path, line=line, span_field="labels",
            item_id=f"ragtruth/{obj['id']}", task=RAGTRUTH_TASKS.get(task_type, task_type.lower()), output=response,
            world=world, question=question, defective=bool(labels), spans=spans, group=sid,
            source_set=f"ragtruth_{task_type.lower()}",
            meta={"model": obj.get("model"), "temperature": obj.get("temperature"), "split": obj.get("split"),
                  "quality": obj.get("quality"), "task_type": task_type, "source": src.get("source"),
                  "implicit_true": sum(bool(lab.get("implicit_true")) for lab in labels),
                  "due_to_null": sum(bool(lab.get("due_to_null")) for lab in labels)}))
    return items, {"files": [str(resp_path), str(src_path)], "split": split, "quality": quality,
                   "excluded": excluded(counts), "label_text_mismatches": mismatched,
                   "label_rule": "defective = any label (is_halu = len(labels) > 0, RAGTruth baseline)"}


# ---- LLM-AggreFact shape -------------------------------------------------------------------------

TABLE_SUFFIXES = (".jsonl", ".csv", ".tsv", ".parquet")
_SUPPORTED = {"1", "1.0", "true", "supported", "yes"}
_UNSUPPORTED = {"0", "0.0", "false", "unsupported", "no"}


def claim_defective(value: Any, *, path: Path, line: int, field: str) -> bool:
    """An AggreFact label (1 = supported) as ``defective`` (unsupported); ``InputError`` otherwise."""
    key = str(value).strip().lower()
    if key in _SUPPORTED:
        return False
    if key in _UNSUPPORTED:
        return True
    raise InputError(f"label must be 1 (supported) or 0 (unsupported), got {value!r}", path=path, line=line,
                     field=field)


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def load_aggrefact(path: str | Path, *, doc: str | None = None, claim: str = "claim", label: str = "label",
                   dataset: str = "dataset", id: str | None = None) -> AdapterResult:  # noqa: A002 - option name
    """Claim-level rows (document, claim, label) as world items: world = the document, output =
    the claim, ``defective`` = the claim is unsupported (label 0)."""
    root = Path(path)
    if not root.exists():
        raise InputError("AggreFact file or folder not found", path=root)
    files = files_under(root, TABLE_SUFFIXES)
    if not files:
        raise layout_error(f"no table files ({', '.join(TABLE_SUFFIXES)}) under this folder", root)
    items: list[WorldItem] = []
    for f in files:
        df = read_table(f)
        doc_col = doc or next((c for c in ("doc", "document") if c in df.columns), "doc")
        for col in (doc_col, claim, label):
            if col not in df.columns:
                raise InputError(f"column not found; columns: {', '.join(map(str, df.columns))}", path=f, field=col)
        for i, row in enumerate(df.to_dict("records")):
            line = _row_line(f, i)
            document, text = row[doc_col], row[claim]
            if not _present(text) or not str(text).strip():
                raise InputError("the claim is missing or empty", path=f, line=line, field=claim)
            ds = str(row[dataset]) if dataset in row and _present(row[dataset]) else f.stem
            digest = hashlib.sha1(str(document).encode("utf-8")).hexdigest()[:12] if _present(document) else "none"
            item_id = str(row[id]) if id and id in row and _present(row[id]) else f"{f.stem}/{i}"
            items.append(make_item(
                path=f, line=line, world_field=doc_col,
                item_id=f"aggrefact/{item_id}", task="claim", output=str(text),
                world=str(document) if _present(document) else None,
                defective=claim_defective(row[label], path=f, line=line, field=label),
                group=f"{ds}/{digest}", source_set=f"aggrefact_{ds}", meta={"dataset": ds, "row": i}))
    return items, {"files": [str(f) for f in files], "excluded": {},
                   "label_rule": "label 1 = supported (clean), 0 = unsupported (defective)"}
