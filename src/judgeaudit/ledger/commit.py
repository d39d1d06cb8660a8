"""Freezing predictions by hash, and refusing any later edit of a committed clause.

The canonical serialisation of a value is JSON with keys sorted, no whitespace (``,`` and ``:``
separators), strings NFC-normalised and written as UTF-8 (not ``\\u`` escapes), tuples as lists,
and numbers normalised: an integral float is written as an integer (``1.0`` → ``1``), any other
number as the shortest decimal that round-trips (``0.10`` → ``0.1``); NaN and infinities are
refused. A prediction's hash is the SHA-256 of its canonical serialisation (fields left at their
defaults omitted). A commit entry's hash covers the canonical predictions it froze, its time, its
git commit and the previous entry's hash, so editing a commit's time is detected too.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.ledger.model import Commit, Ledger, Prediction
from judgeaudit.runinfo import utc_now


def _norm(x: Any) -> Any:
    if isinstance(x, dict):
        return {unicodedata.normalize("NFC", str(k)): _norm(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_norm(v) for v in x]
    if isinstance(x, str):
        return unicodedata.normalize("NFC", x)
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int | float):
        f = float(x)
        if not math.isfinite(f):
            raise InputError(f"a ledger number must be finite, not {x!r}")
        if isinstance(x, int):
            return x
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    raise TypeError(f"cannot serialise {type(x).__name__} canonically")


def canonical(obj: Any) -> bytes:
    """The canonical serialisation of ``obj`` (see the module docstring)."""
    return json.dumps(_norm(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def sha256(obj: Any) -> str:
    return hashlib.sha256(canonical(obj)).hexdigest()


def prediction_content(p: Prediction) -> dict[str, Any]:
    return p.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def prediction_hash(p: Prediction) -> str:
    return sha256(prediction_content(p))


def _entry_hash(preds: list[Prediction], at: str, git: str | None, parent: str | None) -> str:
    return sha256({"predictions": [prediction_content(p) for p in sorted(preds, key=lambda p: p.id)],
                   "at": at, "git": git, "parent": parent})


def git_head(where: str | Path) -> str | None:
    """The commit checked out in the git repository holding ``where``, or None (no git, no repo)."""
    d = Path(where).resolve()
    d = d if d.is_dir() else d.parent
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=d, capture_output=True, text=True, timeout=10,
                           check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    head = r.stdout.strip()
    return head if r.returncode == 0 and len(head) == 40 else None


def verify(ledger: Ledger, path: str | Path | None = None) -> None:
    """Raise ``InputError`` if any committed prediction was edited or removed, or a commit entry was
    altered, since it was committed."""
    parent = None
    for c in ledger.commits:
        preds = []
        for pid, h in c.predictions.items():
            try:
                p = ledger.prediction(pid)
            except KeyError:
                raise InputError(f"prediction {pid} was committed at {c.at} (sha256 {c.sha256[:12]}) and has "
                                 "been removed; committed predictions cannot be removed", path=path,
                                 field="predictions") from None
            if prediction_hash(p) != h:
                raise InputError(f"prediction {pid} was edited after it was committed at {c.at} "
                                 f"(sha256 {h[:12]}, now {prediction_hash(p)[:12]}); a committed clause cannot "
                                 "change — write a new prediction instead", path=path, field=f"predictions.{pid}")
            preds.append(p)
        if c.parent != parent or _entry_hash(preds, c.at, c.git, c.parent) != c.sha256:
            raise InputError(f"commit entry {c.sha256[:12]} ({c.at}) does not match its contents: the commit "
                             "record was altered", path=path, field="commits")
        parent = c.sha256


def commit(ledger: Ledger, *, path: str | Path | None = None, at: str | None = None,
           git: str | None = None) -> tuple[Ledger, Commit | None]:
    """Freeze every uncommitted prediction in a new commit entry (after checking that nothing
    committed has changed). Returns the new ledger and the entry (None when nothing was new).
    ``at`` defaults to now (UTC); ``git`` to the HEAD of the repository holding ``path``."""
    verify(ledger, path)
    done = ledger.committed_at()
    new = [p for p in ledger.predictions if p.id not in done]
    if not new:
        return ledger, None
    at = at or utc_now()
    try:
        datetime.fromisoformat(at)
    except ValueError:
        raise InputError(f"commit time {at!r} is not ISO 8601", field="at") from None
    if git is None and path is not None:
        git = git_head(path)
    parent = ledger.commits[-1].sha256 if ledger.commits else None
    entry = Commit(sha256=_entry_hash(new, at, git, parent), at=at, git=git, parent=parent,
                   predictions={p.id: prediction_hash(p) for p in new})
    return ledger.model_copy(update={"commits": (*ledger.commits, entry)}), entry
