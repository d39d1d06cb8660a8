"""The call store: SQLite in WAL mode, the source of truth for every judge call.

One row per call key (hash of judge spec, rendered request, sampling params, epoch; see
``judges.base.call_key``). A completed call (``status='ok'``, including a parse failure) is
never bought again; a failed call (``status='error'``) keeps its error and attempt count and is
retried on the next run. Each row is committed as it completes, so a crash or Ctrl-C loses
nothing already answered. Secrets are never written: rows hold verdicts, not request kwargs.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from judgeaudit.errors import InputError
from judgeaudit.records import Verdict, verdicts_frame
from judgeaudit.runtime.sqlitefile import check_database, connect_readonly

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    call_key   TEXT PRIMARY KEY,
    judge_id   TEXT NOT NULL,
    request_id TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    attempts   INTEGER NOT NULL DEFAULT 1,
    cost_usd   REAL,
    verdict    TEXT NOT NULL,
    updated    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_judge ON calls (judge_id);
CREATE TABLE IF NOT EXISTS batch_calls (
    custom_id  TEXT PRIMARY KEY,
    call_key   TEXT NOT NULL,
    provider   TEXT NOT NULL,
    judge      TEXT NOT NULL,
    request    TEXT NOT NULL,
    logprobs   INTEGER NOT NULL,
    created    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    call_key   TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires    REAL NOT NULL
);
"""
# ``batch_calls``: the calls written to a provider's batch file (``judgeaudit.interop.batch``), by the id the
# provider echoes back, with what reading its answer needs (the judge's spec, the request).
# ``leases`` came after ``calls``: CREATE … IF NOT EXISTS adds it to an older store when it is opened for
# writing (a read-only open leaves the file as it is and never needs it).


