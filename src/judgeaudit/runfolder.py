"""A command's output folder holds one run's complete output, and only its own command's.

* ``claim(out, kind, writes)`` — before any input is read or any call is made: a folder is taken when it
  is new (or holds none of ``writes``), or holds an earlier run of the same analysis ``kind`` (it says
  which: ``"new"`` or ``"resume"``). A folder holding another analysis's run (its manifest, or a
  ``result.json`` of another kind, see ``runinfo.result_kind``) or files of ``writes`` that no judgeaudit
  run wrote is refused (``InputError``), so no command writes over another command's run or a file it did
  not write.
* ``output_set(out, kind)`` — the outputs are written as a set: every file goes into a staging folder
  inside ``out`` (``.judgeaudit-staging``); when all are written, the staging folder's manifest
  (``judgeaudit-run.json``: the kind, the run id, each file's SHA-256) is written last, which is the
  commit point, and the files are then renamed into place, the manifest last. A kill before the commit
  point leaves the earlier run untouched (the staging folder is discarded by the next command on that
  folder); a kill after it is rolled forward by the next command on that folder (``recover``), so the
  folder ends as the new run's complete output. Nested ``output_set`` blocks on one folder share the
  outermost one's staging folder (a command's whole output is one set).

Why a ``ContextVar`` (``_ACTIVE``, the open sets by folder): it is no configuration but the state of the
``output_set`` blocks open around the code running now, which a nested block (a report written inside a run's
set) must find to share the outer staging folder. It follows the blocks' dynamic nesting, per thread and per
task, as a ``with`` block does.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from judgeaudit.errors import InputError
from judgeaudit.runinfo import RunStamp, file_sha256, result_kind, utc_now

MANIFEST = "judgeaudit-run.json"
STAGING = ".judgeaudit-staging"

_ACTIVE: ContextVar[dict[Path, Path] | None] = ContextVar("judgeaudit_output_sets", default=None)


def read_manifest(folder: Path) -> dict | None:
    """The manifest of the run in ``folder`` (None: no manifest, or one that cannot be read)."""
    try:
        d = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and isinstance(d.get("files"), dict) else None


def _legacy_kind(folder: Path) -> str | None:
    """The analysis of a ``result.json`` written before manifests existed (None: absent or unknown)."""
    try:
        d = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return result_kind(d) if isinstance(d, dict) else None


def claim(out: str | Path, kind: str, writes: Iterable[str], *, field: str = "--out") -> str:
    """``"new"`` or ``"resume"`` when ``kind`` may write ``writes`` into ``out``; ``InputError`` otherwise.

    An interrupted commit found there is first finished or discarded (``recover``)."""
    p = Path(out)
    if not p.is_dir():
        return "new"
    recover(p)
    man = read_manifest(p)
    if man is not None:
        if man.get("kind") != kind:
            raise InputError(f"holds a {man.get('kind')} run ({MANIFEST}); {kind} writes only into a new folder "
                             "or its own earlier run — choose another folder", path=p, field=field)
        return "resume"
    writes = tuple(writes)
    legacy = _legacy_kind(p)
    if legacy == kind:
        return "resume"
    if (p / "result.json").exists() and "result.json" not in writes:   # another run's folder
        what = f"a {legacy} run" if legacy else "a run"
        raise InputError(f"holds {what} (result.json); {kind} writes only into a new folder or its own earlier "
                         "run — choose another folder", path=p, field=field)
    present = [n for n in writes if (p / n).exists()]
    if not present:
        return "new"
    what = f"a {legacy} run (result.json)" if legacy else f"{', '.join(present)}, not written by a {kind} run"
    raise InputError(f"holds {what}; {kind} writes only into a new folder or its own earlier run — choose "
                     "another folder", path=p, field=field)


def mark_folder(out: str | Path, kind: str, writes: Iterable[str]) -> None:
    """Record the files of ``writes`` that ``out`` holds as ``kind``'s own output in its manifest (made when
    absent: a command that writes no set still marks its folder, so that it may replace its own output and no
    other command writes over it). A manifest of another kind is left alone."""
    p = Path(out)
    present = [n for n in writes if (p / n).is_file()]
    if not present or (p / STAGING).exists():
        return
    man = read_manifest(p)
    if man is not None and man.get("kind") != kind:
        return
    man = man or {"kind": kind, "created_at": utc_now(), "run_id": None, "files": {}}
    man["files"] = {**man["files"], **{n: file_sha256(p / n) for n in present}}
    _write_atomic(p / MANIFEST, json.dumps(man, indent=2))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _roll_forward(out: Path, stage: Path, man: dict) -> None:
    """Move the staged files into place (those already moved are skipped), the manifest last."""
    for name in man["files"]:
        if (stage / name).exists():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / name, out / name)
    os.replace(stage / MANIFEST, out / MANIFEST)
    _fsync_dir(out)
    shutil.rmtree(stage, ignore_errors=True)


def recover(out: str | Path) -> str | None:
    """Finish a commit a kill interrupted in ``out`` (``"rolled forward"``), or discard a staging folder
    that never reached its commit point (``"discarded"``); None when there was none."""
    p = Path(out)
    stage = p / STAGING
    if not stage.is_dir():
        return None
    man = read_manifest(stage)
    if man is None:
        shutil.rmtree(stage, ignore_errors=True)
        return "discarded"
    _roll_forward(p, stage, man)
    return "rolled forward"


def _commit(out: Path, stage: Path, kind: str) -> None:
    files = sorted(str(f.relative_to(stage)) for f in stage.rglob("*") if f.is_file())
    old = read_manifest(out) or {}
    # files of the earlier manifest this set does not rewrite stay listed (a report written after its result)
    kept = {n: h for n, h in old.get("files", {}).items() if n not in files and (out / n).is_file()}
    man = {"kind": kind, "created_at": utc_now(), "files": {**kept, **{n: file_sha256(stage / n) for n in files}}}
    try:
        man["run_id"] = RunStamp.read(stage / "result.json").run_id
    except InputError:   # no result (a report written after its result) or none this judgeaudit reads
        man["run_id"] = old.get("run_id")
    _fsync_dir(stage)
    _write_atomic(stage / MANIFEST, json.dumps(man, indent=2))   # the commit point
    _roll_forward(out, stage, man)


@contextmanager
def output_set(out: str | Path, kind: str) -> Iterator[Path]:
    """A folder to write one run's outputs into (see the module text); on a clean exit they replace the
    earlier run in ``out`` as one set; on an exception nothing in ``out`` changes. Inside an enclosing
    ``output_set`` on the same folder, the enclosing staging folder (committed when that one ends)."""
    p = Path(out)
    active = _ACTIVE.get() or {}
    key = p.resolve()
    if key in active:
        yield active[key]
        return
    recover(p)
    stage = p / STAGING   # made by the first write (the writers make their folder): nothing written, nothing made
    token = _ACTIVE.set({**active, key: stage})
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        _ACTIVE.reset(token)
    if stage.is_dir():
        _commit(p, stage, kind)


def result_files(folder: str | Path) -> list[Path]:
    """Every ``result.json`` at or under ``folder``, sorted, leaving out staging folders: a set a kill
    interrupted before its commit point is not a run (``recover`` discards it), so no reader counts it."""
    return sorted(f for f in Path(folder).rglob("result.json") if STAGING not in f.relative_to(folder).parts)


def is_complete(out: str | Path) -> bool:
    """Whether ``out`` holds one run's complete output: a manifest, no staging folder, and every file the
    manifest lists with its recorded SHA-256."""
    p = Path(out)
    man = read_manifest(p)
    if man is None or (p / STAGING).exists():
        return False
    return all((p / n).is_file() and file_sha256(p / n) == h for n, h in man["files"].items())
