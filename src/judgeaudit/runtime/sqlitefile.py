"""Opening an existing SQLite file safely: read-only without side files, and checked before use.

Used by the call store and the annotation study database, so that reading a file never changes it
and a damaged file or another program's database is refused at open with one clear error, not at the
first read with a traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from judgeaudit.errors import InputError


def connect_readonly(path: str | Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``). When no writer's log (``-wal``) is pending the file is also
    opened ``immutable``, so SQLite creates no ``-wal``/``-shm`` files beside it."""
    p = Path(path).resolve()
    live = Path(str(p) + "-wal").exists()
    return sqlite3.connect(p.as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1"), uri=True,
                           check_same_thread=False, timeout=30)


def check_database(conn: sqlite3.Connection, path: str | Path, *, table: str, what: str,
                   allow_empty: bool = False) -> None:
    """``InputError`` when the file is damaged (``PRAGMA quick_check``), is not SQLite, or has no
    ``table`` (an empty database passes when ``allow_empty``: it is about to be created)."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as e:
        if "malformed" not in str(e):
            raise InputError(f"not {what} ({e})", path=path) from None
        problems = [str(e)]
    if problems != ["ok"]:
        raise InputError(f"the file is damaged (SQLite quick_check: {problems[0]}); restore it from a copy",
                         path=path)
    if table not in tables and (tables or not allow_empty):
        found = ", ".join(sorted(tables)[:4]) or "no tables"
        raise InputError(f"not {what} (it holds {found}, no '{table}' table)", path=path)
