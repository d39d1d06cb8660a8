"""The annotation study database: SQLite in WAL mode, one committed transaction per answer.

Tables: ``study`` (settings, the admin token's sha256), ``items`` (pair texts and the recorded
A/B presentation), ``annotators`` (id, fixed ordinal, token sha256 — never the token), ``stream``
(each annotator's order), ``answers`` (the current answer per annotator and item) and
``answer_log`` (every save, append-only). Tokens are printed once by ``init_study`` and only
their hashes are stored.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import secrets
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.probes.packets import answer_to_direction, make_packets
from judgeaudit.records import Probe
from judgeaudit.runtime.sqlitefile import check_database, connect_readonly

SCHEMA = """
CREATE TABLE IF NOT EXISTS study (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    item_idx INTEGER PRIMARY KEY, probe_id TEXT UNIQUE NOT NULL, evidence TEXT NOT NULL,
    text_a TEXT NOT NULL, text_b TEXT NOT NULL, edited_side TEXT NOT NULL CHECK (edited_side IN ('A','B')));
CREATE TABLE IF NOT EXISTS annotators (
    annotator_id TEXT PRIMARY KEY, ordinal INTEGER UNIQUE NOT NULL, token_sha256 TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS stream (
    annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id), position INTEGER NOT NULL,
    item_idx INTEGER NOT NULL REFERENCES items(item_idx),
    PRIMARY KEY (annotator_id, position), UNIQUE (annotator_id, item_idx));
CREATE TABLE IF NOT EXISTS answers (
    annotator_id TEXT NOT NULL, item_idx INTEGER NOT NULL, answer TEXT NOT NULL, direction TEXT NOT NULL,
    basis TEXT NOT NULL, note TEXT NOT NULL, same_facts INTEGER NOT NULL, saved_at TEXT NOT NULL,
    revision INTEGER NOT NULL, PRIMARY KEY (annotator_id, item_idx));
CREATE TABLE IF NOT EXISTS answer_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, annotator_id TEXT NOT NULL, item_idx INTEGER NOT NULL,
    answer TEXT NOT NULL, basis TEXT NOT NULL, note TEXT NOT NULL, same_facts INTEGER NOT NULL,
    saved_at TEXT NOT NULL);
