"""The verdict table of a validity run, read once for every judge in it (construct-validity.txt App. D).

The requests a probe set grades (its base items' originals and its edited texts) are numbered once
(``requests_of``); the table's columns are read once into arrays, each row's request replaced by its
number (−1: another analysis's request), and each judge's rows listed by position (``read_table``). A
judge's profile then reads its own rows from those arrays, never the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity.design import _Design, str_values


@dataclass(frozen=True)
class Requests:
    """The requests of a probe set, each numbered once."""

    index: pd.Index             # request id → number
    base: np.ndarray            # the number of each probe's original
    edit: np.ndarray            # the number of each probe's edited text
    length: np.ndarray          # the graded text's length in characters, per number


def requests_of(d: _Design) -> Requests:
    """The requests of design ``d``. A text's length is the one its last mention in the design gives
    (the originals probe by probe, then the edited texts), as a mapping filled in that order keeps."""
    number, ids = pd.factorize(np.concatenate([d.bases, d.probe_ids]), use_na_sentinel=False)
    base, edit = number[:len(d.bases)][d.base_index], number[len(d.bases):]
    given = np.concatenate([base, edit])[::-1]
    lengths = np.concatenate([d.base_len, d.edit_len]).astype(float)[::-1]
    last_given, last = np.unique(given, return_index=True)     # the first from the end is the last given
    length = np.full(len(ids), np.nan)
    length[last_given] = lengths[last]
    return Requests(index=pd.Index(ids, dtype=object), base=base, edit=edit, length=length)


@dataclass(frozen=True)
class Table:
    """A verdict table's columns, one entry per row."""

    request: np.ndarray         # the request's number (``Requests``), −1 when it is not the probe set's
    epoch: np.ndarray           # 0: the grade; ≥ 1: a re-grade (a missing or non-numeric epoch is 0)
    score: np.ndarray           # the score (NaN where it is missing or not a number)
    scored: np.ndarray          # a numeric score is present
    error: np.ndarray           # the call failed
    parsed: np.ndarray          # the reply was parsed
    reference: np.ndarray | None  # the backend is the reference one (None: no provider column)
    judges: tuple[tuple[Any, np.ndarray], ...]   # each judge id, in order of first appearance, with its rows


def _judge_rows(ids: pd.Series) -> tuple[tuple[Any, np.ndarray], ...]:
    """Each judge id in order of first appearance with the positions of its rows (in table order); a
    missing id matches no row."""
    codes, _ = pd.factorize(ids)                   # missing ids: −1
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(codes.max(initial=-1) + 2))
    if not (codes < 0).any():
        return tuple((jid, order[bounds[k]:bounds[k + 1]]) for k, jid in enumerate(pd.unique(ids)))
    out, k = [], 0
    for jid in pd.unique(ids):
        if pd.api.types.is_scalar(jid) and pd.isna(jid):
            out.append((jid, np.zeros(0, dtype=np.intp)))
        else:
            out.append((jid, order[bounds[k]:bounds[k + 1]]))
            k += 1
    return tuple(out)


def _ints(col: pd.Series) -> np.ndarray:
    """A column as integers, 0 where missing or not a number (an int column as it is)."""
    if col.dtype == np.dtype(int):
        return col.to_numpy()
    return pd.to_numeric(col, errors="coerce").fillna(0).astype(int).to_numpy()


def _flags(col: pd.Series) -> np.ndarray:
    """A column as booleans, False where missing (a bool column as it is)."""
    if col.dtype == np.dtype(bool):
        return col.to_numpy()
    return col.fillna(False).astype(bool).to_numpy(dtype=bool)


def read_table(verdicts: pd.DataFrame, req: Requests) -> Table:
    """``verdicts`` read once (``judge_id, request_id, score``; ``parse_ok, error, epoch, provider``
    optional): a row is usable with no error, a parse, and a numeric score."""
    n = len(verdicts)
    request = req.index.get_indexer(pd.Index(str_values(verdicts["request_id"]), dtype=object))
    epoch = _ints(verdicts["epoch"]) if "epoch" in verdicts else np.zeros(n, dtype=int)
    if verdicts["score"].dtype == np.float64:
        score = verdicts["score"].to_numpy()
        scored = ~np.isnan(score)
    else:
        numeric = pd.to_numeric(verdicts["score"], errors="coerce")
        score, scored = numeric.to_numpy(dtype=float, na_value=np.nan), numeric.notna().to_numpy(dtype=bool)
    error = verdicts["error"].notna().to_numpy(dtype=bool) if "error" in verdicts else np.zeros(n, dtype=bool)
    parsed = _flags(verdicts["parse_ok"]) if "parse_ok" in verdicts else np.ones(n, dtype=bool)
    # a missing provider (a nullable comparison) does not count against a reference judge's rows
    reference = ((verdicts["provider"] == "reference").to_numpy(dtype=bool, na_value=True)
                 if "provider" in verdicts else None)
    return Table(request=request, epoch=epoch, score=score, scored=scored, error=error, parsed=parsed,
                 reference=reference, judges=_judge_rows(verdicts["judge_id"]))