class CallStore:
    """A resumable store of judge calls.

    Opening checks the file: a damaged database (``PRAGMA quick_check``) or an SQLite file that is
    not a call store (another database, such as an annotation study) raises ``InputError`` and is
    left untouched. A row that cannot be read back (not JSON, or written by another version) is
    skipped, listed in ``bad_rows`` and named once on stderr; a new answer to its call replaces it.

    Args:
        path: SQLite file (created with its folder); ``":memory:"`` for a throwaway store.
        readonly: open an existing store for reading only (``mode=ro``): nothing is created or changed.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = str(path)
        self.readonly = readonly
        self.bad_rows: list[tuple[str, str]] = []   # (call_key, why), in the order met
        self._bad_keys: set[str] = set()
        if readonly and not Path(self.path).is_file():
            raise InputError("call store not found", path=self.path)
        if self.path != ":memory:" and not readonly:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = None
        try:
            conn = connect_readonly(self.path) if readonly else \
                sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            check_database(conn, self.path, table="calls", what="a judgeaudit call store", allow_empty=not readonly)
            if not readonly:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as e:
            if conn is not None:
                conn.close()
            raise InputError(f"not a judgeaudit call store ({e})", path=self.path) from None
        except InputError:
            if conn is not None:
                conn.close()
            raise
        self._conn = conn
        self._lock = threading.Lock()

    def _decode(self, key: str, blob: str) -> Verdict | None:
        """A stored verdict, or None (recorded in ``bad_rows``, warned once) when it cannot be read."""
        try:
            return Verdict.model_validate_json(blob)
        except ValidationError as e:  # not JSON, or not this version's verdict
            if key not in self._bad_keys:
                first = e.errors()[0]
                field = ".".join(str(x) for x in first.get("loc", ()))
                why = "not valid JSON" if first["type"] == "json_invalid" else \
                    f"not a verdict of this version: field '{field}': {first['msg']}"
                self._bad_keys.add(key)
                self.bad_rows.append((key, why))
                print(f"warning: {self.path}: skipped 1 unreadable row (call_key {key}: {why}); "
                      "a new answer to this call replaces it", file=sys.stderr)
            return None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CallStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Iterable[str]) -> dict[str, tuple[str, Verdict, int]]:
        """``key -> (status, verdict, attempts)`` for the keys present."""
        keys = list(keys)
        out: dict[str, tuple[str, Verdict, int]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT call_key, status, verdict, attempts FROM calls WHERE call_key IN ({','.join('?' * len(chunk))})"
                for key, status, blob, attempts in self._conn.execute(q, chunk):
                    if (v := self._decode(key, blob)) is not None:
                        out[key] = (status, v, attempts)
        return out

    def completed(self, keys: Iterable[str]) -> dict[str, Verdict]:
        """The completed (status ok) verdicts among ``keys``."""
        return {k: v for k, (s, v, _) in self.get_many(keys).items() if s == "ok"}

    def claim(self, key: str, owner: str, seconds: float) -> str:
        """Take the lease on call ``key`` for ``owner`` before it is sent: ``"mine"`` (taken, or already
        ``owner``'s), ``"done"`` (the call is stored as completed: nothing to send) or ``"busy"`` (another
        live run holds it; its lease expires ``seconds`` after that run last renewed it). A lease whose holder's
        process is gone from this host (``runtime.owner.holder_gone``) is taken over at once."""
        from judgeaudit.runtime.owner import holder_gone

        now = time.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute("SELECT status FROM calls WHERE call_key = ?", (key,)).fetchone()
                if row is not None and row[0] == "ok" and key not in self._bad_keys:
                    return "done"
                held = self._conn.execute("SELECT owner, expires FROM leases WHERE call_key = ?", (key,)).fetchone()
                if held is not None and held[0] != owner and held[1] > now and not holder_gone(held[0]):
                    return "busy"
                self._conn.execute("INSERT OR REPLACE INTO leases (call_key, owner, expires) VALUES (?, ?, ?)",
                                   (key, owner, now + seconds))
                return "mine"
            finally:
                self._conn.commit()

    def renew(self, owner: str, seconds: float) -> None:
        """Extend every lease ``owner`` holds by ``seconds`` from now."""
        with self._lock:
            self._conn.execute("UPDATE leases SET expires = ? WHERE owner = ?", (time.time() + seconds, owner))
            self._conn.commit()

    def release(self, owner: str) -> None:
        """Drop every lease ``owner`` still holds (calls it did not finish are free for another run)."""
        with self._lock:
            self._conn.execute("DELETE FROM leases WHERE owner = ?", (owner,))
            self._conn.commit()

    def put(self, verdict: Verdict) -> None:
        """Insert or update one call and commit at once (its lease, if any, is dropped in the same
        transaction). An ok row is never overwritten by an error."""
        status = "ok" if verdict.error is None else "error"
        with self._lock:
            self._conn.execute("DELETE FROM leases WHERE call_key = ?", (verdict.call_key,))
            self._conn.execute(
                """INSERT INTO calls (call_key, judge_id, request_id, epoch, status, attempts, cost_usd, verdict, updated)
                   VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)
                   ON CONFLICT(call_key) DO UPDATE SET
                     status=excluded.status, verdict=excluded.verdict, cost_usd=excluded.cost_usd,
                     updated=excluded.updated, attempts=calls.attempts + 1
                   WHERE calls.status != 'ok' OR ?""",
                (verdict.call_key, verdict.judge_id, verdict.request_id, verdict.epoch, status,
                 verdict.cost_usd, verdict.model_dump_json(), verdict.timestamp,
                 verdict.call_key in self._bad_keys),
            )
            self._conn.commit()

    def put_many(self, verdicts: Iterable[Verdict]) -> int:
        """``put`` for many calls in one transaction (a batch's answers); returns how many rows were written
        or updated. An ok row is never overwritten."""
        rows = [(v.call_key, v.judge_id, v.request_id, v.epoch, "ok" if v.error is None else "error", v.cost_usd,
                 v.model_dump_json(), v.timestamp, v.call_key in self._bad_keys) for v in verdicts]
        with self._lock:
            before = self._conn.total_changes
            self._conn.executemany(
                """INSERT INTO calls (call_key, judge_id, request_id, epoch, status, attempts, cost_usd, verdict, updated)
                   VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)
                   ON CONFLICT(call_key) DO UPDATE SET
                     status=excluded.status, verdict=excluded.verdict, cost_usd=excluded.cost_usd,
                     updated=excluded.updated, attempts=calls.attempts + 1
                   WHERE calls.status != 'ok' OR ?""", rows)
            self._conn.commit()
            return self._conn.total_changes - before

    def defer(self, rows: Iterable[tuple[str, str, str, str, str, bool]]) -> None:
        """Record calls written to a provider's batch file: ``(custom_id, call_key, provider, judge spec JSON,
        request JSON, asks_logprobs)`` each (a call written again replaces its row)."""
        import datetime as dt

        now = dt.datetime.now(dt.UTC).isoformat()
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO batch_calls (custom_id, call_key, provider, judge, request, logprobs, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", [(*r[:5], int(r[5]), now) for r in rows])
            self._conn.commit()

    def deferred(self, custom_ids: Iterable[str]) -> dict[str, tuple[str, str, str, str, bool]]:
        """``custom_id -> (call_key, provider, judge spec JSON, request JSON, asks_logprobs)`` for the ids
        written to a batch file from this store."""
        ids = list(custom_ids)
        out: dict[str, tuple[str, str, str, str, bool]] = {}
        with self._lock:
            if not self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'batch_calls'").fetchone():
                return out
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                q = ("SELECT custom_id, call_key, provider, judge, request, logprobs FROM batch_calls "
                     f"WHERE custom_id IN ({','.join('?' * len(chunk))})")
                for cid, key, provider, judge, request, lp in self._conn.execute(q, chunk):
                    out[cid] = (key, provider, judge, request, bool(lp))
        return out

    def frame(self, *, judge_id: str | None = None, status: str | None = None) -> pd.DataFrame:
        """The stored verdicts as a verdict table, with ``status`` and ``attempts`` columns."""
        q = "SELECT status, attempts, verdict, call_key FROM calls"
        cond, args = [], []
        if judge_id:
            cond.append("judge_id = ?")
            args.append(judge_id)
        if status:
            cond.append("status = ?")
            args.append(status)
        if cond:
            q += " WHERE " + " AND ".join(cond)
        with self._lock:
            rows = self._conn.execute(q + " ORDER BY rowid", args).fetchall()
        decoded = [(s, a, self._decode(k, b)) for s, a, b, k in rows]
        rows = [(s, a, v) for s, a, v in decoded if v is not None]
        df = verdicts_frame([v for _, _, v in rows])
        df["status"] = [s for s, _, _ in rows]
        df["attempts"] = [a for _, a, _ in rows]
        return df

    def stats(self) -> pd.DataFrame:
        """Per judge and endpoint (the server its calls went to; missing when it named none): calls
        ok, errors, parse failures, tokens, cost, mean latency."""
        df = self.frame()
        if df.empty:
            return pd.DataFrame(columns=["judge_id", "endpoint", "ok", "errors", "parse_failures", "input_tokens",
                                         "output_tokens", "cost_usd", "mean_latency_s"])
        ok = df["status"] == "ok"
        endpoint = df["meta"].map(lambda m: (m or {}).get("endpoint"))
        g = df.assign(ok=ok, err=~ok, pf=ok & ~df["parse_ok"].astype(bool), endpoint=endpoint).groupby(
            ["judge_id", "endpoint"], dropna=False)
        return pd.DataFrame({
            "ok": g["ok"].sum(),
            "errors": g["err"].sum(),
            "parse_failures": g["pf"].sum(),
            "input_tokens": g["input_tokens"].sum(min_count=1),
            "output_tokens": g["output_tokens"].sum(min_count=1),
            "cost_usd": g["cost_usd"].sum(min_count=1),
            "mean_latency_s": g["latency_s"].mean(),
        }).reset_index()

    def export(self, path: str | Path) -> Path:
        """Write every stored call to ``.parquet`` or ``.jsonl`` (by suffix)."""
        from judgeaudit.io import write_jsonl, write_parquet

        p = Path(path)
        df = self.frame()
        if p.suffix == ".parquet":
            write_parquet(p, df)
        elif p.suffix in (".jsonl", ".ndjson"):
            write_jsonl(p, df)
        else:
            raise InputError("export format must be .parquet or .jsonl", path=p)
        return p

    EXPORT_COLUMNS = ("call_key", "status", "attempts")
    """Columns every export has and no run's verdict table does: how ``is_export`` knows one."""

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is an earlier ``store export`` (a table with ``CallStore.EXPORT_COLUMNS``), which an
    export may replace; any other file (a run's ``verdicts.parquet``, a user's file) it must not."""
    import json

    p = Path(path)
    try:
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq

            names = set(pq.read_schema(p).names)
        else:
            with p.open(encoding="utf-8") as fh:
                first = json.loads(fh.readline() or "{}")
            names = set(first) if isinstance(first, dict) else set()
    except Exception:  # noqa: BLE001 - unreadable or another format: not an export
        return False
    return set(CallStore.EXPORT_COLUMNS) <= names