"""


def token_hash(token: str) -> str:
    """sha256 hex digest of a link token (what the database stores)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _connect(path: str | Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


@dataclass(frozen=True)
class StudyTokens:
    """The secrets ``init_study`` creates. Shown once; only their hashes are stored."""

    admin_token: str
    annotator_tokens: dict[str, str]


def init_study(db_path: str | Path, probes: Sequence[Probe], n_annotators: int, seed: int = 0) -> StudyTokens:
    """Create a study database: blinded packets (``probes.packets``) and one secret token per annotator.

    Annotators are ``a1..aN``; their ordinal is the fixed order labels are merged in.
    Raises ``InputError`` if the database already exists or the inputs cannot form packets.
    """
    p = Path(db_path)
    if p.exists():
        raise InputError("study database already exists (choose a new path)", path=p)
    if n_annotators < 1:
        raise InputError("need at least one annotator", field="annotators")
    ann_ids = [f"a{i}" for i in range(1, n_annotators + 1)]
    packets = make_packets(probes, ann_ids, seed=seed)
    p.parent.mkdir(parents=True, exist_ok=True)
    tokens = StudyTokens(admin_token=secrets.token_urlsafe(24),
                         annotator_tokens={a: secrets.token_urlsafe(24) for a in ann_ids})
    conn = _connect(p)
    try:
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        first = {it.probe_id: it for it in packets[0].items}
        idx = {}
        for i, pr in enumerate(probes):
            it = first[pr.probe_id]
            idx[pr.probe_id] = i
            conn.execute("INSERT INTO items VALUES (?,?,?,?,?,?)",
                         (i, pr.probe_id, it.evidence, it.text_a, it.text_b, it.edited_side))
        for ordinal, pk in enumerate(packets, 1):
            conn.execute("INSERT INTO annotators VALUES (?,?,?)",
                         (pk.annotator, ordinal, token_hash(tokens.annotator_tokens[pk.annotator])))
            conn.executemany("INSERT INTO stream VALUES (?,?,?)",
                             [(pk.annotator, it.position, idx[it.probe_id]) for it in pk.items])
        meta = {"admin_token_sha256": token_hash(tokens.admin_token), "seed": str(seed),
                "created_at": _now(), "n_items": str(len(probes)), "n_annotators": str(n_annotators)}
        conn.executemany("INSERT INTO study VALUES (?,?)", list(meta.items()))
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        p.unlink(missing_ok=True)
        raise
    conn.close()
    return tokens


class StudyDB:
    """Thread-safe access to a study database (one SQLite connection per thread)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.exists():
            raise InputError("study database not found (run `judgeaudit probes annotate init`)", path=self.path)
        self._local = threading.local()
        probe = None
        try:  # checked read-only first: a file that is not a study is never changed (not even to WAL mode)
            probe = connect_readonly(self.path)
            check_database(probe, self.path, table="study", what="an annotation study database")
        except sqlite3.DatabaseError as e:
            raise InputError(f"not an annotation study database ({e})", path=self.path) from None
        finally:
            if probe is not None:
                probe.close()
        try:
            row = self.conn.execute("SELECT value FROM study WHERE key='admin_token_sha256'").fetchone()
        except sqlite3.DatabaseError as e:
            raise InputError(f"not an annotation study database ({e})", path=self.path) from None
        if row is None:
            raise InputError("not an annotation study database (no admin token)", path=self.path)
        self.admin_hash: str = row[0]
        self.total = int(self.conn.execute("SELECT COUNT(*) FROM items").fetchone()[0])

    @property
    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = self._local.conn = _connect(self.path)
        return c

    # --- identity -------------------------------------------------------------------------------
    def annotator_for(self, token: str) -> str | None:
        """The annotator id a token belongs to, or None."""
        row = self.conn.execute("SELECT annotator_id FROM annotators WHERE token_sha256=?",
                                (token_hash(token),)).fetchone()
        return row[0] if row else None

    def is_admin(self, token: str) -> bool:
        return secrets.compare_digest(token_hash(token), self.admin_hash)

    # --- annotator view (never exposes probe id, slot, arm or edited side) ----------------------
    def progress(self, annotator: str, after: int = 0) -> dict[str, Any]:
        """Counts and ``next_position``: the first unanswered position after ``after``, wrapping round
        to the first unanswered overall (None when every pair is answered)."""
        done = self.conn.execute("SELECT COUNT(*) FROM answers WHERE annotator_id=?", (annotator,)).fetchone()[0]
        q = ("SELECT MIN(s.position) FROM stream s LEFT JOIN answers a ON a.annotator_id=s.annotator_id "
             "AND a.item_idx=s.item_idx WHERE s.annotator_id=? AND a.item_idx IS NULL AND s.position>?")
        nxt = self.conn.execute(q, (annotator, after)).fetchone()[0]
        if nxt is None and after:
            nxt = self.conn.execute(q, (annotator, 0)).fetchone()[0]
        return {"total": self.total, "done": int(done), "next_position": nxt}

    def item_at(self, annotator: str, position: int) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT i.item_idx, i.evidence, i.text_a, i.text_b, a.answer, a.basis, a.note, a.same_facts "
            "FROM stream s JOIN items i ON i.item_idx=s.item_idx LEFT JOIN answers a "
            "ON a.annotator_id=s.annotator_id AND a.item_idx=s.item_idx WHERE s.annotator_id=? AND s.position=?",
            (annotator, position)).fetchone()
        if row is None:
            return None
        answer = None
        if row["answer"] is not None:
            answer = {"answer": row["answer"], "basis": row["basis"], "note": row["note"],
                      "same_facts": bool(row["same_facts"])}
        return {"item_idx": row["item_idx"], "evidence": row["evidence"], "a": row["text_a"], "b": row["text_b"],
                "answer": answer}

    def save_answer(self, annotator: str, item_idx: int, answer: str, basis: str, note: str,
                    same_facts: bool) -> None:
        """Upsert the annotator's answer and append it to the log, in one committed transaction."""
        side = self.conn.execute("SELECT edited_side FROM items WHERE item_idx=?", (item_idx,)).fetchone()[0]
        direction = answer_to_direction(answer, side)
        now = _now()
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute(
                "INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,1) ON CONFLICT(annotator_id, item_idx) DO UPDATE SET "
                "answer=excluded.answer, direction=excluded.direction, basis=excluded.basis, note=excluded.note, "
                "same_facts=excluded.same_facts, saved_at=excluded.saved_at, revision=answers.revision+1",
                (annotator, item_idx, answer, direction, basis, note, int(same_facts), now))
            c.execute("INSERT INTO answer_log (annotator_id,item_idx,answer,basis,note,same_facts,saved_at) "
                      "VALUES (?,?,?,?,?,?,?)", (annotator, item_idx, answer, basis, note, int(same_facts), now))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    # --- admin ----------------------------------------------------------------------------------
    def admin_progress(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT n.annotator_id, n.ordinal, COUNT(a.item_idx) AS done, MAX(a.saved_at) AS last_saved_at "
            "FROM annotators n LEFT JOIN answers a ON a.annotator_id=n.annotator_id "
            "GROUP BY n.annotator_id ORDER BY n.ordinal").fetchall()
        return [{**dict(r), "total": self.total} for r in rows]

    def export_rows(self) -> list[dict[str, Any]]:
        """Every current answer with the unblinding the merge needs (admin only)."""
        rows = self.conn.execute(
            "SELECT i.probe_id, n.annotator_id, n.ordinal, s.position, i.edited_side, a.answer, a.direction, "
            "a.basis, a.note, a.same_facts, a.saved_at, a.revision FROM answers a "
            "JOIN items i ON i.item_idx=a.item_idx JOIN annotators n ON n.annotator_id=a.annotator_id "
            "JOIN stream s ON s.annotator_id=a.annotator_id AND s.item_idx=a.item_idx "
            "ORDER BY i.item_idx, n.ordinal").fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["same_facts"] = bool(d["same_facts"])
            out.append(d)
        return out

    def study_meta(self) -> dict[str, str]:
        return {k: v for k, v in self.conn.execute("SELECT key, value FROM study") if k != "admin_token_sha256"}


def export_study(db_path: str | Path) -> dict[str, Any]:
    """The study's answers and settings, for ``judgeaudit probes annotate export``."""
    db = StudyDB(db_path)
    return {"study": db.study_meta(), "progress": db.admin_progress(), "answers": db.export_rows()}
