"""Freezing predictions by hash, and refusing any later edit of a committed clause.

The canonical serialisation of a value is JSON with keys sorted, no whitespace (``,`` and ``:``
separators), strings NFC-normalised and written as UTF-8 (not ``\\u`` escapes), tuples as lists,
and numbers normalised: an integral float is written as an integer (``1.0`` → ``1``), any other
number as the shortest decimal that round-trips (``0.10`` → ``0.1``); NaN and infinities are
refused. A prediction's hash is the SHA-256 of its canonical serialisation (fields left at their
defaults omitted). A commit entry's hash covers the canonical predictions it froze, its time, its
git commit and the previous entry's hash, so editing a commit's time is detected too; the entries
form a chain (each names its parent's hash), so removing or reordering one breaks it.

Removing the *trailing* entries leaves a shorter chain that is still whole, so the head of the chain
is recorded outside the ledger too: ``record_head`` writes ``<ledger>.head`` (JSON: the number of
entries and the last entry's hash) beside the ledger and, when the ledger sits in a git work tree,
commits the ledger and its head file in git (``git commit`` of those two paths only). ``verify`` with
the ledger's path refuses a ledger whose chain does not reach the head recorded in its head file, or
that does not extend every version of the ledger in its git history — so deleting the head file as
well is caught by git. A commit entry's ``git`` is the HEAD the predictions were written on; the git
commit that holds them is the one ``record_head`` makes.
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

import yaml

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


def _zoned(at: str, path: str | Path | None, field: str) -> datetime:
    try:
        t = datetime.fromisoformat(at)
    except ValueError:
        raise InputError(f"commit time {at!r} is not ISO 8601", path=path, field=field) from None
    if t.tzinfo is None:
        raise InputError(f"commit time {at!r} has no time zone (write it in UTC, e.g. {at}+00:00)", path=path,
                         field=field)
    return t


def head_path(path: str | Path) -> Path:
    """The head file of the ledger at ``path``: ``<ledger>.head`` beside it."""
    p = Path(path)
    return p.with_name(p.name + ".head")


def _git(where: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def _chain_of(text: str) -> list[str]:
    """The commit-entry hashes of a ledger's text (an unreadable version holds none)."""
    try:
        d = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    commits = d.get("commits") if isinstance(d, dict) else None
    return [str(c.get("sha256")) for c in commits or () if isinstance(c, dict)]


def _git_versions(path: Path) -> list[tuple[str, list[str]]]:
    """``(git commit, entry hashes)`` of every version of the ledger file in its git history."""
    d = path.resolve().parent
    r = _git(d, "log", "--format=%H", "--", path.name)
    if r is None or r.returncode != 0:
        return []
    out = []
    for rev in r.stdout.split():
        shown = _git(d, "show", f"{rev}:./{path.name}")
        if shown is not None and shown.returncode == 0:
            out.append((rev, _chain_of(shown.stdout)))
    return out


def check_head(ledger: Ledger, path: str | Path) -> None:
    """Refuse (``InputError``) a ledger whose commit chain is shorter than the head recorded beside it
    or than a version of it in git: its trailing commit entries were removed."""
    p = Path(path)
    chain = [c.sha256 for c in ledger.commits]
    hp = head_path(p)
    if hp.is_file():
        try:
            head = json.loads(hp.read_text(encoding="utf-8"))
            n, last = int(head["entries"]), str(head["head"])
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
            raise InputError(f"cannot read the ledger's head file ({e})", path=hp) from None
        if len(chain) < n or chain[n - 1] != last:
            raise InputError(f"the commit chain holds {len(chain)} entries, but its head file {hp.name} records "
                             f"{n} ending in {last[:12]}: commit records were removed or replaced", path=p,
                             field="commits")
    for rev, old in _git_versions(p):
        if chain[:len(old)] != old:
            raise InputError(f"the commit chain holds {len(chain)} entries and does not extend the version of this "
                             f"ledger in git commit {rev[:12]} ({len(old)} entries): commit records were removed "
                             "or replaced", path=p, field="commits")


def record_head(ledger: Ledger, path: str | Path, message: str) -> str | None:
    """Write the head file beside the ledger and, inside a git work tree, commit the ledger and its
    head file (those two paths only). The new git commit, or None (not in git, or git refused)."""
    p = Path(path)
    hp = head_path(p)
    last = ledger.commits[-1]
    hp.write_text(json.dumps({"entries": len(ledger.commits), "head": last.sha256, "at": last.at}, indent=2) + "\n",
                  encoding="utf-8")
    d = p.resolve().parent
    inside = _git(d, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.stdout.strip() != "true":
        return None
    add = _git(d, "add", "--", p.name, hp.name)
    done = add is not None and add.returncode == 0 and _git(d, "commit", "-q", "-m", message, "--", p.name, hp.name)
    if not done or done.returncode != 0:
        why = (done.stderr if done else add.stderr if add else "git not found").strip().splitlines()
        raise InputError(f"the ledger was committed and its head file written, but git refused to record them "
                         f"({why[-1] if why else 'no reason given'}); commit {p.name} and {hp.name} in git by hand",
                         path=p)
    return git_head(p)


def verify(ledger: Ledger, path: str | Path | None = None) -> None:
    """Raise ``InputError`` if any committed prediction was edited or removed, or a commit entry was
    altered, since it was committed; with the ledger's ``path``, also if trailing commit entries were
    removed (``check_head``)."""
    parent = None
    for i, c in enumerate(ledger.commits):
        _zoned(c.at, path, f"commits[{i}].at")
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
    if path is not None:
        check_head(ledger, path)


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
    _zoned(at, path, "at")
    if git is None and path is not None:
        git = git_head(path)
    parent = ledger.commits[-1].sha256 if ledger.commits else None
    entry = Commit(sha256=_entry_hash(new, at, git, parent), at=at, git=git, parent=parent,
                   predictions={p.id: prediction_hash(p) for p in new})
    return ledger.model_copy(update={"commits": (*ledger.commits, entry)}), entry
